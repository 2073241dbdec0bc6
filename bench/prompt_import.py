"""What the interactive terminal's prompt (prompt_toolkit) costs to import.

Run:  uv run python bench/prompt_import.py [--runs 11]

Each run is a fresh process. Two figures, medians over the runs (after two warm-ups):
  * ``python -X importtime``: the cumulative import time of the prompt_toolkit modules the
    terminal loads, in a process that imported nothing else first;
  * in place: the wall time of those imports in a process that already holds what
    ``clawbot run`` has loaded by then (asyncio, the kernel types, the terminal channel),
    i.e. what a user waits for once, when the chat starts on a terminal.
Piped runs and ``clawbot --help`` never pay it (tests check both).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
from datetime import date

MODULES = (
    "prompt_toolkit",
    "prompt_toolkit.application",
    "prompt_toolkit.filters",
    "prompt_toolkit.history",
    "prompt_toolkit.input",
    "prompt_toolkit.key_binding",
    "prompt_toolkit.output",
    "prompt_toolkit.patch_stdout",
    "prompt_toolkit.utils",
)
IMPORTS = "; ".join(f"import {m}" for m in MODULES)
IN_PLACE = (
    "import time, asyncio, clawbot.types, clawbot.safetext, clawbot_terminal.channel\n"
    f"t = time.perf_counter(); {IMPORTS}; print((time.perf_counter() - t) * 1000)\n"
)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed clawbot has its bytecode cached
    return env


def importtime_ms() -> float:
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", IMPORTS], capture_output=True, text=True, env=_env(), check=True)
    total = 0
    for line in result.stderr.splitlines():
        parts = line.split("|")
        # top-level prompt_toolkit imports only: their cumulative time includes every submodule they pull in
        if len(parts) == 3 and parts[2].strip() in MODULES and not parts[2].startswith("  "):
            total += int(parts[1])
    return total / 1000


def in_place_ms() -> float:
    result = subprocess.run([sys.executable, "-c", IN_PLACE], capture_output=True, text=True, env=_env(), check=True)
    return float(result.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=11)
    runs = parser.parse_args().runs
    for _ in range(2):
        importtime_ms(), in_place_ms()
    cold = statistics.median(importtime_ms() for _ in range(runs))
    warm = statistics.median(in_place_ms() for _ in range(runs))
    import prompt_toolkit

    print(f"prompt_toolkit {prompt_toolkit.__version__} import, {runs} runs each, {date.today()}, Python {platform.python_version()}, {os.cpu_count()} CPUs")
    print(f"  python -X importtime (cumulative, nothing imported before)  median {cold:6.1f} ms")
    print(f"  in place (after what clawbot run has already imported)      median {warm:6.1f} ms")


if __name__ == "__main__":
    main()
