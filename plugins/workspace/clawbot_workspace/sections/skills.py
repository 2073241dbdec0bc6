"""Skills: how to choose one, then the ``<available_skills>`` catalogue, capped in size.

The kernel hands the skills over highest precedence first (workspace, user, extra, bundled,
plugin; then by name). The catalogue lists them in that order, each whole with its
description cut to ``skills.prompt_description_max_chars``, while the whole section stays
within ``skills.prompt_max_chars``; the first skill that does not fit ends the list, and a
closing line says how many were left out and where to see them. So a thousand planted
skills cannot make every turn overflow, and the model knows the list is not complete.
"""

from __future__ import annotations

from clawbot.types import PromptContext, SkillEntry

from clawbot_workspace.sections._text import block, display_path, xml_text


def _short(description: str, limit: int) -> str:
    text = " ".join(description.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def skill_xml(skill: SkillEntry, ctx: PromptContext, description_max_chars: int | None = None) -> str:
    description = skill.description if description_max_chars is None else _short(skill.description, description_max_chars)
    return (
        "<skill>"
        f"<name>{xml_text(skill.name)}</name>"
        f"<description>{xml_text(description)}</description>"
        f"<location>{xml_text(display_path(skill.location, ctx.workspace))}</location>"
        "</skill>"
    )


def left_out_line(count: int, max_chars: int) -> str:
    return (
        f"({count} more skill{'s' if count != 1 else ''} left out: this list is capped at {max_chars:,} characters "
        "(skills.prompt_max_chars). The user can see every skill with `clawbot skills list`.)"
    )


def skills(ctx: PromptContext) -> str | None:
    if not ctx.skills or not ctx.has_tool("read"):  # a skill is used by reading its SKILL.md
        return None
    max_chars, description_max_chars = ctx.clawbot.skills_prompt_max_chars, ctx.clawbot.skills_prompt_description_max_chars
    head = (
        "## Skills",
        "Skills are instruction files for particular tasks. Before replying, check the descriptions in <available_skills>:",
        "- exactly one clearly fits: read its SKILL.md with `read` at the exact <location>, then follow it;",
        "- several fit: take the most specific one;",
        "- none clearly fits: read none.",
        "Read at most one skill up front, and only once chosen. Never guess or build skill paths. A relative "
        "path inside a skill is relative to that skill's folder (where its SKILL.md is).",
        "<available_skills>",
    )
    # Room for the fixed lines, the closing tag and the longest possible closing line.
    used = len(block(*head, "</available_skills>", left_out_line(len(ctx.skills), max_chars)))
    listed: list[str] = []
    for skill in ctx.skills:
        entry = skill_xml(skill, ctx, description_max_chars)
        if used + len(entry) + 1 > max_chars:
            break
        listed.append(entry)
        used += len(entry) + 1
    left_out = len(ctx.skills) - len(listed)
    tail = ("</available_skills>", left_out_line(left_out, max_chars)) if left_out else ("</available_skills>",)
    return block(*head, *listed, *tail)
