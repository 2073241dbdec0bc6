"""``clawbot_compaction_near``: plugins act on a turn's history before a compaction summarises it.

Before each model request of a turn the request is estimated (:mod:`clawbot.agent.compaction`);
the first time in a turn it passes the line before compaction
(:meth:`~clawbot.agent.token_budget.ContextLimits.flush_line`), where a compaction strategy
could follow, the kernel awaits the hook with a :class:`~clawbot.types.CompactionNearEvent`:
a copy of the history, whether it holds the owner's word alone, the user's date, and a side
exchange on the turn's caller, profile and tools (the note after the system prompt's cache
boundary, so the cached prefix stays the same), which joins neither the history nor the chat.
What the plugins spent counts in the turn's usage. The memory plugin's flush is the one user.

Memory feeds the owner's turns, so the event says whether notes drawn from the history would
carry the owner's word alone (:func:`owner_only`): the kernel knows who wrote each message and
what each compaction summary stands for (``others_wrote`` on its entry).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import attrs

from clawbot.agent.clock import Clock, local_date, user_timezone
from clawbot.agent.compaction import OTHERS_WROTE, others_wrote
from clawbot.agent.user_turns import is_summary
from clawbot.kernel import Kernel
from clawbot.sessions.keys import session_kind
from clawbot.sessions.store import Session
from clawbot.sessions.transcript import Entry
from clawbot.types import CompactionNearEvent, Message, SystemPrompt, TurnTrust, Usage

#: one model call beside the turn, with a note after the system prompt's cache boundary
Ask = Callable[[list[Message], str], Awaitable[Message]]
#: runs a reply's tool calls with the turn's tools, appending the results to a history
RunTools = Callable[[Message, list[Message]], Awaitable[None]]


def with_note(system: SystemPrompt, note: str) -> SystemPrompt:
    """``system`` with ``note`` after its cache boundary (the cached prefix stays the same)."""
    if not note.strip():
        return system
    return attrs.evolve(system, volatile=f"{system.volatile}\n\n{note}" if system.volatile else note)


def owner_only(session_key: str, messages: list[Message], trust: TurnTrust, entries: Iterable[Entry] = ()) -> bool:
    """Whether notes drawn from ``messages`` would carry the owner's word alone: an owner's
    turn, not in a group's session, with no user message in the history from someone else,
    and no summary in it of a part someone else wrote in (``entries``: the transcript's; a
    summary without its compaction entry counts as one: nobody can tell whose words it holds)."""
    if trust is not TurnTrust.OWNER or session_kind(session_key) == "group":
        return False
    summary = next((e for e in reversed(list(entries)) if e.type == "compaction"), None)
    if summary is not None and summary.data.get(OTHERS_WROTE) is not False:
        return False
    if summary is None and any(is_summary(m) for m in messages):
        return False
    return not others_wrote(messages)


def recorded_since_compaction(entries: Iterable[Entry], kind: str) -> bool:
    """Whether a ``custom`` entry of ``kind`` follows the last compaction entry."""
    done = False
    for entry in entries:
        if entry.type == "compaction":
            done = False
        elif entry.type == "custom" and entry.data.get("kind") == kind:
            done = True
    return done


@attrs.frozen
class NearingTurn:
    """The turn whose history nears compaction, as the hook's event describes it."""

    kernel: Kernel
    agent_id: str
    session_key: str
    session: Session
    trust: TurnTrust
    now: Clock
    ask: Ask
    run_tools: RunTools


async def compaction_near(turn: NearingTurn, messages: list[Message], tokens: int, threshold: int) -> Usage | None:
    """Await ``clawbot_compaction_near``: what its implementations spent (``None``: nothing ran).
    ``messages`` itself is left as it was."""
    kernel, session = turn.kernel, turn.session
    entries = session.transcript.load().entries

    def record(kind: str, **data: Any) -> None:
        if data.keys() & {"message", "kept"}:  # the transcript's own fields, not a custom entry's
            raise ValueError(f"a custom transcript entry cannot have the fields message or kept (got {sorted(data)})")
        session.transcript.append("custom", kind=kind, **data)

    zone = user_timezone(kernel.config.agents.defaults.timezone)[0]
    event = CompactionNearEvent(
        turn.agent_id,
        turn.session_key,
        session.info.session_id,
        tokens=tokens,
        threshold=threshold,
        messages=tuple(messages),
        owner_only=owner_only(turn.session_key, messages, turn.trust, entries),
        today=local_date(turn.now(), zone),
        ask=turn.ask,
        run_tools=turn.run_tools,
        recorded_this_cycle=lambda kind: recorded_since_compaction(entries, kind),
        record=record,
        clawbot=kernel.settings,
    )
    spent = [usage for usage in await _each_bounded(kernel, event) if isinstance(usage, Usage)]
    return sum(spent[1:], spent[0]) if spent else None


async def _each_bounded(kernel: Kernel, event: CompactionNearEvent) -> list[object]:
    """Every implementation's result, each given ``near_timeout_seconds``: one plugin that
    hangs is its own recorded failure, never a turn that hangs."""
    hook, limit = "clawbot_compaction_near", kernel.config.agents.defaults.compaction.near_timeout_seconds
    results = []
    for impl in kernel.plugins.impls(hook):
        try:
            ok, result = await asyncio.wait_for(kernel.plugins.call_impl(hook, impl, event=event), limit)
        except TimeoutError:  # the plugin's own errors never get here: call_impl records them
            message = f"did not finish within {limit} s (agents.defaults.compaction.near_timeout_seconds); the turn went on without it"
            kernel.plugins.record_failure(impl.plugin_name, hook, TimeoutError(message))
            continue
        if ok:
            results.append(result)
    return results
