"""Running the real ``clawbot`` CLI in a subprocess, the way a user does."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def run_cli(
    *args: str,
    home: Path,
    cwd: Path | None = None,
    extra_path: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CLAWBOT_")}
    for secret in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        environment.pop(secret, None)
    environment.update({"CLAWBOT_HOME": str(home), "HOME": str(home), "NO_COLOR": "1", "COLUMNS": "200"})
    if extra_path is not None:
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(extra_path), environment.get("PYTHONPATH")]))
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "clawbot.cli.main", *args],
        cwd=cwd or home,
        env=environment,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
