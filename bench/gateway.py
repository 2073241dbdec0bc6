"""Gateway throughput: many chats at once through the fake channel, a provider at 50 ms.

Run:  cd /work/main && env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/gateway.py [--sessions 1000] [--runs 3] [--profile]

One gateway (clawbot.gateway.runner.Gateway with the real AgentRuntime responder: a whole
agent turn per message, transcript and session index written) serves a FakeChannel
(clawbot.testing.fake_channel); ``--sessions`` direct chats (``session.dm_scope =
"per-peer"``: a session each) send ``--messages`` messages in turn (default: one each),
arriving at ``--rate`` messages per second (default 300, the throughput target; 0: all at
once). The model is an in-process
provider whose ``complete()`` sleeps 50 ms and answers a short text, so what is measured
beyond 50 ms is clawbot's own work and its queueing. ``gateway.max_concurrent`` is raised to
the number of sessions (``--cap`` overrides it), and the queue's debounce is 0.

Printed per run: throughput (turns/s, from the first message's arrival to the last reply
out), added latency p50/p99 (a message's scheduled arrival to its reply out, minus the
provider's 50 ms: a gateway too busy to take a message in on time pays for it here) and the
process's peak RSS; then the median of the runs. A contrast run at the default
``max_concurrent = 4`` follows with ``--contrast N`` sessions (0: none). ``--profile`` adds
one run under cProfile and prints the top functions by own and cumulative time.
``--gateway-only`` answers with a responder that just awaits the provider (no agent turn,
no transcript or session index): the lanes, the channel and the reply path alone.

Targets: >= 300 turns/s on 2 cores, added p99 <= 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PROVIDER_LATENCY_S = 0.050


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _provider() -> Any:
    from clawbot import LLMProvider, Message, ModelInfo, Role, StopReason, TextBlock, Usage

    class SlowProvider(LLMProvider):
        """50 ms per request, a short answer: a remote model without the network."""

        name = "bench"

        def model_info(self, model_id: str) -> ModelInfo:
            return ModelInfo(model_id, context_window=200_000)

        async def complete(self, request: Any, on_text: Any = None) -> Message:
            await asyncio.sleep(PROVIDER_LATENCY_S)
            text = (TextBlock("Noted, thanks."),)
            return Message(Role.ASSISTANT, text, provider="bench", model=request.model, usage=Usage(900, 5), stop_reason=StopReason.END_TURN)

    return SlowProvider()


def _timed_channel() -> Any:
    from clawbot.testing import FakeChannel

    class TimedChannel(FakeChannel):
        """Records when each chat's reply went out."""

        def __init__(self) -> None:
            super().__init__("bench")
            self.replied: dict[str | None, float] = {}
            self.all_replied = asyncio.Event()
            self.expected = 0

        async def send(self, message: Any) -> None:
            self.replied[message.reply_to_id] = time.perf_counter()
            if len(self.replied) >= self.expected:
                self.all_replied.set()

    return TimedChannel()


async def one_run(
    sessions: int,
    cap: int,
    home: Path,
    profiler: cProfile.Profile | None = None,
    *,
    messages: int = 0,
    rate: float = 0.0,
    gateway_only: bool = False,
) -> dict[str, float]:
    from clawbot.agent.runtime import AgentRuntime
    from clawbot.gateway.runner import Gateway
    from clawbot.testing import plugin_from_hooks
    from clawbot.testing.kernels import boot_kernel

    config = (
        '[agents.defaults.model]\nprimary = "bench/fast-1"\n\n[session]\ndm_scope = "per-peer"\n\n'
        f"[gateway]\ncontrol_api = false\nmax_concurrent = {cap}\n\n[gateway.queue]\ndebounce_ms = 0\n"
    )
    provider = _provider()
    kernel = await boot_kernel(home, plugins={"bench": plugin_from_hooks(clawbot_llm_providers=lambda ctx: [provider])}, config=config)
    runtime = AgentRuntime(kernel)
    await runtime.conversation("main")
    channel = _timed_channel()
    messages = messages or sessions
    channel.expected = messages
    if gateway_only:
        from clawbot import Message, ModelRequest, SystemPrompt

        async def respond(message: Any, session_key: str) -> str | None:
            request = ModelRequest(model="fast-1", system=SystemPrompt("Answer briefly."), messages=(Message.user(message.text),))
            return (await provider.complete(request)).text

        gateway = Gateway(kernel, respond, "main")
    else:
        gateway = Gateway(kernel, runtime.respond, "main", runtime=runtime)
    served = asyncio.create_task(gateway.run([channel]))
    await channel.wait_started()
    sent: dict[str, float] = {}
    if profiler is not None:
        profiler.enable()
    started = time.perf_counter()
    for i in range(messages):
        due = started + (i / rate if rate else 0.0)
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        sent[str(i)] = due
        text = "Please remember that the meeting moved to Thursday."
        await channel.inject(text, peer_id=f"user-{i % sessions:05d}", message_id=str(i), wait=False)
    await asyncio.wait_for(channel.all_replied.wait(), 1200)
    elapsed = max(channel.replied.values()) - started
    if profiler is not None:
        profiler.disable()
    gateway.stop()
    await served
    await runtime.aclose()
    await kernel.aclose()
    added = [(channel.replied[p] - sent[p] - PROVIDER_LATENCY_S) * 1000 for p in sent]
    return {
        "turns_per_s": messages / elapsed,
        "p50_ms": pct(added, 0.50),
        "p99_ms": pct(added, 0.99),
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _line(label: str, r: dict[str, float]) -> str:
    return f"{label:<26} {r['turns_per_s']:8.0f} turns/s   added p50 {r['p50_ms']:6.1f} ms   p99 {r['p99_ms']:6.1f} ms   peak RSS {r['rss_mb']:6.0f} MB"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--messages", type=int, default=0, help="messages in all (default: one per session)")
    parser.add_argument("--rate", type=float, default=300.0, help="arrivals per second (0: all at once)")
    parser.add_argument("--cap", type=int, default=0, help="gateway.max_concurrent (default: --sessions)")
    parser.add_argument("--contrast", type=int, default=200, help="sessions for the run at max_concurrent = 4 (0: none)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--gateway-only", action="store_true", help="a responder that only awaits the provider")
    args = parser.parse_args()
    import clawbot

    print(f"clawbot from {Path(clawbot.__file__).parent}; python {sys.version.split()[0]}")
    print(f"arrivals: {args.rate:g}/s" if args.rate else "arrivals: all at once")
    cap = args.cap or args.sessions
    with tempfile.TemporaryDirectory(prefix="clawbot-bench-gateway-") as scratch:
        root = Path(scratch)
        only = args.gateway_only
        await one_run(50, 50, root / "warmup", gateway_only=only)  # imports, first-use caches
        results = []
        for run in range(args.runs):
            result = await one_run(args.sessions, cap, root / f"run{run}", messages=args.messages, rate=args.rate, gateway_only=only)
            print(_line(f"run {run + 1}: {args.sessions} chats, cap {cap}", result))
            results.append(result)
        median = {key: statistics.median(r[key] for r in results) for key in results[0]}
        print(_line(f"median of {args.runs}", median))
        if args.contrast:
            result = await one_run(args.contrast, 4, root / "contrast", rate=args.rate, gateway_only=only)
            print(_line(f"{args.contrast} chats, cap 4 (default)", result))
        if args.profile:
            profiler = cProfile.Profile()
            await one_run(args.sessions, cap, root / "profiled", profiler, messages=args.messages, rate=args.rate, gateway_only=only)
            for order in ("tottime", "cumulative"):
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(25)
                print(f"\n--- cProfile, by {order} ---")
                print("\n".join(out.getvalue().splitlines()[6:40]))


if __name__ == "__main__":
    asyncio.run(main())
