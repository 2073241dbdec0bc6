"""Start-up of two checkouts side by side: ``clawbot --help``, ``clawbot run`` to ready, a turn.

    uv run python bench/before_after.py --before /path/to/old/checkout [--after .] [--runs 11]

Each checkout runs its own ``.venv/bin/clawbot`` (made with ``uv sync``). The runs of the
two alternate (before, after, before, ...) so load on the machine falls on both alike; the
figures are medians after two warm-ups of each, and the ratio after/before of each figure.

1. ``clawbot --help``: the whole process.
2. ``clawbot run`` to ready: spawn until ``GET /v1/health`` on its control API answers 200
   (only the API as channel, the provider on the fake LLM; the endpoint and token are read
   from the state dir as ``clawbot agent`` reads them).
3. A turn: ``clawbot agent --local -m hi`` (kernel boot, plugins, one turn against the fake
   LLM, in one process), and ``clawbot agent -m hi`` through the running gateway.

Only the standard library talks to the gateway here, so one script measures checkouts whose
modules differ.
"""

from __future__ import annotations

import argparse
import datetime
import http.client
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gateway_process import stop  # noqa: E402 - stopping a gateway as a user does (Ctrl-C)
from turn_process import Launcher, pct  # noqa: E402 - the launcher of the process benchmarks
from turn_process import _env as clawbot_env  # noqa: E402


def write_config(home: Path, url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "clawbot.toml").write_text(
        f'agents.defaults.model.primary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{url}/v1"\napi_key = "sk-test"\n\n'
        "[channels.terminal]\nenabled = false\n\n[gateway]\nport = 0\n",
        encoding="utf-8",
    )


def env_for(home: Path) -> dict[str, str]:
    return {**clawbot_env(str(home)), "HOME": str(home)}


def health_answers(home: Path) -> bool:
    """Whether the gateway on ``home`` answers ``GET /v1/health`` with 200 now."""
    try:
        endpoint = json.loads((home / "gateway" / "endpoint.json").read_text(encoding="utf-8"))
        token = (home / "gateway" / "token").read_text(encoding="utf-8").strip()
    except (OSError, ValueError):
        return False
    connection = http.client.HTTPConnection("127.0.0.1", endpoint["port"], timeout=2)
    try:
        connection.request("GET", "/v1/health", headers={"Authorization": f"Bearer {token}", "Host": f"127.0.0.1:{endpoint['port']}"})
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


def start_gateway(clawbot: str, home: Path) -> tuple[subprocess.Popen[bytes], float]:
    (home / "gateway" / "endpoint.json").unlink(missing_ok=True)
    started = time.perf_counter()
    process = subprocess.Popen([clawbot, "run"], cwd=home, env=env_for(home), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = started + 30
    while time.perf_counter() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"clawbot run exited: {process.stderr.read().decode(errors='replace')[-2000:]}")  # type: ignore[union-attr]
        if health_answers(home):
            return process, time.perf_counter() - started
        time.sleep(0.002)
    process.kill()
    raise SystemExit("clawbot run did not become ready in 30 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=Path("."))
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    from clawbot.testing.fake_llm import FakeLLM

    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    figures: dict[str, dict[str, list[float]]] = {side: {"help": [], "ready": [], "local": [], "through": []} for side in sides}
    launcher = Launcher()
    fake = FakeLLM(default_text="Hello! How can I help?")
    with fake.serve_in_thread() as url, tempfile.TemporaryDirectory() as tmp:
        homes = {side: Path(tmp) / side for side in sides}
        for home in homes.values():
            write_config(home, url)
        for i in range(args.runs + 2):
            for side, checkout in sides.items():
                clawbot, home, kept = str(checkout / ".venv" / "bin" / "clawbot"), homes[side], i >= 2
                wall, _ = launcher.run([clawbot, "--help"], env_for(home), str(home))
                local, _ = launcher.run([clawbot, "agent", "--local", "-m", "hi"], env_for(home), str(home))
                process, ready = start_gateway(clawbot, home)
                try:
                    through, _ = launcher.run([clawbot, "agent", "-m", "hi"], env_for(home), str(home))
                finally:
                    stop(process)
                if kept:
                    for name, value in (("help", wall), ("ready", ready), ("local", local), ("through", through)):
                        figures[side][name].append(value)
    launcher.close()

    labels = {
        "help": "clawbot --help",
        "ready": "clawbot run: spawn to /v1/health answering",
        "local": "clawbot agent --local -m hi (boot + a turn)",
        "through": "clawbot agent -m hi through the gateway",
    }
    print(f"before {sides['before']}\nafter  {sides['after']}")
    print(f"{args.runs} runs each, alternating, after 2 warm-ups; {datetime.date.today().isoformat()}, Python {platform.python_version()}")
    print(f"  {'figure (ms)':<46}{'before':>9}{'p90':>8}{'after':>9}{'p90':>8}{'after/before':>14}")
    for name, label in labels.items():
        before, after = figures["before"][name], figures["after"][name]
        ratio = statistics.median(after) / statistics.median(before)
        print(
            f"  {label:<46}{statistics.median(before) * 1000:>9.1f}{pct(before, 0.9) * 1000:>8.1f}"
            f"{statistics.median(after) * 1000:>9.1f}{pct(after, 0.9) * 1000:>8.1f}{ratio:>14.2f}"
        )


if __name__ == "__main__":
    main()
