"""The injected workspace files: a short header early on, then the files themselves."""

from __future__ import annotations

from clawbot.safetext import visible
from clawbot.types import InjectedFile, PromptContext

from clawbot_workspace.sections._text import block

PERSONA_FILE = "SOUL.md"


def workspace_files(ctx: PromptContext) -> str | None:
    if not ctx.bootstrap_files:
        return None
    return block(
        "## Workspace Files (injected)",
        "The user-editable workspace files that clawbot loads are included below under Project Context.",
    )


def _file_block(file: InjectedFile) -> str:
    # names come from the workspace (extra-files patterns): a newline in one must not start a heading
    name = visible(file.name).replace("\n", "\\n")
    if file.content is None:
        path = visible(file.path.as_posix()).replace("\n", "\\n")
        return f"## {name}\n[MISSING] Expected at: {path}"
    content = file.content.lstrip("\n").rstrip()
    return f"## {name}\n{content}"


def project_context(ctx: PromptContext) -> str | None:
    if not ctx.bootstrap_files:
        return None
    intro = ["# Project Context", "The following workspace files were loaded by clawbot."]
    if any(f.name == PERSONA_FILE and f.content is not None for f in ctx.bootstrap_files):
        intro.append(f"{PERSONA_FILE} defines your persona: embody its character and tone, and avoid stiff, generic replies.")
    return "\n\n".join(["\n".join(intro), *(_file_block(f) for f in ctx.bootstrap_files)])
