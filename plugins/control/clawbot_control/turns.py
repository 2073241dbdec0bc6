"""A turn and an approval answer, as the control API runs them for a client.

:func:`turn_events` validates the request, submits the text to the gateway as the owner's
message in the session the client named (a name of the agent's own or a full key; default
the agent's main session, as ``clawbot agent``), and yields the events of
docs/control-api.md until the turn is over: ``start``, ``text``, ``tool_call``,
``notice``, ``reply``, ``error``, ``done``. :func:`answer_approval` answers through the same
path as a chat's ``/approve``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from clawbot.types import ApprovalDecision

if TYPE_CHECKING:
    from clawbot_control.api_channel import ApiChannel
    from clawbot_control.streams import TurnStream

#: the answers ``POST /v1/approvals/{id}`` takes; ``show`` reveals what a notice left out (needed before allowing it)
CHOICES = (*(d.value for d in (ApprovalDecision.ALLOW_ONCE, ApprovalDecision.ALLOW_ALWAYS, ApprovalDecision.DENY)), "show")


class BadRequest(Exception):
    """A request the client must fix; the message names the key."""


def resolve_target(channel: ApiChannel, body: dict[str, Any]) -> tuple[str, str, str]:
    """(text, agent id, session key) of a turn request, or :class:`BadRequest`."""
    text = body.get("text")
    if not isinstance(text, str) or not text.strip():
        raise BadRequest("text: a non-empty string is required")
    agent_id = body.get("agent") or None
    if agent_id is not None and not isinstance(agent_id, str):
        raise BadRequest("agent: must be a string")
    session = body.get("session") or None
    if session is not None and not isinstance(session, str):
        raise BadRequest("session: must be a string (a name like 'main' or a full key)")
    try:
        agent_id, session_key = channel.control.session_key(session, agent_id)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    return text, agent_id, session_key


async def start_event(channel: ApiChannel, text: str, agent_id: str, session_key: str) -> dict[str, Any]:
    """What the client prints first: the agent, the session, the model and (for a command) its name."""
    preview = await channel.control.preview(text, agent_id, session_key)
    event: dict[str, Any] = {"type": "start", "agent": agent_id, "session": session_key, "command": preview.command}
    if preview.model is not None:
        event["model"] = preview.model
    if preview.line is not None:
        event["line"] = preview.line
    return event


def _totals(info: dict[str, Any] | None) -> tuple[dict[str, int], float | None, int]:
    if info is None:
        return {}, None, 0
    return dict(info["usage"]), info["cost_usd"], info["turns"]


def result_of(channel: ApiChannel, stream: TurnStream, before: dict[str, Any] | None) -> dict[str, Any]:
    """The turn's figures, from the session index before and after it (as ``--json`` prints them)."""
    info = channel.control.session_totals(stream.session_key)
    usage_before, cost_before, _ = _totals(before)
    usage_after, cost_after, turns = _totals(info)
    usage: dict[str, float] = {key: value - usage_before.get(key, 0) for key, value in usage_after.items()}
    if usage:
        prompt = usage["input_tokens"] + usage["cache_read_tokens"] + usage["cache_write_tokens"]
        usage["cache_hit_share"] = round(usage["cache_read_tokens"] / prompt, 4) if prompt else 0.0
    cost = None if cost_after is None else cost_after - (cost_before or 0.0)
    totals = {"turns": turns, "usage": usage_after, "cost_usd": cost_after} if info is not None else None
    return {
        "model": info["model"] if info is not None else None,
        "iterations": stream.tool_batches + 1,
        "tool_calls": stream.tool_calls,
        "usage": usage,
        "cost_usd": cost,
        "session_totals": totals,
    }


def unanswered(channel: ApiChannel, stream: TurnStream) -> str | None:
    """Why the client's message got no reply (dropped, stopped, clawbot stopping), if so."""
    control = channel.control
    return next((why for turn in stream.turns if (why := control.why_unanswered(turn)) is not None), None)


async def turn_events(channel: ApiChannel, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    try:
        text, agent_id, session_key = resolve_target(channel, body)
    except BadRequest as exc:
        yield {"type": "error", "text": str(exc), "code": 2}
        yield {"type": "done"}
        return
    start = await start_event(channel, text, agent_id, session_key)
    yield start
    stream = channel.open_stream(session_key, agent_id)
    before = channel.control.session_totals(session_key)
    try:
        await channel.submit(stream, text)
        ended = asyncio.create_task(stream.until_over(lambda: channel.waiting(stream), lambda: channel.control.quiet(session_key)))
        answered = False
        try:
            while True:
                getter = asyncio.create_task(stream.events.get())
                await asyncio.wait({getter, ended}, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    event = getter.result()
                else:
                    getter.cancel()
                    if stream.events.empty():
                        break
                    event = stream.events.get_nowait()
                answered = answered or event.get("type") in ("reply", "error")
                yield event
        finally:
            ended.cancel()
        done: dict[str, Any] = {"type": "done"}
        if start.get("command") is None:
            why = None if answered else unanswered(channel, stream)
            if why is not None:  # the client exits non-zero, saying why
                yield {"type": "error", "text": f"no reply: {why}", "code": 1}
            done["result"] = result_of(channel, stream, before)
        yield done
    finally:
        channel.close_stream(stream)


async def answer_approval(channel: ApiChannel, approval_id: str, choice: Any) -> tuple[int, dict[str, Any]]:
    """(HTTP status, body): the answer goes through ``/approve`` in the session that asked."""
    if choice not in CHOICES:
        return 400, {"error": f"choice: one of {', '.join(CHOICES)}"}
    session_key = next((waiting.session_key for waiting in channel.control.waiting_approvals() if waiting.offer.id == approval_id), None)
    if session_key is None:
        return 404, {"error": f"no pending approval {approval_id[:40]!r} (it may have expired or been answered already)"}
    text = f"/deny {approval_id}" if choice == ApprovalDecision.DENY.value else f"/approve {approval_id} {choice}"
    offering = channel.stream_offering(approval_id)
    allows = choice not in (ApprovalDecision.DENY.value, "show")
    if offering is not None and allows:  # counted first: the command may report back before this returns
        offering.follow_ups_due += 1
    stream = channel.open_stream(session_key, "")
    try:
        await channel.submit(stream, text)
        await stream.until_over(frozenset)
        replies = []
        while not stream.events.empty():
            replies.append(stream.events.get_nowait().get("text", ""))
    finally:
        channel.close_stream(stream)
    answered = approval_id not in channel.control.approvals_waiting(session_key)
    if offering is not None and allows and not answered:
        offering.follow_ups_due -= 1  # refused (shown first, say): nothing will report back
    return (200 if answered or choice == "show" else 409), {"id": approval_id, "choice": choice, "answered": answered, "text": "\n".join(replies)}
