"""Part 2 of bench/turn.py: a whole ``clawbot agent -m hi`` process against the fake server.

Run it through ``bench/turn.py --process-only``; see that file's docstring for what is
measured and why.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _env(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("CLAWBOT_")}
    env.update({"CLAWBOT_HOME": home, "NO_COLOR": "1"})
    env.pop("OPENAI_API_KEY", None)
    env.pop("ANTHROPIC_API_KEY", None)
    return env


# The measured commands are started by a small launcher process, not by this one: a child
# started with vfork/fork inherits the peak RSS of the process it came from (ru_maxrss keeps
# the high-water mark across exec), and this process holds the kernel bench and the server.
LAUNCHER = """
import json, os, subprocess, sys, tempfile, time
for line in sys.stdin:
    job = json.loads(line)
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(job["cmd"], stdout=subprocess.DEVNULL, stderr=err, env=job["env"], cwd=job["cwd"])
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        err.seek(0)
        tail = err.read()[-2000:].decode(errors="replace")
    print(json.dumps({"wall": elapsed, "rss_mb": usage.ru_maxrss / 1024,
                      "rc": os.waitstatus_to_exitcode(status), "stderr": tail}), flush=True)
"""


class Launcher:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        )

    def run(self, cmd: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"cmd": cmd, "env": env, "cwd": cwd}) + "\n")
        self.proc.stdin.flush()
        result = json.loads(self.proc.stdout.readline())
        if result["rc"] != 0:
            raise SystemExit(f"{' '.join(cmd)} exited with {result['rc']}: {result['stderr']}")
        return result["wall"], result["rss_mb"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def measure(launcher: Launcher, cmd: list[str], runs: int, env: dict[str, str], cwd: str) -> tuple[list[float], list[float]]:
    """Wall seconds and peak RSS (MB) of ``runs`` executions (after two warm-ups)."""
    walls, rss = [], []
    for i in range(runs + 2):
        wall, peak = launcher.run(cmd, env, cwd)
        if i >= 2:
            walls.append(wall)
            rss.append(peak)
    return walls, rss


def _config(provider: str, model: str, base_url: str) -> str:
    return f'agents.defaults.model.primary = "{provider}/{model}"\n\n[providers.{provider}]\nbase_url = "{base_url}"\napi_key = "sk-test"\n'


def _import_top(cmd: list[str], env: dict[str, str], cwd: str, top: int) -> list[tuple[float, str]]:
    out = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], env=env, cwd=cwd, capture_output=True, text=True, check=True)
    rows = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, self_us, cumulative_us, name = (part.strip() for part in line.replace("import time:", "|", 1).split("|"))
        depth = (len(line.split("|")[2]) - len(line.split("|")[2].lstrip()) - 1) // 2
        rows.append((int(cumulative_us) / 1000, int(self_us) / 1000, depth, name.strip()))
    total = sum(c for c, _s, d, _n in rows if d == 0)
    ranked = sorted(rows, key=lambda r: r[0], reverse=True)
    return [(total, "all imports")] + [(c, f"{'  ' * min(d, 3)}{n}  (self {s:.1f})") for c, s, d, n in ranked[:top]]


def part_process(runs: int) -> None:
    from clawbot.testing.fake_llm import FakeLLM

    fake = FakeLLM(default_text="Hello! How can I help?")
    clawbot = str(Path(sys.executable).with_name("clawbot"))
    rows, imports = [], {}
    launcher = Launcher()
    with fake.serve_in_thread() as url, tempfile.TemporaryDirectory() as tmp:
        base_env = _env(tmp)
        for label, code in (
            ("python -c pass", "pass"),
            ("python -c 'import httpx2'", "import httpx2"),
            ("python -c 'import openai'", "import openai"),
            ("python -c 'import anthropic'", "import anthropic"),
        ):
            walls, rss = measure(launcher, [sys.executable, "-c", code], runs, base_env, tmp)
            rows.append((label, walls, rss))
        for provider, model, base_url in (("openai", "gpt-test", f"{url}/v1"), ("anthropic", "claude-test", url)):
            home = Path(tmp) / provider
            home.mkdir()
            (home / "clawbot.toml").write_text(_config(provider, model, base_url), encoding="utf-8")
            env = _env(str(home))
            cmd = [clawbot, "agent", "-m", "hi"]
            walls, rss = measure(launcher, cmd, runs, env, str(home))
            rows.append((f"clawbot agent -m hi ({provider})", walls, rss))
            imports[provider] = _import_top([sys.executable, "-m", "clawbot.cli.main", "agent", "-m", "hi"], env, str(home), 12)
        served = len(fake.requests)
    launcher.close()
    print(f"\nPart 2: whole process against the fake LLM server over 127.0.0.1, {runs} runs each after 2 warm-ups ({served} requests served)")
    print(f"  {'command':<38}{'median ms':>11}{'p90 ms':>9}{'peak RSS MB':>13}")
    for label, walls, rss in rows:
        print(f"  {label:<38}{statistics.median(walls) * 1000:>11.1f}{pct(walls, 0.9) * 1000:>9.1f}{statistics.median(rss):>13.1f}")
    print("  targets: <= 400 ms median, <= 100 MB peak RSS")
    for provider, top in imports.items():
        print(f"\n  slowest imports of one `clawbot agent -m hi` ({provider}; -X importtime, cumulative ms, inflated by the tracing)")
        for cumulative, name in top:
            print(f"    {cumulative:8.1f}  {name}")
