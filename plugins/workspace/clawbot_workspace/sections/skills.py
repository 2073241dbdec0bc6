"""Skills: how to choose one, then the ``<available_skills>`` catalogue."""

from __future__ import annotations

from clawbot.types import PromptContext, SkillEntry

from clawbot_workspace.sections._text import block, display_path, xml_text


def skill_xml(skill: SkillEntry, ctx: PromptContext) -> str:
    return (
        "<skill>"
        f"<name>{xml_text(skill.name)}</name>"
        f"<description>{xml_text(skill.description)}</description>"
        f"<location>{xml_text(display_path(skill.location, ctx.workspace))}</location>"
        "</skill>"
    )


def skills(ctx: PromptContext) -> str | None:
    if not ctx.skills:
        return None
    return block(
        "## Skills",
        "Skills are instruction files for particular tasks. Before replying, check the descriptions in "
        "<available_skills>:",
        "- exactly one clearly fits: read its SKILL.md with `read` at the exact <location>, then follow it;",
        "- several fit: take the most specific one;",
        "- none clearly fits: read none.",
        "Read at most one skill up front, and only once chosen. Never guess or build skill paths. A relative "
        "path inside a skill is relative to that skill's folder (where its SKILL.md is).",
        "<available_skills>",
        *(skill_xml(skill, ctx) for skill in ctx.skills),
        "</available_skills>",
    )
