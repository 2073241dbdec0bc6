"""The core system prompt sections, contributed by the workspace plugin.

Each section is a :class:`SectionSpec`: a stable key, an ``order`` (spaced by 10 so other
plugins can slot theirs in between), the prompt modes it appears in, whether it goes
before the provider cache boundary (``stable``), and a builder that returns its text or
``None`` when its condition does not hold. Builders read only the :class:`PromptContext`
(never the clock), so the same context always gives byte-identical text.

A section promises the model only what this run can do: one about a tool appears only when
the tool is in ``ctx.tools``, one about a channel feature only when the channel declares it.
Heartbeat polls are explained only to an agent whose heartbeats run.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
from clawbot.types import PromptContext, PromptSection

from clawbot_workspace.sections import (
    control,
    environment,
    files,
    memory,
    messaging,
    output,
    safety,
    session,
    skills,
    tooling,
)

FULL = frozenset({"full"})
FULL_AND_MINIMAL = frozenset({"full", "minimal"})


@attrs.frozen
class SectionSpec:
    key: str
    order: int
    build: Callable[[PromptContext], str | None] = attrs.field(repr=False)
    modes: frozenset[str] = FULL
    stable: bool = True


def _specs(*entries: tuple) -> tuple[SectionSpec, ...]:
    return tuple(SectionSpec(key, 100 + 10 * i, build, *rest) for i, (key, build, *rest) in enumerate(entries))


SECTIONS: tuple[SectionSpec, ...] = _specs(
    ("tooling", tooling.tooling, FULL_AND_MINIMAL),
    ("tool_call_style", tooling.tool_call_style),
    ("execution_bias", tooling.execution_bias),
    ("safety", safety.safety, FULL_AND_MINIMAL),
    ("cli", control.cli),
    ("skills", skills.skills),
    ("memory_recall", memory.memory_recall),
    ("self_update", control.self_update),
    ("model_aliases", environment.model_aliases),
    ("workspace", environment.workspace, FULL_AND_MINIMAL),
    ("documentation", control.documentation),
    ("sandbox", environment.sandbox),
    ("user_identity", environment.user_identity),
    ("current_time", environment.current_time),
    ("workspace_files", files.workspace_files),
    ("messaging", messaging.messaging, FULL, False),
    ("voice", messaging.voice),
    ("session_context", session.session_context, FULL_AND_MINIMAL),
    ("reactions", messaging.reactions),
    ("output_directives", output.output_directives),
    ("reasoning_format", output.reasoning_format),
    ("project_context", files.project_context, FULL_AND_MINIMAL),
    ("silent_replies", output.silent_replies),
    ("heartbeats", output.heartbeats),
    ("runtime", environment.runtime, FULL_AND_MINIMAL, False),
)


def all_sections(ctx: PromptContext) -> list[PromptSection]:
    """The sections for ``ctx.mode`` whose condition holds, in output order."""
    found = []
    for spec in SECTIONS:
        if ctx.mode not in spec.modes:
            continue
        text = spec.build(ctx)
        if text:
            found.append(PromptSection(spec.key, text, spec.order, spec.modes, spec.stable))
    return found


__all__ = ["SECTIONS", "SectionSpec", "all_sections"]
