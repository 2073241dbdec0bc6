"""Where skills are found, in precedence order, and a cheap listing of each place.

First wins a name clash:

1. ``<workspace>/skills``           source ``workspace``
2. ``<state dir>/skills``           source ``user`` (``~/.clawbot/skills``)
3. each of ``skills.extra_dirs``    source ``extra``
4. the skills shipped with clawbot  source ``bundled``
5. plugins' skill sources           source = the ``SkillSource`` name, higher precedence first

A skill folder is a directory directly inside one of these (names starting with ``.`` are
skipped) holding a regular file ``SKILL.md``. Folders are never searched deeper, so a
symlinked skill folder may point anywhere (the user put it there) and a symlink loop can
only make that one folder unreadable. (A workspace skill whose file leads outside the
workspace is read for its frontmatter only: see :mod:`clawbot.skills.catalog`.)
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

import attrs

from clawbot.config import ClawbotConfig
from clawbot.paths import StatePaths, expand_user_path, inside
from clawbot.registry import Registry
from clawbot.types import SkillSource

SKILL_FILE = "SKILL.md"
BUNDLED_DIR = Path(__file__).with_name("bundled")

BUILTIN_KINDS = ("workspace", "user", "extra", "bundled")

FolderStamp = tuple[str, int, int, int]
"""``(folder name, SKILL.md mtime_ns, size, inode)``: changes whenever the file does."""


@attrs.frozen
class SourceDir:
    """One place skills are read from; ``name`` becomes ``SkillEntry.source``."""

    name: str
    path: Path
    kind: str  # workspace | user | extra | bundled | plugin

    @property
    def optional(self) -> bool:
        """Workspace and user dirs are often absent; a named extra or plugin dir should exist."""
        return self.kind in ("workspace", "user", "bundled")


class SkillHost(Protocol):
    """What the skills read of the kernel that runs them (the kernel is one): passed in, so
    the skills sit below the kernel and a test can hand them any holder of these four."""

    config: ClawbotConfig
    env: Mapping[str, str]
    paths: StatePaths
    skill_sources: Registry[SkillSource]


def workspace_of(kernel: SkillHost, agent_id: str) -> Path:
    return expand_user_path(kernel.config.agent_workspace(agent_id), kernel.env)


def source_dirs(kernel: SkillHost, agent_id: str) -> tuple[SourceDir, ...]:
    """Every skill source of one agent, highest precedence first.

    Relative ``skills.extra_dirs`` are taken from the directory of the configuration file.
    """
    config = kernel.config
    sources = [
        SourceDir("workspace", workspace_of(kernel, agent_id) / "skills", "workspace"),
        SourceDir("user", kernel.paths.skills, "user"),
    ]
    base = Path(config.source).parent if config.source else None
    for entry in config.skills.extra_dirs:
        path = expand_user_path(entry, kernel.env)
        if base is not None and not path.is_absolute():
            path = base / path
        sources.append(SourceDir("extra", path, "extra"))
    sources.append(SourceDir("bundled", BUNDLED_DIR, "bundled"))
    plugin_sources = sorted(kernel.skill_sources, key=lambda s: (-s.precedence, s.name))
    sources += [SourceDir(s.name, Path(s.path).expanduser(), "plugin") for s in plugin_sources]
    return tuple(sources)


def scan(path: str) -> tuple[FolderStamp, ...]:
    """The skill folders directly inside ``path`` with a stamp of each ``SKILL.md``.

    One ``scandir`` plus one ``stat`` per folder: cheap enough to run every turn. A missing
    or unreadable directory has no skills.
    """
    found: list[FolderStamp] = []
    try:
        entries = os.scandir(path)
    except OSError:
        return ()
    with entries:
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                info = os.stat(os.path.join(entry.path, SKILL_FILE))  # follows symlinks; a loop fails here
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                found.append((name, info.st_mtime_ns, info.st_size, info.st_ino))
    return tuple(found)


def inside_workspace(source: SourceDir, workspace: os.PathLike[str] | str) -> bool:
    """Whether ``source``'s skills are files of the workspace, which the agent can write and
    so confine like any workspace file: its folder lies inside the workspace as configured
    or as resolved (a folder replaced by a link out still counts as the workspace's)."""
    folder = os.fspath(source.path)
    return inside(os.path.abspath(workspace), os.path.abspath(folder)) or inside(os.path.realpath(workspace), os.path.realpath(folder))
