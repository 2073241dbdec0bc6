"""Where clawbot keeps its state: ``~/.clawbot`` unless ``CLAWBOT_HOME`` says otherwise."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import attrs

HOME_ENV = "CLAWBOT_HOME"
CONFIG_ENV = "CLAWBOT_CONFIG"
CONFIG_NAME = "clawbot.toml"


@attrs.frozen
class StatePaths:
    """The state directory and the well-known places inside it."""

    root: Path

    @classmethod
    def resolve(cls, env: Mapping[str, str] | None = None) -> StatePaths:
        env = os.environ if env is None else env
        override = env.get(HOME_ENV, "").strip()
        return cls(Path(override).expanduser() if override else Path.home() / ".clawbot")

    @property
    def config_file(self) -> Path:
        return self.root / CONFIG_NAME

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    @property
    def credentials(self) -> Path:
        return self.root / "credentials"

    @property
    def memory(self) -> Path:
        return self.root / "memory"

    @property
    def skills(self) -> Path:
        return self.root / "skills"


def expand_user_path(value: str, env: Mapping[str, str] | None = None) -> Path:
    """Expand ``~`` against ``HOME`` from ``env`` (so tests can pass their own)."""
    env = os.environ if env is None else env
    if value == "~" or value.startswith("~/"):
        home = env.get("HOME") or str(Path.home())
        return Path(home + value[1:])
    return Path(value)


def inside(root: str, path: str) -> bool:
    """Whether ``path`` is ``root`` or lies below it, comparing whole path components
    (``/a/bc`` is not inside ``/a/b``). Both must be absolute and already resolved
    (``os.path.realpath``): this compares text and follows no link. The one test behind
    workspace confinement, the sandbox's protected paths and trusted program folders."""
    try:
        return os.path.commonpath([root, path]) == root
    except ValueError:  # one relative, one absolute, or nothing in common
        return False
