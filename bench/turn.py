"""Cost of one agent turn: the kernel's own overhead in process, and a whole ``clawbot agent -m``.

Run:  cd /work/main && env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/turn.py [--turns 300] [--runs 11]

Part 1, kernel overhead per turn (target <= 2 ms median). An in-process provider answers
instantly with canned messages, so everything measured is clawbot's own work. Each turn
runs in the same session ``agent:main:main``, whose transcript holds a 20-message history
(5 exchanges of user / assistant tool call / tool result / assistant) and whose index is
put back to that state before every turn (the reset is not timed). The turn is one tool
round trip: the model asks for the no-op tool ``noop`` (with a small JSON schema), gets its
result and answers, so a turn writes 4 transcript lines. Printed: median, p90 and p99 of
``Conversation.send`` after a warm-up; the same with 200 other sessions in the agent's
session index (a gateway with many chats); the time per turn spent in each step
(inclusive, measured by wrapping the functions in a separate pass); and the top functions
by own time under cProfile (profiler overhead inflates them; read them as proportions).
Side by side, the cross-process session lock a turn holds (clawbot.sessions.turnlock): the
first case again, alternating turn by turn between the real lock and a no-op in its place
(so machine noise hits both alike), and the lock alone (uncontended acquire + release, no
turn around it).

Part 2, whole process (targets <= 400 ms median, <= 100 MB peak RSS): ``clawbot agent -m
hi`` against the fake LLM server (clawbot.testing.fake_llm, served over 127.0.0.1 by a
thread of this process), once with the openai provider and once with the anthropic one,
plus ``python -c pass`` for reference. Median and p90 wall time and median peak RSS
(os.wait4) of N runs after two warm-ups; each provider gets its own CLAWBOT_HOME, so the
session grows by two messages a run. Then the slowest imports of one run of each
(``-X importtime``, cumulative).

``--kernel-only`` / ``--process-only`` run one part. To try a kernel change, copy
kernel/clawbot to a scratch directory, edit it, and run part 1 with
``PYTHONPATH=<scratch parent>`` (the path of the clawbot package used is printed).

Bytecode caching is switched on for the measured processes (PYTHONDONTWRITEBYTECODE is
removed) because that is how an installed clawbot runs; warm-up runs fill the caches.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import functools
import gc
import inspect
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from turn_process import part_process  # the sibling module (bench/ is on sys.path when run)

HISTORY_EXCHANGES = 5  # x 4 messages = a 20-message history
NOOP_SCHEMA = {
    "type": "object",
    "properties": {"note": {"type": "string", "description": "Anything."}},
    "required": ["note"],
    "additionalProperties": False,
}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


# ------------------------------------------------------------------ part 1: in process


def _bench_plugin() -> object:
    from clawbot import PromptSection, Tool, ToolResult
    from clawbot.testing import plugin_from_hooks

    def noop(call: Any) -> ToolResult:
        return ToolResult.text("ok")

    return plugin_from_hooks(
        clawbot_tools=lambda ctx: [Tool("noop", "Does nothing.", NOOP_SCHEMA, noop, summary="Does nothing.")],
        clawbot_prompt_sections=lambda ctx: [PromptSection("bench", "Answer briefly.", order=100)],
    )


def _provider() -> Any:
    from clawbot import LLMProvider, Message, ModelInfo, Role, StopReason, TextBlock, ToolCallBlock, Usage

    class InstantProvider(LLMProvider):
        """Zero latency: a tool call when the last message is the user's, else a text answer."""

        name = "instant"

        def __init__(self) -> None:
            self.calls = 0

        def model_info(self, model_id: str) -> ModelInfo:
            return ModelInfo(model_id, context_window=200_000)

        async def complete(self, request: Any, on_text: Any = None) -> Message:
            self.calls += 1
            if request.messages[-1].role == Role.USER:
                content = (TextBlock("Let me check."), ToolCallBlock(f"call{self.calls}", "noop", {"note": "x"}))
                return _reply(content, request.model, Usage(1200, 20, 1000), StopReason.TOOL_USE)
            return _reply((TextBlock("Done: the check came back fine."),), request.model, Usage(1250, 12, 1000), StopReason.END_TURN)

    return InstantProvider()


NOTES = "- buy milk\n- call Anna about the trip\n- renew the passport\n"
OPEN_ITEMS = "Three things are open: milk, a call to Anna about the trip, and the passport renewal. The passport is the most urgent one. "


def _reply(blocks: tuple[Any, ...], model: str, usage: Any, stop: Any) -> Any:
    """An assistant message of the instant provider."""
    from clawbot import Message, Role

    return Message(Role.ASSISTANT, blocks, provider="instant", model=model, usage=usage, stop_reason=stop)


def _history() -> list[Any]:
    from clawbot import Message, Role, StopReason, TextBlock, ToolCallBlock, Usage

    out = []
    for i in range(HISTORY_EXCHANGES):
        out += [
            Message.user(f"Question {i}: could you look at the notes from yesterday and tell me what is still open?"),
            _reply((TextBlock("I'll look."), ToolCallBlock(f"h{i}", "noop", {"note": f"notes {i}"})), "m", Usage(900, 30, 800), StopReason.TOOL_USE),
            Message(Role.TOOL_RESULT, (TextBlock(NOTES * 3),), tool_call_id=f"h{i}", tool_name="noop"),
            _reply((TextBlock(OPEN_ITEMS * 2),), "m", Usage(1000, 60, 900), StopReason.END_TURN),
        ]
    return out


class Bench:
    """A kernel, a conversation and a seeded session that can be put back before each turn."""

    KEY = "agent:main:main"

    async def setup(self, home: Path, other_sessions: int = 0) -> None:
        from clawbot import Usage
        from clawbot.agent.conversation import Conversation
        from clawbot.agent.models import ModelChoice
        from clawbot.testing.kernels import boot_kernel

        self.kernel = await boot_kernel(home, plugins={"bench": _bench_plugin()})
        self.conversation = Conversation(self.kernel, ModelChoice(_provider(), "instant-1"), "main", services=None)
        store = self.kernel.sessions
        for i in range(other_sessions):
            store.open(f"agent:main:chat{i:04d}")
        session = store.open(self.KEY)
        for message in _history():
            session.transcript.append_message(message)
        store.record_turn(self.KEY, usage=Usage(4000, 200), model="instant/instant-1")
        self.transcript_path = session.transcript.path
        self.index_path = home / "sessions" / "main" / "sessions.json"
        if not self.index_path.exists():
            raise SystemExit(f"the session index is not where the bench expects it: {self.index_path}")
        self.seed = (self.transcript_path.read_bytes(), self.index_path.read_bytes())

    def reset(self) -> None:
        self.transcript_path.write_bytes(self.seed[0])
        self.index_path.write_bytes(self.seed[1])

    async def turn(self, profiler: cProfile.Profile | None = None) -> float:
        self.reset()
        if profiler is not None:
            profiler.enable()
        started = time.perf_counter()
        result = await self.conversation.send(self.KEY, "Is anything else open?", channel="cli")
        elapsed = time.perf_counter() - started
        if profiler is not None:
            profiler.disable()
        if result.tool_calls != 1 or result.iterations != 2:
            raise SystemExit(f"unexpected turn: {result}")
        return elapsed

    async def run(self, turns: int, warmup: int) -> list[float]:
        for _ in range(warmup):
            await self.turn()
        return [await self.turn() for _ in range(turns)]


class StepTimers:
    """Wraps functions of the kernel to add up the time spent in each (inclusive)."""

    def __init__(self) -> None:
        self.total: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._undo: list[tuple[Any, str, Any]] = []

    def wrap(self, owner: Any, attr: str, label: str) -> None:
        original = owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)
        total, calls = self.total, self.calls
        if inspect.iscoroutinefunction(original):

            @functools.wraps(original)
            async def timed(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await original(*args, **kwargs)
                finally:
                    total[label] += time.perf_counter() - started
                    calls[label] += 1
        else:

            @functools.wraps(original)
            def timed(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return original(*args, **kwargs)
                finally:
                    total[label] += time.perf_counter() - started
                    calls[label] += 1

        setattr(owner, attr, timed)
        self._undo.append((owner, attr, original))

    def undo(self) -> None:
        for owner, attr, original in reversed(self._undo):
            setattr(owner, attr, original)


# (label, module, owner in the module or None, attribute); nested rows are indented.
STEPS = [
    ("SessionStore.open (index read + transcript load #1)", "clawbot.sessions.store", "SessionStore", "open"),
    ("  SessionIndex.read (all calls)", "clawbot.sessions.index", "SessionIndex", "read"),
    ("  load_transcript (all calls)", "clawbot.sessions.transcript", None, "load_transcript"),
    ("Transcript.load in the loop (load #2)", "clawbot.sessions.transcript", "Transcript", "load"),
    ("Transcript.append x4 (unstructure, 2 opens each)", "clawbot.sessions.transcript", "Transcript", "append"),
    ("Conversation.system_prompt (prompt sections)", "clawbot.agent.conversation", "Conversation", "system_prompt"),
    ("fit_tool_results x2", "clawbot.agent.conversation", None, "fit_tool_results"),
    ("ModelCaller.complete x2 (guard, profiles, provider)", "clawbot.agent.failover", "ModelCaller", "complete"),
    ("  AuthProfiles.succeeded x2 (auth-state.json write)", "clawbot.auth_profiles", "AuthProfiles", "succeeded"),
    ("  context_guard.check x2", "clawbot.agent.context_guard", None, "check"),
    ("run_tool_call (tool dispatch)", "clawbot.agent.toolbatch", None, "run_tool_call"),
    ("  schema_errors (jsonschema)", "clawbot.agent.toolrun", None, "schema_errors"),
    ("  PluginManager.before_tool_call", "clawbot.plugins.manager", "PluginManager", "before_tool_call"),
    ("SessionStore.record_turn (index read + write)", "clawbot.sessions.store", "SessionStore", "record_turn"),
    ("  SessionIndex.write", "clawbot.sessions.index", "SessionIndex", "write"),
]


async def _breakdown(home: Path, turns: int) -> tuple[float, list[tuple[str, float, float]]]:
    import importlib

    bench = Bench()
    await bench.setup(home)
    await bench.run(20, 0)
    timers = StepTimers()
    for label, module_name, owner_name, attr in STEPS:
        module = importlib.import_module(module_name)
        owner = getattr(module, owner_name) if owner_name else module
        timers.wrap(owner, attr, label)
    # store.open calls load_transcript through its own import of the name
    import clawbot.sessions.store as store_module
    import clawbot.sessions.transcript as transcript_module

    store_module.load_transcript = transcript_module.load_transcript
    try:
        samples = await bench.run(turns, 0)
    finally:
        timers.undo()
        store_module.load_transcript = transcript_module.load_transcript
    rows = [(label, timers.total[label] / turns * 1000, timers.calls[label] / turns) for label, *_ in STEPS]
    return statistics.mean(samples) * 1000, rows


async def _profile(home: Path, turns: int) -> pstats.Stats:
    bench = Bench()
    await bench.setup(home)
    await bench.run(20, 0)
    profiler = cProfile.Profile()
    for _ in range(turns):
        await bench.turn(profiler)
    return pstats.Stats(profiler)


def _short(func: tuple[str, int, str]) -> str:
    path, line, name = func
    if path == "~":
        return name
    parts = Path(path).parts
    for anchor in ("site-packages", "kernel", "lib"):
        if anchor in parts:
            parts = parts[parts.index(anchor) + 1 :]
            break
    return f"{'/'.join(parts[-3:])}:{line}({name})"


def part_kernel(turns: int, warmup: int, breakdown: bool = True) -> None:
    import clawbot

    gc.collect()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, others in (("20-message history, 1 session in the index", 0), ("same, 200 other sessions in the index", 200)):
            results[label] = asyncio.run(_measure(Path(tmp) / f"home{others}", turns, warmup, others))
        locked, unlocked = asyncio.run(_measure_lock_pairs(Path(tmp) / "pairs", turns, warmup))
        results["A/B turn by turn: with the session lock"] = locked
        results["A/B turn by turn: session lock a no-op"] = unlocked
        lock_alone = asyncio.run(_lock_alone(Path(tmp) / "lock", turns * 10))
        if breakdown:
            mean_ms, rows = asyncio.run(_breakdown(Path(tmp) / "breakdown", turns))
            stats = asyncio.run(_profile(Path(tmp) / "profile", min(turns, 200)))

    print(f"Part 1: kernel overhead per turn, in process, {time.strftime('%Y-%m-%d')}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(f"  (clawbot from {Path(clawbot.__file__).parent}; zero-latency provider; one tool round trip per turn;")
    print(f"   same session each turn, put back to its 20-message seed before each; {turns} turns after {warmup} warm-up)")
    print(f"  {'':<46}{'median ms':>10}{'p90 ms':>9}{'p99 ms':>9}")
    for label, samples in results.items():
        ms = [s * 1000 for s in samples]
        print(f"  {label:<46}{statistics.median(ms):>10.3f}{pct(ms, 0.9):>9.3f}{pct(ms, 0.99):>9.3f}")
    ms = [s * 1000 for s in lock_alone]
    print(f"  {'session lock alone (acquire + release)':<46}{statistics.median(ms):>10.3f}{pct(ms, 0.9):>9.3f}{pct(ms, 0.99):>9.3f}")
    print("  target: <= 2 ms median")
    if not breakdown:
        return
    print(f"\n  where a turn's time goes (inclusive ms per turn, own pass with wrapped functions: mean turn {mean_ms:.3f} ms)")
    for label, ms, calls in rows:
        print(f"    {label:<56}{ms:>8.3f} ms  {calls:>4.1f} calls")
    print(f"\n  top functions by own time under cProfile ({min(turns, 200)} turns; profiler overhead included)")
    total = stats.total_tt  # type: ignore[attr-defined]
    ranked = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)  # type: ignore[attr-defined]
    for func, (_cc, nc, tt, ct, _callers) in ranked[:15]:
        print(f"    {tt / total * 100:5.1f}% own  {ct / total * 100:5.1f}% cum  {nc / min(turns, 200):6.1f}/turn  {_short(func)}")


async def _measure(home: Path, turns: int, warmup: int, others: int) -> list[float]:
    bench = Bench()
    await bench.setup(home, others)
    return await bench.run(turns, warmup)


async def _measure_lock_pairs(home: Path, turns: int, warmup: int) -> tuple[list[float], list[float]]:
    """Turns with the cross-process session lock and with it swapped for a no-op, alternating
    turn by turn in one session, so machine noise hits both alike."""
    import contextlib

    import clawbot.sessions.store as store_module

    @contextlib.asynccontextmanager
    async def no_lock(path: Path, key: str) -> Any:
        yield

    real = store_module.turn_lock
    bench = Bench()
    await bench.setup(home)
    await bench.run(0, warmup)
    locked, unlocked = [], []
    try:
        for _ in range(turns):
            store_module.turn_lock = real
            locked.append(await bench.turn())
            store_module.turn_lock = no_lock
            unlocked.append(await bench.turn())
    finally:
        store_module.turn_lock = real
    return locked, unlocked


async def _lock_alone(home: Path, rounds: int) -> list[float]:
    """Uncontended acquire + release of one session's lock, nothing inside."""
    from clawbot.sessions.turnlock import turn_lock, turn_lock_path

    path = turn_lock_path(home / "sessions" / "main", Bench.KEY)
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        async with turn_lock(path, Bench.KEY):
            pass
        samples.append(time.perf_counter() - started)
    return samples[rounds // 10 :]  # the first ones create the directory and the file


# ------------------------------------------------------------------ part 2: whole process


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300, help="measured turns in process (after --warmup)")
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--runs", type=int, default=11, help="measured whole-process runs per command")
    parser.add_argument("--no-breakdown", action="store_true", help="part 1: only the timed turns (for A/B runs)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--kernel-only", action="store_true")
    group.add_argument("--process-only", action="store_true")
    args = parser.parse_args()
    if not args.process_only:
        part_kernel(args.turns, args.warmup, not args.no_breakdown)
    if not args.kernel_only:
        part_process(args.runs)
    print(f"\ncommand: {' '.join(['python', *sys.argv])} (Python {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
