"""Cost of one turn on a session whose transcript is large (~200 MB) and was compacted.

Run:  env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/transcript.py [--mb 200] [--runs 3]

The bench writes, under a temporary directory, a session ``agent:main:main`` whose
transcript holds ``--mb`` megabytes of earlier conversation (exchanges of question, tool
call, tool result and answer, ~300 bytes a line), then one compaction entry, then a 20-message history. Each measured run is a
fresh process (so peak RSS is the turn's own) that builds a kernel and runs one real turn
through ``Conversation.send`` with an in-process provider that answers at once: the time
printed is the whole ``send`` (open the session, read the transcript, write the turn);
peak RSS is ``os.wait4``'s figure for the process. The transcript is put back to its
original size before every run (a turn only appends), and the session index the
warm-up run built is kept, as in a running installation. A second row runs the same turn on the 20-message history
alone, with no large prefix, for reference.
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

KEY = "agent:main:main"

CHILD = r"""
import asyncio, sys, time
from pathlib import Path
from clawbot import LLMProvider, Message, ModelInfo, Role, StopReason, TextBlock, Usage
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.testing import build_kernel

class Instant(LLMProvider):
    name = "instant"
    def model_info(self, model_id):
        return ModelInfo(model_id, context_window=200_000)
    async def complete(self, request, on_text=None):
        return Message(Role.ASSISTANT, (TextBlock("Noted."),), usage=Usage(1000, 10), stop_reason=StopReason.END_TURN)

async def main():
    kernel = await build_kernel(Path(sys.argv[1]))
    conversation = Conversation(kernel, ModelChoice(Instant(), "instant-1"), "main", services=None)
    started = time.perf_counter()
    result = await conversation.send("agent:main:main", "Anything else?", channel="cli")
    elapsed = time.perf_counter() - started
    assert result.text == "Noted.", result
    print(elapsed)

asyncio.run(main())
"""


def _line(record: dict) -> bytes:
    return (json.dumps(record) + "\n").encode("utf-8")


def _entry(number: int, message: dict) -> bytes:
    return _line(
        {"type": "message", "id": f"{number:012x}", "parent_id": f"{number - 1:012x}", "timestamp": "2026-01-01T00:00:00.000+00:00", "message": message}
    )


def _exchange(number: int) -> list[dict]:
    """One exchange as a turn writes it: question, tool call, tool result, answer (~1.2 KB)."""
    call = f"call_{number:08d}"
    usage = {"input_tokens": 900, "output_tokens": 30, "cache_read_tokens": 800}
    return [
        {"role": "user", "content": [{"type": "text", "text": f"Question {number}: what is still open from yesterday's notes?"}]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "I'll look."}, {"type": "tool_call", "id": call, "name": "read", "arguments": {"path": "notes.md"}}],
            "provider": "openai",
            "model": "gpt-test",
            "usage": usage,
            "stop_reason": "tool_use",
        },
        {
            "role": "tool_result",
            "content": [{"type": "text", "text": "- buy milk\n- call Anna about the trip\n- renew the passport\n" * 4}],
            "tool_call_id": call,
            "tool_name": "read",
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Three things are open: milk, a call to Anna and the passport. " * 3}],
            "provider": "openai",
            "model": "gpt-test",
            "usage": usage,
            "stop_reason": "end_turn",
        },
    ]


def build_session(home: Path, megabytes: int) -> Path:
    """The session directory with a transcript of ``megabytes`` MB before its last compaction."""
    directory = home / "sessions" / "main"
    directory.mkdir(parents=True, mode=0o700)
    session_id = "0123456789abcdef0123456789abcdef"
    header = {"type": "session", "version": 1, "id": session_id, "key": KEY, "agent": "main", "timestamp": "2026-01-01T00:00:00.000+00:00"}
    path = directory / f"{session_id}.jsonl"
    number = 0
    with path.open("wb") as handle:
        handle.write(_line(header))
        while handle.tell() < megabytes * 1_000_000:
            lines = []
            for message in _exchange(number):
                number += 1
                lines.append(_entry(number, message))
            handle.write(b"".join(lines))
        number += 1
        handle.write(
            _line(
                {
                    "type": "compaction",
                    "id": f"{number:012x}",
                    "parent_id": None,
                    "timestamp": "2026-01-02T00:00:00.000+00:00",
                    "summary": "We planned a trip.",
                    "tokens_before": 150_000,
                    "tokens_after": 2_000,
                    "strategy": "bench",
                }
            )
        )
        for _ in range(5):  # a 20-message history after it
            for message in _exchange(number):
                number += 1
                handle.write(_entry(number, message))
    return path


def run_turn(home: Path) -> tuple[float, float]:
    """Seconds of one turn and the peak RSS (MB) of its process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWBOT_") and k != "PYTHONDONTWRITEBYTECODE"}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(home)], env=env, stdout=subprocess.PIPE, text=True)
    out = child.stdout.read() if child.stdout else ""
    _pid, status, usage = os.wait4(child.pid, 0)
    if status != 0:
        raise SystemExit(f"the turn failed (status {status})")
    return float(out.strip()), usage.ru_maxrss / 1024


def measure(label: str, megabytes: int, runs: int, root: Path) -> None:
    home = root / label.replace(" ", "-")
    path = build_session(home, megabytes)
    size = path.stat().st_size
    times, peaks = [], []
    for _ in range(runs + 1):  # the first run fills bytecode caches and builds the index: not counted
        os.truncate(path, size)  # a turn only appends: this puts the transcript back
        seconds, peak = run_turn(home)
        times.append(seconds)
        peaks.append(peak)
    times, peaks = times[1:], peaks[1:]
    print(f"  {label:<38}{size / 1e6:>9.1f}{statistics.median(times) * 1000:>12.1f}{max(times) * 1000:>10.1f}{statistics.median(peaks):>12.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the conversation before the compaction")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(
        f"one turn on a large compacted transcript, {time.strftime('%Y-%m-%d')}, Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs; {args.runs} runs each after one warm-up, a fresh process per run"
    )
    print(f"  {'transcript':<38}{'size MB':>9}{'median ms':>12}{'max ms':>10}{'peak RSS MB':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        measure(f"{args.mb} MB before the last compaction", args.mb, args.runs, Path(tmp))
        measure("20-message history only", 0, args.runs, Path(tmp))
    print(f"\ncommand: env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/transcript.py --mb {args.mb} --runs {args.runs}")


if __name__ == "__main__":
    main()
