"""Collecting the prompt sections of one run: filter by mode, refuse duplicate keys, sort."""

from __future__ import annotations

from clawbot.kernel import Kernel
from clawbot.types import PromptContext, PromptSection


async def collect_sections(kernel: Kernel, ctx: PromptContext) -> list[PromptSection]:
    """Sections for ``ctx.mode`` sorted by (stable first, order, key).

    A key offered twice keeps the first section; the other plugin is recorded as failed
    with both names, never silently renamed or merged.
    """
    owners: dict[str, str] = {}
    sections: list[PromptSection] = []
    for contribution in await kernel.plugins.collect("clawbot_prompt_sections", ctx=ctx):
        section = contribution.value
        if not isinstance(section, PromptSection):
            kernel.plugins.record_failure(contribution.plugin, "clawbot_prompt_sections", TypeError(f"expected a PromptSection, got {section!r}"))
            continue
        if section.key in owners:
            kernel.plugins.record_failure(
                contribution.plugin,
                "clawbot_prompt_sections",
                ValueError(f"prompt section {section.key!r} is already provided by plugin {owners[section.key]!r}"),
            )
            continue
        owners[section.key] = contribution.plugin
        if ctx.mode in section.modes:
            sections.append(section)
    sections.sort(key=lambda s: (not s.stable, s.order, s.key))
    return sections
