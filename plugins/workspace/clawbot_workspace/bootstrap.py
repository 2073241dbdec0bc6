"""Loading the standard workspace files an agent's system prompt is built from.

Which files a session gets:

* every session but sub-agents: AGENTS.md, SOUL.md, TOOLS.md, IDENTITY.md, USER.md,
  HEARTBEAT.md, BOOTSTRAP.md (in that order);
* the **main** session also gets MEMORY.md (or ``memory.md``; the upper-case name wins when
  both exist). It holds private long-term memory, so never a group, a cron run or another
  person's direct-message session;
* sub-agents get AGENTS.md and TOOLS.md only.

A missing file is listed with ``content=None`` (the prompt says ``[MISSING] Expected at:
<path>``) except BOOTSTRAP.md, which the first-run ritual deletes on purpose: its absence is
the normal state. Empty files are left out. Files are read with a size guard
(:func:`clawbot.promptkit.read_bounded`): a huge file is never read whole, and the
caps applied afterwards cut it and report its real size. Something that exists but cannot be
read (a directory, a FIFO, no permission) is left out with a warning in the log.

Each file is confined to the workspace the way the ``read`` tool confines its files, checked
on the file actually opened: a file that leads outside (a symlink, a symlinked folder on the
way, a link swapped in while opening) or has a second hard link is not loaded. The prompt
then shows a one-line note saying so and why, never the content, and so does
``clawbot context``.
"""

from __future__ import annotations

import logging

from clawbot import BootstrapContext, BootstrapFile

log = logging.getLogger(__name__)

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
OPTIONAL_FILES = frozenset({"BOOTSTRAP.md"})
"""Files whose absence is normal: not reported as missing."""


def _memory_file(ctx: BootstrapContext) -> str:
    # Either spelling is accepted; the upper-case one wins when both exist.
    for name in ("MEMORY.md", "memory.md"):
        if (ctx.workspace / name).is_file():
            return name
    return "MEMORY.md"


def wanted_files(ctx: BootstrapContext) -> list[str]:
    """Which files this kind of session gets: sub-agents only AGENTS.md and TOOLS.md,
    MEMORY.md only in the main session (never in groups or other people's DMs)."""
    if ctx.session_kind == "subagent":
        return list(SUBAGENT_FILES)
    names = [n for n in STANDARD_FILES if n != "MEMORY.md"]
    if ctx.session_kind == "main":
        names.append(_memory_file(ctx))
    return names


def load_bootstrap_files(ctx: BootstrapContext) -> list[BootstrapFile]:
    """Read the files; a missing one has ``content=None``, an empty one is left out."""
    from clawbot.promptkit import FileRefused, not_loaded, read_bounded

    max_chars = ctx.clawbot.bootstrap_max_chars
    files = []
    for name in wanted_files(ctx):
        path = ctx.workspace / name
        try:
            content = read_bounded(path, max_chars=max_chars, root=ctx.workspace)
        except FileRefused as exc:
            log.warning("workspace file %s is not loaded into the prompt: %s", path, exc)
            files.append(BootstrapFile(name, path, not_loaded(name, exc.reason)))
            continue
        except OSError as exc:
            log.warning("workspace file %s cannot be read and is left out of the prompt: %s", path, exc)
            continue
        if content is None:
            if name not in OPTIONAL_FILES:
                files.append(BootstrapFile(name, path, None))
            continue
        if content.strip():
            files.append(BootstrapFile(name, path, content))
    return files
