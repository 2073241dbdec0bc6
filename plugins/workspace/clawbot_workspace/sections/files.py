"""The injected workspace files: a short header early on, then the files themselves."""

from __future__ import annotations

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
    if file.content is None:
        return f"## {file.name}\n[MISSING] Expected at: {file.path.as_posix()}"
    content = file.content.lstrip("\n").rstrip()
    return f"## {file.name}\n{content}"


def project_context(ctx: PromptContext) -> str | None:
    if not ctx.bootstrap_files:
        return None
    intro = ["# Project Context", "The following workspace files were loaded by clawbot."]
    if any(f.name == PERSONA_FILE and f.content is not None for f in ctx.bootstrap_files):
        intro.append(
            f"{PERSONA_FILE} defines your persona: embody its character and tone, and avoid stiff, generic replies."
        )
    return "\n\n".join(["\n".join(intro), *(_file_block(f) for f in ctx.bootstrap_files)])
