"""Skills a turn added, changed or removed in the workspace, for the changed-files notice.

Every later system prompt lists the agent's skills by name and description, and a workspace
skill wins over a bundled or user skill of the same name; a model steered by a web page can
write ``skills/<name>/SKILL.md`` with any tool. So the ``SKILL.md`` of each folder of every
skill source inside the workspace (``<workspace>/skills``, and any ``skills.extra_dirs``
entry that lies inside it) is watched like a bootstrap file: one ``scandir`` per source and
one ``stat`` per folder while nothing changes. A changed one is read confined to the
workspace and reported by the skill's name and the start of its description, escaped; one
that now leads outside the workspace is reported as such and not read.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, TypeGuard

from clawbot.agent.file_states import FileChange, FileState, line_changes
from clawbot.agent.notices import quoted_line
from clawbot.paths import inside
from clawbot.skills.discovery import SKILL_FILE, inside_workspace, source_dirs
from clawbot.skills.frontmatter import parse_skill

log = logging.getLogger(__name__)

DESCRIPTION_CHARS = 200
"""How much of a skill's description the notice shows."""


def shown_path(path: Path, workspace: Path) -> str:
    """``path`` as the notice names it: relative to the workspace when it is inside."""
    root, real = os.path.realpath(workspace), os.path.realpath(path.parent.parent)
    if inside(root, real):
        return os.path.join(os.path.relpath(real, root), path.parent.name, path.name)
    return os.fspath(path)


def skill_files(kernel: Any, agent_id: str, workspace: Path) -> dict[Path, str]:
    """The ``SKILL.md`` of each folder of the agent's skill sources inside ``workspace``: path -> shown name."""
    try:
        sources = source_dirs(kernel, agent_id)
    except Exception:  # a broken configuration or plugin source: reported where skills are loaded
        log.debug("skill sources of %s unavailable", agent_id, exc_info=True)
        return {}
    found: dict[Path, str] = {}
    for source in sources:
        if not inside_workspace(source, workspace):
            continue
        try:
            with os.scandir(source.path) as entries:
                folders = sorted(entry.name for entry in entries if not entry.name.startswith("."))
        except OSError:
            continue
        for folder in folders:
            path = source.path / folder / SKILL_FILE
            found.setdefault(path, shown_path(path, workspace))
    return found


def _short(text: str) -> str:
    return text if len(text) <= DESCRIPTION_CHARS else text[: DESCRIPTION_CHARS - 1].rstrip() + "…"


def _existed(before: FileState | None) -> TypeGuard[FileState]:
    """Whether the skill was there, and readable, before the change."""
    return before is not None and not before.refused


def describe_skill(change: FileChange) -> list[str]:
    """The notice's line for one workspace ``SKILL.md`` that changed."""
    name = quoted_line(change.name)
    before, after = change.before, change.after
    if after is None:
        return [f"{name}: skill removed"]
    if after.refused:
        return [f"{name}: now {after.refused} (not shown)"]
    lines = after.lines if after.lines is not None else after.head
    document = parse_skill("\n".join(lines), Path(change.name).parent.name).document
    counted = ""
    if after.lines is not None and _existed(before) and before.lines is not None:
        added, removed = line_changes(before, after)
        counted = f" (+{len(added)} -{len(removed)} lines)"
    if document is None:
        what = "added" if not _existed(before) else f"changed{counted}"
        return [f"{name}: {what}, not usable as a skill (it stays out of the prompt)"]
    skill, description = quoted_line(document.name), quoted_line(_short(document.description))
    if not _existed(before):
        return [f"{name}: new skill {skill}: {description}"]
    return [f"{name}: skill {skill} changed{counted}: {description}"]
