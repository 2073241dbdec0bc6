"""The gateway as a process: time to ready, idle RSS, and ``clawbot agent -m`` through it.

    uv run python bench/gateway_process.py [--runs 11]

1. ``clawbot run`` time to ready: from spawning the process to the first answer of
   ``GET /v1/health`` on its control API, with only the API as channel (terminal off) and a
   provider on the fake LLM. Target ≤ 500 ms (OpenClaw's gateway: ~1.46 s).
2. Idle RSS of ``clawbot run`` with the default channels (the web chat, the terminal fed by an open pipe,
   and the API) and the default plugins, 2 s after it is ready, from /proc. Target ≤ 80 MB.
   Measured on a state dir whose memory index is built (the steady state); the first start
   on a fresh one, which indexes the workspace with the offline embedder, is shown apart.
3. ``clawbot agent -m hi`` through a running gateway: the whole client process, wall time,
   started by a small launcher (see bench/turn_process.py). Target ≤ 150 ms. The in-process
   run (``--local``) beside it for comparison.

Medians of ``--runs`` runs after two warm-ups; the fake LLM answers at once.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from turn_process import Launcher, measure, pct  # noqa: E402 - the launcher of the process benchmarks
from turn_process import _env as _clawbot_env  # noqa: E402

CLAWBOT = str(Path(sys.executable).with_name("clawbot"))


def _env(home: str) -> dict[str, str]:
    """The user's environment with ``home`` as state dir and home (the default workspace inside it)."""
    return {**_clawbot_env(home), "HOME": home}


def write_config(home: Path, url: str, *, terminal: bool) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "clawbot.toml").write_text(
        f'agents.defaults.model.primary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{url}/v1"\napi_key = "sk-test"\n\n'
        f"[channels.terminal]\nenabled = {'true' if terminal else 'false'}\n\n[gateway]\nport = 0\n",
        encoding="utf-8",
    )


def start_gateway(home: Path, *, stdin: int) -> tuple[subprocess.Popen[bytes], float]:
    """A running ``clawbot run`` and the seconds it took to answer /v1/health."""
    from clawbot.control.client import ApiUnavailable, find_gateway

    started = time.perf_counter()
    process = subprocess.Popen([CLAWBOT, "run"], cwd=home, env=_env(str(home)), stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = started + 30
    while time.perf_counter() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"clawbot run exited: {process.stderr.read().decode(errors='replace')[-2000:]}")  # type: ignore[union-attr]
        client = find_gateway(home)
        if client is not None:
            try:
                if client.call("GET", "/v1/health")[0] == 200:
                    return process, time.perf_counter() - started
            except ApiUnavailable:
                pass
        time.sleep(0.002)
    process.kill()
    raise SystemExit("clawbot run did not become ready in 30 s")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    from clawbot.testing.fake_llm import FakeLLM

    fake = FakeLLM(default_text="Hello! How can I help?")
    with fake.serve_in_thread() as url, tempfile.TemporaryDirectory() as tmp:
        api_home, chat_home = Path(tmp) / "api", Path(tmp) / "chat"
        write_config(api_home, url, terminal=False)
        write_config(chat_home, url, terminal=True)

        ready = []
        for i in range(args.runs + 2):
            process, seconds = start_gateway(api_home, stdin=subprocess.DEVNULL)
            stop(process)
            if i >= 2:
                ready.append(seconds)

        process, _seconds = start_gateway(chat_home, stdin=subprocess.PIPE)
        time.sleep(5.0)  # the first start indexes the new workspace's memory
        first_rss = rss_mb(process.pid)
        stop(process)
        idle = []
        for _ in range(3):
            process, _seconds = start_gateway(chat_home, stdin=subprocess.PIPE)
            time.sleep(2.0)
            idle.append(rss_mb(process.pid))
            stop(process)

        launcher = Launcher()
        process, _seconds = start_gateway(api_home, stdin=subprocess.DEVNULL)
        try:
            through, through_rss = measure(launcher, [CLAWBOT, "agent", "-m", "hi"], args.runs, _env(str(api_home)), str(api_home))
            local, local_rss = measure(launcher, [CLAWBOT, "agent", "--local", "-m", "hi"], args.runs, _env(str(api_home)), str(api_home))
        finally:
            stop(process)
            launcher.close()

    today = datetime.date.today().isoformat()
    print(f"clawbot gateway as a process, {args.runs} runs each after 2 warm-ups, {today}, Python {platform.python_version()}")
    print(f"  {'figure':<52}{'median':>10}{'p90':>10}   target")
    print(f"  {'clawbot run: spawn to /v1/health answering (ms)':<52}{statistics.median(ready) * 1000:>10.1f}{pct(ready, 0.9) * 1000:>10.1f}   <= 500")
    print(f"  {'clawbot run idle RSS, default channels (MB)':<52}{statistics.median(idle):>10.1f}{max(idle):>10.1f}   <= 80")
    print(f"  {'  the first start on a fresh state dir (MB)':<52}{first_rss:>10.1f}")
    print(f"  {'clawbot agent -m hi through the gateway (ms)':<52}{statistics.median(through) * 1000:>10.1f}{pct(through, 0.9) * 1000:>10.1f}   <= 150")
    print(f"  {'  its peak RSS (MB)':<52}{statistics.median(through_rss):>10.1f}")
    print(f"  {'clawbot agent --local -m hi, in process (ms)':<52}{statistics.median(local) * 1000:>10.1f}{pct(local, 0.9) * 1000:>10.1f}")
    print(f"  {'  its peak RSS (MB)':<52}{statistics.median(local_rss):>10.1f}")


if __name__ == "__main__":
    main()
