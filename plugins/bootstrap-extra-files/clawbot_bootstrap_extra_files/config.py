"""The ``[plugins.bootstrap-extra-files]`` table.

Every setting has a default; with none set the plugin changes nothing::

    [plugins.bootstrap-extra-files]
    patterns = ["docs/*.md", "projects/**/NOTES.md"]  # workspace files to add
    replace = { "SOUL.md" = "personas/pirate.md" }    # a standard file's text from another file
    drop = ["HEARTBEAT.md"]                           # standard files to leave out
    max_files = 20                                    # at most this many added files
    session_kinds = ["main"]                          # sessions that get the added files
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs
from clawbot.types import InRange

SESSION_KINDS = ("main", "direct", "group", "subagent", "cron")
_GLOB = re.compile(r"[*?\[]")


def _relative_problem(value: str) -> str | None:
    """Why ``value`` is not a path inside the workspace, or ``None``."""
    if not value.strip():
        return "must not be empty"
    if value.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", value):
        return "must be relative to the workspace (no absolute path, no ~)"
    if ".." in re.split(r"[/\\]", value):
        return "must stay inside the workspace (no '..')"
    return None


def _patterns(instance: object, attribute: attrs.Attribute, value: list[str]) -> None:
    for index, pattern in enumerate(value):
        problem = _relative_problem(pattern)
        if problem:
            raise ValueError(f"{attribute.name}[{index}] {pattern!r} {problem}")


def _replace(instance: object, attribute: attrs.Attribute, value: Mapping[str, str]) -> None:
    for name, target in value.items():
        if not name.strip() or "/" in name or "\\" in name:
            raise ValueError(f"{attribute.name}: key {name!r} must be a bootstrap file name such as 'SOUL.md'")
        problem = _relative_problem(target) or ("must be one file, not a pattern" if _GLOB.search(target) else None)
        if problem:
            raise ValueError(f"{attribute.name}.{name} {target!r} {problem}")


def _kinds(instance: object, attribute: attrs.Attribute, value: list[str]) -> None:
    for index, kind in enumerate(value):
        if kind not in SESSION_KINDS:
            raise ValueError(f"{attribute.name}[{index}] {kind!r} is not one of {', '.join(SESSION_KINDS)}")


@attrs.frozen(kw_only=True)
class ExtraFilesConfig:
    patterns: list[str] = attrs.field(factory=list, validator=_patterns)
    """Glob patterns relative to the workspace (``*``, ``?``, ``[...]``; ``**`` spans folders).
    Matches are added after the standard files, pattern by pattern, each pattern's matches in
    sorted order. Hidden files, files outside the workspace (through ``..`` or a symlink) and
    the standard files at the workspace root (AGENTS.md ... MEMORY.md) are never added."""

    replace: dict[str, str] = attrs.field(factory=dict, validator=_replace)
    """Standard file name -> workspace file whose text is injected under that name instead."""

    drop: list[str] = attrs.field(factory=list)
    """Names of files to leave out of the prompt (they are not added back by ``patterns``)."""

    max_files: int = attrs.field(default=20, validator=InRange(0, 1000))
    """At most this many files are added (all patterns together)."""

    session_kinds: list[str] = attrs.field(factory=lambda: ["main"], validator=_kinds)
    """Kinds of session that get the added files: ``main`` (your own chat), ``direct`` (other
    people's DMs), ``group``, ``cron``, ``subagent``. ``replace`` and ``drop`` apply to all."""

    @property
    def active(self) -> bool:
        return bool(self.patterns or self.replace or self.drop)
