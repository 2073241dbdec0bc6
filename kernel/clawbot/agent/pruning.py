"""Shrinking old tool results in the request once the provider's prompt cache has expired.

Providers cache a prompt's prefix for a few minutes (``ttl_seconds``); after a pause the next
request pays to cache the whole history again, so that is the moment to make it smaller. When
the session's last model request is older than the TTL (mode ``cache-ttl``), the tool results
older than the newest ``keep_last_assistants`` assistant messages are pruned in the request:

* nothing, while those results hold fewer than ``min_prunable_tool_chars`` characters or the
  whole context is within ``soft_trim_ratio`` of the window (both in characters, ~4 a token);
* each one longer than ``soft_trim.max_chars`` keeps its head and tail with a marker saying
  how much was cut (image blocks are kept as they are);
* while the context is still above ``hard_clear_ratio``, the oldest are replaced whole by
  ``hard_clear.placeholder`` (images too).

Only the request changes: the transcript keeps every result whole. The decision (which
results, trimmed or cleared) is kept with the time of the last request in a small state file
beside the transcript, and every request until the next expiry applies the same decision, so
the pruned prefix is byte-identical from request to request and the provider's cache keeps
hitting; it survives a restart (``clawbot agent -m`` is a process per turn).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

import attrs

from clawbot.config.context_schema import ContextPruningConfig, SoftTrimConfig
from clawbot.statefile import atomic_write_json, is_number, read_state, report_once
from clawbot.tokens import chars_for_tokens
from clawbot.types import ImageBlock, Message, Role, TextBlock, ThinkingBlock, ToolCallBlock

log = logging.getLogger(__name__)

TRIM, CLEAR = "trim", "clear"
IMAGE_CHARS = chars_for_tokens(1600)
"""What an image counts for in the context's size (about 1,600 tokens, as the context guard)."""


def message_chars(message: Message) -> int:
    chars = 0
    for block in message.content:
        if isinstance(block, TextBlock | ThinkingBlock):
            chars += len(block.text)
        elif isinstance(block, ToolCallBlock):
            chars += len(block.name) + len(block.raw_arguments or json.dumps(block.arguments))
        elif isinstance(block, ImageBlock):
            chars += IMAGE_CHARS
    return chars


def _cutoff(messages: Sequence[Message], keep_last_assistants: int) -> int | None:
    """Where the protected tail starts (the newest N assistant messages and what follows);
    ``None`` when there are not that many assistant messages yet."""
    if keep_last_assistants == 0:
        return len(messages)
    seen = 0
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == Role.ASSISTANT:
            seen += 1
            if seen == keep_last_assistants:
                return index
    return None


def _key(index: int, message: Message) -> str:
    # The position and the call id together: a stored decision applies to the same result
    # only (after a compaction the positions change, and the ids no longer match).
    return f"{index}:{message.tool_call_id}"


def soft_trimmed(message: Message, soft: SoftTrimConfig) -> Message | None:
    """The result with its text cut to head + marker + tail, images kept; ``None`` if short."""
    text = message.text
    if len(text) <= soft.max_chars or soft.head_chars + soft.tail_chars >= len(text):
        return None
    head, tail = text[: soft.head_chars], text[len(text) - soft.tail_chars :] if soft.tail_chars else ""
    cut = len(text) - len(head) - len(tail)
    marker = f"\n... [{cut:,} of {len(text):,} characters of this old tool result cut] ...\n"
    images = tuple(b for b in message.content if isinstance(b, ImageBlock))
    return attrs.evolve(message, content=(TextBlock(head + marker + tail), *images))


def cleared(message: Message, placeholder: str) -> Message:
    return attrs.evolve(message, content=(TextBlock(placeholder),))


def _could_prune(messages: Sequence[Message], config: ContextPruningConfig) -> bool:
    """Whether the tool results hold enough to prune, counting all of them (an upper bound of
    what :func:`plan_pruning` would consider)."""
    return sum(message_chars(m) for m in messages if m.role == Role.TOOL_RESULT) >= config.min_prunable_tool_chars


def plan_pruning(messages: Sequence[Message], config: ContextPruningConfig, window_tokens: int, base_chars: int = 0) -> dict[str, str]:
    """Which old tool results to trim or clear (see the module docstring), by :func:`_key`.

    ``base_chars``: what the request holds besides the messages (the system prompt).
    """
    cutoff = _cutoff(messages, config.keep_last_assistants)
    if cutoff is None:
        return {}
    first_user = next((i for i, m in enumerate(messages) if m.role == Role.USER), len(messages))
    prunable = [i for i in range(first_user, cutoff) if messages[i].role == Role.TOOL_RESULT and messages[i].tool_call_id]
    if sum(message_chars(messages[i]) for i in prunable) < config.min_prunable_tool_chars:
        return {}
    window = chars_for_tokens(window_tokens)
    total = base_chars + sum(message_chars(m) for m in messages)
    if total <= config.soft_trim_ratio * window:
        return {}
    plan: dict[str, str] = {}
    for index in prunable:
        trimmed = soft_trimmed(messages[index], config.soft_trim)
        if trimmed is not None:
            total += message_chars(trimmed) - message_chars(messages[index])
            plan[_key(index, messages[index])] = TRIM
    if config.hard_clear.enabled:
        for index in prunable:  # oldest first
            if total <= config.hard_clear_ratio * window:
                break
            message = messages[index]
            current = soft_trimmed(message, config.soft_trim) if plan.get(_key(index, message)) == TRIM else None
            total += message_chars(cleared(message, config.hard_clear.placeholder)) - message_chars(current or message)
            plan[_key(index, message)] = CLEAR
    return plan


def apply_plan(messages: Sequence[Message], plan: dict[str, str], config: ContextPruningConfig) -> list[Message]:
    """``messages`` with the planned results trimmed or cleared (deterministic: the same
    messages and plan give the same bytes)."""
    if not plan:
        return list(messages)
    out = []
    for index, message in enumerate(messages):
        action = plan.get(_key(index, message)) if message.role == Role.TOOL_RESULT else None
        if action == CLEAR:
            message = cleared(message, config.hard_clear.placeholder)
        elif action == TRIM:
            message = soft_trimmed(message, config.soft_trim) or message
        out.append(message)
    return out


def prune_messages(messages: Sequence[Message], config: ContextPruningConfig, window_tokens: int, base_chars: int = 0) -> list[Message]:
    """The messages pruned as a request right after the cache expired would send them."""
    return apply_plan(messages, plan_pruning(messages, config, window_tokens, base_chars), config)


@attrs.define
class SessionPruning:
    """One session's pruning: the time of its last model request and the decision in force.

    Built once per turn (:meth:`open`); :meth:`request_messages` is called before each model
    request of the turn. Its state file is written only while the mode is ``cache-ttl``.
    """

    config: ContextPruningConfig
    path: Path
    clock: Callable[[], float]
    last_request_at: float | None = None
    plan: dict[str, str] = attrs.Factory(dict)
    #: the last request was pruned otherwise than the one before it: what the provider
    #: reported for that one says little about this one
    replanned: bool = False
    _unsaved: bool = False

    @classmethod
    def open(cls, config: ContextPruningConfig, transcript_path: Path, clock: Callable[[], float]) -> SessionPruning:
        """The state of the session whose transcript is ``transcript_path`` (a missing or
        malformed state file: no request known, so no pruning until the next expiry)."""
        path = transcript_path.with_name(transcript_path.stem + ".pruning.json")
        pruning = cls(config, path, clock)
        if config.mode == "off":
            return pruning
        raw = read_state(path, "ignored: pruning waits for the next cache expiry")
        if raw is None:
            return pruning
        last, plan = (raw.get("last_request_at"), raw.get("plan")) if isinstance(raw, dict) else (None, None)
        if not is_number(last, high=1e12) or not isinstance(plan, dict) or not all(v in (TRIM, CLEAR) for v in plan.values()):
            report_once(path, "is malformed; ignored: pruning waits for the next cache expiry")
            return pruning
        pruning.last_request_at, pruning.plan = float(cast(float, last)), {str(k): v for k, v in plan.items()}
        return pruning

    def expired(self, now: float) -> bool:
        if self.config.ttl_seconds == 0:
            return True  # no cache to keep: every request is pruned afresh
        return self.last_request_at is not None and now - self.last_request_at >= self.config.ttl_seconds

    def request_messages(self, messages: list[Message], window_tokens: int, base_chars: int = 0) -> list[Message]:
        """The messages this request sends; records the request's time."""
        if self.config.mode == "off":
            return messages
        now = self.clock()
        self.replanned = False
        if self.expired(now):
            plan = plan_pruning(messages, self.config, window_tokens, base_chars)
            self.replanned, self.plan = plan != self.plan, plan
        self.last_request_at = now
        # A session whose tool results could not be pruned yet has nothing to remember (most
        # chats): no write. Once they could, its times are kept, at the latest when it ends.
        self._unsaved = bool(self.plan) or _could_prune(messages, self.config)
        if self.replanned:  # a new decision is stored at once: every process applies the same
            self.save()
        return apply_plan(messages, self.plan, self.config)

    def save(self) -> None:
        """Store the last request's time and the decision (once a turn, and when it changes):
        a process that stops before only makes the next one prune a little early."""
        if not self._unsaved:
            return
        self._unsaved = False
        try:
            atomic_write_json(self.path, {"last_request_at": self.last_request_at, "plan": self.plan})
        except OSError as exc:  # the request went out all the same; only the next decision is affected
            report_once(self.path, f"cannot be written ({exc.strerror or exc})")
