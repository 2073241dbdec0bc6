"""Whether a skill can work here: its OS, binaries, environment variables and config flags.

Every unmet requirement becomes one sentence (``needs the `gemini` binary on PATH``) so
``clawbot skills list`` can say exactly what to install or set. A skill marked
``always: true`` skips the binary, variable and config checks (as in OpenClaw: the author
says it is useful regardless); its ``os`` list still applies, because a skill for another
operating system can never work.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from typing import Any

import attrs

from clawbot.skills.frontmatter import SkillDocument, normalise_key

OS_ALIASES = {"macos": "darwin", "mac": "darwin", "osx": "darwin", "windows": "win32", "win": "win32"}


def current_platform() -> str:
    """``darwin``, ``linux`` or ``win32`` (Node's names, which skills use), else ``sys.platform``."""
    if sys.platform.startswith("linux"):
        return "linux"
    if sys.platform in ("win32", "cygwin", "msys"):
        return "win32"
    return sys.platform


_MISSING = object()


def config_value(config: Any, dotted: str) -> Any:
    """The value at ``dotted`` in the loaded configuration, or ``None`` when there is none.

    ``ClawbotConfig`` keeps no raw TOML, so the path is walked through the validated
    objects: plugin-owned tables first (``channels.telegram.enabled`` is the ``enabled``
    attribute of the ``channels.telegram`` section), then the core tables (``skills.allow``).
    Mappings are indexed, lists take a number, anything else is read as an attribute;
    ``camelCase`` and ``kebab-case`` parts also match ``snake_case`` attributes.
    """
    parts = [part for part in dotted.strip().split(".") if part]
    if not parts or config is None:
        return None
    sections = getattr(config, "sections", None)
    value: Any = getattr(config, "core", config)
    rest = parts
    if isinstance(sections, Mapping):
        for cut in range(len(parts), 0, -1):
            key = ".".join(parts[:cut])
            if key in sections:
                value, rest = sections[key], parts[cut:]
                break
    for part in rest:
        value = _step(value, part)
        if value is _MISSING:
            return None
    return value


def _step(value: Any, part: str) -> Any:
    if value is None:
        return _MISSING
    if isinstance(value, Mapping):
        for key in (part, normalise_key(part)):
            if key in value:
                return value[key]
        return _MISSING
    if isinstance(value, list | tuple):
        try:
            return value[int(part)]
        except (ValueError, IndexError):
            return _MISSING
    for name in (part, normalise_key(part)):
        if not name.startswith("_") and hasattr(value, name):
            try:
                return getattr(value, name)
            except Exception:
                return _MISSING
    return _MISSING


def _quoted(names: tuple[str, ...]) -> str:
    return ", ".join(f"`{name}`" for name in names)


@attrs.define
class EligibilityChecker:
    """Checks skills against one environment and configuration.

    Binary look-ups are cached; the catalog makes a new checker (or calls :meth:`forget`)
    when ``PATH`` or one of its directories changes.
    """

    env: Mapping[str, str]
    config: Any
    platform: str = attrs.field(factory=current_platform)
    _found: dict[str, bool] = attrs.field(factory=dict, init=False)

    @property
    def path(self) -> str:
        return self.env.get("PATH") or os.defpath

    def forget(self) -> None:
        self._found.clear()

    def has_binary(self, name: str) -> bool:
        found = self._found.get(name)
        if found is None:
            found = self._found[name] = shutil.which(name, path=self.path) is not None
        return found

    def reasons(self, document: SkillDocument) -> tuple[str, ...]:
        """Why the skill cannot be used here, one sentence per unmet requirement."""
        reasons: list[str] = []
        wanted = tuple(OS_ALIASES.get(name.lower(), name.lower()) for name in document.os)
        if wanted and self.platform not in wanted:
            reasons.append(f"runs only on {', '.join(wanted)} (this is {self.platform})")
        if document.always:
            return tuple(reasons)
        requires = document.requires
        reasons += [f"needs the `{name}` binary on PATH" for name in requires.bins if not self.has_binary(name)]
        if requires.any_bins and not any(self.has_binary(name) for name in requires.any_bins):
            reasons.append(f"needs one of {_quoted(requires.any_bins)} on PATH")
        reasons += [f"needs the environment variable `{name}` set" for name in requires.env if not self.env.get(name)]
        reasons += [f"needs `{path}` set (true or non-empty) in the configuration" for path in requires.config if not config_value(self.config, path)]
        return tuple(reasons)
