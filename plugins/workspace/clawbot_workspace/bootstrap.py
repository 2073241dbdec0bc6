"""Loading the standard workspace files an agent's system prompt is built from."""

from __future__ import annotations

from clawbot import BootstrapContext, BootstrapFile

STANDARD_FILES = (
    "AGENTS.md",
    "SOUL.md",
    "TOOLS.md",
    "IDENTITY.md",
    "USER.md",
    "HEARTBEAT.md",
    "BOOTSTRAP.md",
    "MEMORY.md",
)
SUBAGENT_FILES = ("AGENTS.md", "TOOLS.md")


def _memory_file(ctx: BootstrapContext) -> str:
    # Either spelling is accepted; the upper-case one wins when both exist.
    for name in ("MEMORY.md", "memory.md"):
        if (ctx.workspace / name).is_file():
            return name
    return "MEMORY.md"


def wanted_files(ctx: BootstrapContext) -> list[str]:
    """Which files this kind of session gets: sub-agents only AGENTS.md and TOOLS.md,
    MEMORY.md only in the main direct session (never in groups)."""
    if ctx.session_kind == "subagent":
        return list(SUBAGENT_FILES)
    names = [n for n in STANDARD_FILES if n != "MEMORY.md"]
    if ctx.session_kind == "main":
        names.append(_memory_file(ctx))
    return names


def load_bootstrap_files(ctx: BootstrapContext) -> list[BootstrapFile]:
    """Read the files; a missing one has ``content=None``, an empty one is left out."""
    files = []
    for name in wanted_files(ctx):
        path = ctx.workspace / name
        try:
            content = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            files.append(BootstrapFile(name, path, None))
            continue
        if content.strip():
            files.append(BootstrapFile(name, path, content))
    return files
