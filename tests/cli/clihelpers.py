"""Running the real ``clawbot`` CLI in a subprocess, the way a user does.

For a test that only reads what a command prints, ``clawbot.testing.cli.invoke_cli`` runs it
in process with the same environment, many times faster.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from clawbot.testing.cli import subprocess_env


def run_cli(
    *args: str,
    home: Path,
    cwd: Path | None = None,
    extra_path: Path | None = None,
    env: Mapping[str, str | None] | None = None,
    stdin: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clawbot.cli.main", *args],
        cwd=cwd or home,
        env=subprocess_env(home, env, extra_path),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
