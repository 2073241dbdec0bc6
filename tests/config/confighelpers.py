"""Shared by the configuration tests: the real CLI in a subprocess, and in-process loads.

Everything runs against real files under ``tmp_path``; ``CLAWBOT_HOME`` and ``HOME`` always
point into it, so the developer's own ``~/.clawbot`` is never read.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from clawbot.testing.cli import subprocess_env

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_CONFIG = REPO_ROOT / "clawbot.toml"
CONFIG_DOC = REPO_ROOT / "docs" / "configuration.md"

_SCRIPT = Path(sys.executable).with_name("clawbot")


def run_cli(
    *args: str,
    home: Path,
    cwd: Path | None = None,
    env: Mapping[str, str | None] | None = None,
    extra_path: Path | None = None,
    stdin: str | None = "",
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """``clawbot ARGS`` exactly as a user runs it (the installed console script when present)."""
    home.mkdir(parents=True, exist_ok=True)
    command = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "clawbot.cli.main"]
    return subprocess.run(
        [*command, *args],
        cwd=cwd or home,
        env=subprocess_env(home, env, extra_path),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def load_config(
    tmp_path: Path,
    text: str | None,
    *,
    env: Mapping[str, str] | None = None,
    plugins: Mapping[str, object] | None = None,
    load_entrypoints: bool = True,
) -> Any:
    """``clawbot.boot.load`` of ``text`` written to a file (``None``: no file at all)."""
    from clawbot.boot import load

    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    path = None if text is None else write(tmp_path / "given.toml", text)
    environment = {"CLAWBOT_HOME": str(home), "HOME": str(home), **(env or {})}
    return load(path, env=environment, cwd=cwd, plugins=plugins or {}, load_entrypoints=load_entrypoints)


def problems_of(tmp_path: Path, text: str, **kwargs: Any) -> list[str]:
    """The rendered problems (``path: message``) of a configuration that must fail."""
    from clawbot.config import ConfigError

    try:
        load_config(tmp_path, text, **kwargs)
    except ConfigError as exc:
        return [str(p) for p in exc.problems]
    raise AssertionError("the configuration was accepted")


def problem_map(problems: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in problems:
        path, _, message = line.partition(": ")
        out[path] = message
    return out
