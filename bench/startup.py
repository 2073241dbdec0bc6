"""Start-up cost of the clawbot CLI, measured as whole processes.

Run:  uv run python bench/startup.py [--runs 21]

Prints medians (and p90) of wall time and peak RSS for:
  * ``python -c pass``               the interpreter alone, for reference
  * ``clawbot --help``               target <= 150 ms
  * ``clawbot plugins list``         discovery + config validation + a rich table
and, inside a fresh process, the time of entry-point discovery and registration of every
installed plugin (``create_plugin_manager()``; target <= 50 ms), split into the import of
the plugin machinery and the discovery/registration call itself.

Bytecode caching is switched on for the measured processes (PYTHONDONTWRITEBYTECODE is
removed) because that is how an installed clawbot runs; warm-up runs fill the caches.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DISCOVERY_PROBE = """
import time, json
t0 = time.perf_counter()
from clawbot.plugins import create_plugin_manager
t1 = time.perf_counter()
manager = create_plugin_manager()
t2 = time.perf_counter()
print(json.dumps({"import_ms": (t1 - t0) * 1000, "discover_register_ms": (t2 - t1) * 1000,
                  "plugins": sorted(manager.loaded())}))
"""


def _env(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("CLAWBOT_")}
    env.update({"CLAWBOT_HOME": home, "NO_COLOR": "1"})
    return env


def measure(cmd: list[str], runs: int, env: dict[str, str], cwd: str) -> tuple[list[float], list[float]]:
    """Wall seconds and peak RSS (MB) of ``runs`` executions (after two warm-ups)."""
    walls, rss = [], []
    for i in range(runs + 2):
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} exited with {proc.returncode}")
        if i >= 2:
            walls.append(elapsed)
            rss.append(usage.ru_maxrss / 1024)
    return walls, rss


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    clawbot = str(Path(sys.executable).with_name("clawbot"))
    with tempfile.TemporaryDirectory() as home:
        env = _env(home)
        rows = []
        for label, cmd in (
            ("python -c pass", [sys.executable, "-c", "pass"]),
            ("clawbot --help", [clawbot, "--help"]),
            ("clawbot plugins list", [clawbot, "plugins", "list"]),
        ):
            walls, rss = measure(cmd, args.runs, env, home)
            rows.append((label, statistics.median(walls) * 1000, pct(walls, 0.9) * 1000, statistics.median(rss)))
        probes = []
        for _ in range(args.runs):
            out = subprocess.run([sys.executable, "-c", DISCOVERY_PROBE], env=env, cwd=home, capture_output=True, text=True, check=True)
            probes.append(json.loads(out.stdout))
    print(f"clawbot start-up, {args.runs} runs each, {time.strftime('%Y-%m-%d')}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(f"{'command':<24}{'median ms':>11}{'p90 ms':>9}{'peak RSS MB':>13}")
    for label, median, p90, rss in rows:
        print(f"{label:<24}{median:>11.1f}{p90:>9.1f}{rss:>13.1f}")
    imports = statistics.median(p["import_ms"] for p in probes)
    discovery = statistics.median(p["discover_register_ms"] for p in probes)
    print(f"\nin one process ({len(probes[0]['plugins'])} plugins: {', '.join(probes[0]['plugins'])}):")
    print(f"  import clawbot.plugins (pluggy, importlib.metadata, specs)  median {imports:6.1f} ms")
    print(f"  discover entry points + import + register all plugins      median {discovery:6.1f} ms")
    print(f"  both                                                       median {imports + discovery:6.1f} ms")


if __name__ == "__main__":
    main()
