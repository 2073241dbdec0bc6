"""Context management over a long session: what pruning and compaction save, and what is kept.

Run:  cd /work/main && .venv/bin/python bench/context.py [--turns 300] [--window 200000]

A scripted session of N turns runs twice through the real kernel (the installed plugins,
``AgentRuntime`` / ``Conversation``, the Anthropic provider and its SDK) against the fake LLM
server over 127.0.0.1, in a fresh CLAWBOT_HOME each:

* **managed**: the configured context management: pruning (mode cache-ttl), and whatever
  compaction strategy and memory flush are installed and enabled, on a model with
  ``--window`` tokens;
* **unmanaged**: pruning off and a window large enough (``--big-window``) that nothing ever
  overflows or compacts: what the session costs when everything is carried along.

Every ``--every`` turns the user asks to read a log file of 20,000-48,000 characters (the
real ``read`` tool); ten facts are planted in the first turns. Time is simulated (the
conversation's clock): ``--step`` seconds between turns and a ``--pause`` after every
``--burst`` turns, so the prompt cache expires now and then, without sleeping.

The fake model: a tool call to read the log when asked, a short answer otherwise; a summary
request (no tools offered) is answered with a summary naming the facts it can see; a
memory-flush turn (its prompt is the configured one) writes the facts it can see to
memory/<today>.md with the real ``write`` tool, then answers NO_REPLY.

Measured from the requests the fake server received (``on_request``), not from estimates:
the characters of each request body (input tokens at 4 characters a token); the part a
prompt cache could serve (the leading messages identical to the previous request's, when it
came within the TTL: "uncached" is the rest); the system prompts seen per stretch between
compactions (one each means the prefix is byte-identical: cache hits). Afterwards, each fact
is looked for in the session as it now loads (summary and kept messages), in MEMORY.md and
memory/*.md, and through the memory provider's search.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import re
import sys
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import attrs

KEY = "agent:main:main"
MODEL = "claude-bench"
FACTS = [
    ("the locker code", "4821-KESTREL"),
    ("the staging host", "stg-eu-7.internal"),
    ("Anna's flight", "LH-2291"),
    ("the budget cap", "EUR 18,450"),
    ("the cat's vet", "Dr. Okonkwo"),
    ("the wifi password", "plum-otter-93"),
    ("the release date", "2026-03-17"),
    ("the backup bucket", "s3://tern-backups-5"),
    ("the landlord's phone", "+49 30 5550 1842"),
    ("the project codename", "BLUE-MARLIN"),
]


@attrs.define
class Stats:
    requests: int = 0
    chars: int = 0
    uncached_chars: int = 0
    reported_input: int = 0
    largest: int = 0
    summary_calls: int = 0
    flush_requests: int = 0
    failed_turns: int = 0
    compactions: int = 0
    systems: list[set[str]] = attrs.Factory(lambda: [set()])  # system prompts seen, per stretch between compactions
    previous: list[str] = attrs.Factory(list)  # the previous turn request: system, tools, then each message, as JSON
    previous_at: float | None = None
    within_ttl: int = 0  # requests that came within the TTL of the previous one ...
    extending: int = 0  # ... and carried all of it unchanged as their prefix (a full cache hit)


def _texts(body: dict) -> str:
    return json.dumps(body, ensure_ascii=False)


def _last_user_text(body: dict) -> str:
    message = body["messages"][-1]
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") if b.get("type") == "text" else "<result>" for b in content)


def _facts_in(text: str) -> list[tuple[str, str]]:
    return [(what, value) for what, value in FACTS if value in text]


class Model:
    """The fake model's behaviour (see the module docstring), measuring each request."""

    def __init__(self, stats: Stats, clock: Any, ttl: float, flush_prompt: str) -> None:
        # the flush turn's message has today's date where the configured prompt has YYYY-MM-DD
        self.stats, self.clock, self.ttl, self.flush_prompt = stats, clock, ttl, flush_prompt.split("YYYY-MM-DD")[0]

    def __call__(self, request: Any) -> dict:
        body = request.body
        text = _texts(body)
        self.stats.requests += 1
        self.stats.chars += len(text)
        self.stats.largest = max(self.stats.largest, len(text))
        if not body.get("tools"):  # a summary call: the history in, no tools offered
            self.stats.summary_calls += 1
            found = _facts_in(text)
            facts = "; ".join(f"{what}: {value}" for what, value in found)
            return {"text": f"Summary of the earlier conversation. Facts the user gave: {facts}. Logs were read and looked fine."}
        last = _last_user_text(body)
        if self.flush_prompt and self.flush_prompt in _texts(body["messages"][-3:]):
            self.stats.flush_requests += 1
            self._measure(body, text)
            if self.flush_prompt not in last:  # the result of its own write: done
                return {"text": "NO_REPLY"}
            notes = "".join(f"- {what}: {value}\n" for what, value in _facts_in(text)) or "- nothing new\n"
            named = re.search(r"memory/\d{4}-\d{2}-\d{2}\.md", last)  # the day the flush prompt names
            path = named.group(0) if named else f"memory/{date.today():%Y-%m-%d}.md"
            call = {"name": "write", "arguments": {"path": path, "content": f"# Notes\n\n{notes}"}}
            return {"tool_calls": [call]}
        self._measure(body, text)
        if "<result>" in last:
            return {"text": "I read the log: the build passed, two warnings about deprecated flags, nothing else stands out. " * 2}
        if "please read logs/" in last:
            path = last.split("please read ", 1)[1].split()[0]
            return {"tool_calls": [{"name": "read", "arguments": {"path": path, "limit": 100000}}]}
        return {"text": "Noted. I will keep that in mind and come back to it when it matters for the next steps."}

    def _measure(self, body: dict, text: str) -> None:
        parts = [json.dumps(body.get("system")), json.dumps(body.get("tools")), *(json.dumps(m) for m in body["messages"])]
        now = self.clock()
        cached = 0
        if self.stats.previous_at is not None and now - self.stats.previous_at < self.ttl:
            self.stats.within_ttl += 1
            for mine, theirs in zip(parts, self.stats.previous, strict=False):
                if mine != theirs:
                    break
                cached += len(mine)
            self.stats.extending += cached == sum(len(p) for p in self.stats.previous)
        self.stats.uncached_chars += len(text) - cached
        self.stats.previous, self.stats.previous_at = parts, now
        # the part the provider caches: the system prompt's first block (the flush turn adds
        # its note after the cache boundary, in the second)
        system = body.get("system")
        cached = system[0] if isinstance(system, list) and system else system
        self.stats.systems[-1].add(hashlib.sha256(json.dumps(cached).encode()).hexdigest())


def _user_text(turn: int, every: int, rng: random.Random) -> str:
    if turn <= len(FACTS):
        what, value = FACTS[turn - 1]
        return f"Please remember this: {what} is {value}."
    if turn % every == 0:
        return f"please read logs/run{turn}.log and tell me if the build passed"
    return rng.choice(["How is it going?", "What should I do next?", "Any news on the deployment?", "Thanks, continue."])


def _write_logs(workspace: Path, turns: int, every: int, rng: random.Random) -> None:
    (workspace / "logs").mkdir(parents=True, exist_ok=True)
    for turn in range(every, turns + 1, every):
        size = rng.randint(20_000, 48_000)
        lines, total = [], 0
        while total < size:
            line = f"[{total:08d}] step {rng.randint(1, 999)} compiled module_{rng.randint(1, 9999)} in {rng.random():.3f}s ok"
            lines.append(line)
            total += len(line) + 1
        (workspace / "logs" / f"run{turn}.log").write_text("\n".join(lines) + "\nBUILD PASSED\n", encoding="utf-8")


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


async def run_session(args: argparse.Namespace, managed: bool, base_url: str, fake: Any, home: Path) -> tuple[Stats, dict[str, Any]]:
    from clawbot import LLMProvider, ModelInfo, ProviderError
    from clawbot.agent.models import ModelChoice
    from clawbot.agent.runtime import AgentRuntime
    from clawbot.testing import plugin_from_hooks
    from clawbot.testing.kernels import boot_kernel

    workspace = home / "workspace"
    rng = random.Random(args.seed)
    _write_logs(workspace, args.turns, args.every, rng)
    pruning = "" if managed else '\n[agents.defaults.context_pruning]\nmode = "off"\n'
    config = (
        f'[agents.defaults]\nworkspace = "{workspace.as_posix()}"\n[agents.defaults.model]\nprimary = "anthropic/{MODEL}"\n'
        f'[providers.anthropic]\nbase_url = "{base_url}"\napi_key = "sk-bench"\n{pruning}'
    )
    stats = Stats()
    kernel = await boot_kernel(
        home,
        config=config,
        load_entrypoints=True,
        plugins={"bench": plugin_from_hooks(clawbot_after_compaction=lambda event: _compacted(stats))},
    )
    settings = kernel.config.agents.defaults
    window = args.window if managed else args.big_window
    flush = getattr(getattr(settings, "compaction", None), "memory_flush", None)
    clock = Clock()
    fake.reset()
    model = Model(stats, clock, settings.context_pruning.ttl_seconds, flush.prompt if flush is not None and flush.enabled else "")
    fake.queue(*([model] * (args.turns * 6)))

    class Windowed(LLMProvider):
        """The real provider, reporting the window this run is about."""

        name = "anthropic"

        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def model_info(self, model_id: str) -> ModelInfo:
            return attrs.evolve(self.inner.model_info(model_id), context_window=window)

        async def complete(self, request: Any, on_text: Any = None) -> Any:
            return await self.inner.complete(request, on_text)

    runtime = AgentRuntime(kernel)
    provider = Windowed(kernel.llm_providers.get("anthropic"))
    conversation = await runtime.conversation("main", chain=[ModelChoice(provider, MODEL)])
    conversation.clock = lambda: datetime.fromtimestamp(clock(), UTC)
    started = time.perf_counter()
    for turn in range(1, args.turns + 1):
        try:
            await conversation.send(KEY, _user_text(turn, args.every, rng))
        except ProviderError as exc:
            stats.failed_turns += 1
            if stats.failed_turns <= 3:
                print(f"  turn {turn} failed: {exc}", file=sys.stderr)
        fake.requests.clear()  # the bodies are measured as they arrive; keeping them costs gigabytes
        clock.now += args.pause if turn % args.burst == 0 else args.step
    extra = {"seconds": time.perf_counter() - started, "strategy": getattr(kernel.compaction_strategy, "name", None)}
    extra["facts"] = await _recoverable(kernel, workspace)
    return stats, extra


def _compacted(stats: Stats) -> None:
    stats.compactions += 1
    stats.systems.append(set())


async def _recoverable(kernel: Any, workspace: Path) -> dict[str, Any]:
    """Where each planted fact can still be found."""
    session = kernel.sessions.open(KEY)
    history = "\n".join(m.text for m in (session.loaded or session.transcript.load()).messages())
    files = [workspace / "MEMORY.md", *sorted((workspace / "memory").glob("*.md"))]
    memory = "\n".join(p.read_text(encoding="utf-8") for p in files if p.exists())
    searched, search_note = {}, ""
    provider = getattr(kernel, "memory_provider", None)
    if provider is None:
        search_note = "no memory provider installed"
    for what, value in FACTS:
        if provider is not None:
            try:
                found = await provider.search(f"what is {what}?", agent_id="main")
                searched[value] = any(value in hit.snippet for hit in found.hits)
            except Exception as exc:  # noqa: BLE001 - report whatever stops the search
                search_note = f"memory search failed: {type(exc).__name__}: {exc}"
                searched[value] = False
    where = {}
    for _, value in FACTS:
        found_in = (("session", value in history), ("files", value in memory), ("search", searched.get(value)))
        where[value] = [name for name, hit in found_in if hit]
    return {"where": where, "search_note": search_note}


def _tokens(chars: int) -> str:
    return f"{chars / 4 / 1e6:,.2f} M"


def report(args: argparse.Namespace, runs: dict[str, tuple[Stats, dict[str, Any]]]) -> None:
    managed, extra = runs["managed"]
    plain, plain_extra = runs["unmanaged"]
    print(f"\n{args.turns} turns, a log of 20-48k characters every {args.every} turns,", end=" ")
    print(f"{args.step:.0f} s between turns, a {args.pause:.0f} s pause every {args.burst}")
    print(f"managed: window {args.window:,} tokens, pruning cache-ttl, compaction strategy: {extra['strategy'] or 'none (no compaction strategy installed)'}")
    print(f"unmanaged: window {args.big_window:,} tokens, pruning off, nothing compacts\n")
    rows = [
        ("model requests", lambda s: f"{s.requests:,}"),
        ("input tokens sent (request bytes / 4)", lambda s: _tokens(s.chars)),
        ("  of which a prompt cache could not serve", lambda s: _tokens(s.uncached_chars)),
        ("requests within the TTL extending the last", lambda s: f"{s.extending}/{s.within_ttl}"),
        ("largest request (tokens)", lambda s: f"{s.largest / 4:,.0f}"),
        ("compactions", lambda s: f"{s.compactions}"),
        ("summary calls", lambda s: f"{s.summary_calls}"),
        ("memory flush requests", lambda s: f"{s.flush_requests}"),
        ("failed turns", lambda s: f"{s.failed_turns}"),
        ("cached system prompt prefixes per stretch (max)", lambda s: f"{max(len(x) for x in s.systems)}"),
    ]
    print(f"{'':44} {'managed':>14} {'unmanaged':>14}")
    for label, cell in rows:
        print(f"{label:44} {cell(managed):>14} {cell(plain):>14}")
    print(f"{'wall time (s)':44} {extra['seconds']:>14.1f} {plain_extra['seconds']:>14.1f}")
    ratio = plain.chars / managed.chars if managed.chars else float("inf")
    uncached = plain.uncached_chars / managed.uncached_chars if managed.uncached_chars else float("inf")
    print(f"\ninput tokens: {ratio:.1f}x fewer managed (target >= 3x); uncached: {uncached:.1f}x fewer")
    stable = all(len(x) <= 1 for x in managed.systems)
    print(f"cached system prompt prefix byte-identical across the turns of each stretch between compactions: {'yes' if stable else 'NO'}")
    where = extra["facts"]["where"]
    kept = sum(1 for places in where.values() if places)
    print(f"planted facts recoverable (managed): {kept}/{len(FACTS)} ({100 * kept / len(FACTS):.0f}%, target 100%)")
    for source in ("session", "files", "search"):
        print(f"  in {source}: {sum(1 for places in where.values() if source in places)}/{len(FACTS)}")
    if managed.compactions == 0:
        print("  (nothing was compacted: the facts are still in the session's own messages)")
    if not managed.flush_requests:
        print("  no memory flush turn ran")
    if extra["facts"]["search_note"]:
        print(f"  {extra['facts']['search_note']}")


async def main_async(args: argparse.Namespace) -> None:
    from clawbot.testing.fake_llm import FakeLLM

    fake = FakeLLM()
    runs = {}
    with fake.serve_in_thread() as base_url:
        for name in ("managed", "unmanaged"):
            with tempfile.TemporaryDirectory(prefix=f"clawbot-bench-context-{name}-") as home:
                print(f"running the {name} session ...", file=sys.stderr)
                runs[name] = await run_session(args, name == "managed", base_url, fake, Path(home))
    report(args, runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--every", type=int, default=4, help="a large log is read every this many turns")
    parser.add_argument("--window", type=int, default=200_000, help="the managed run's context window, in tokens")
    parser.add_argument("--big-window", type=int, default=10_000_000, help="the unmanaged run's window: large enough for everything")
    parser.add_argument("--step", type=float, default=20.0, help="seconds between turns")
    parser.add_argument("--pause", type=float, default=600.0, help="seconds of the pause after each burst")
    parser.add_argument("--burst", type=int, default=8, help="turns between pauses")
    parser.add_argument("--seed", type=int, default=14)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
