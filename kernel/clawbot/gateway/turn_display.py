"""What ``/verbose``, ``/reasoning`` and ``/usage`` add to a turn in its chat.

- verbose ``on``: one line per tool call once it ran (its name, arguments and how it ended),
  as clawbot's notice. A channel that shows turns live shows the call as it starts too.
- reasoning ``on``: the model's thinking of the whole turn, as one message before the reply;
  ``stream``: each model reply's thinking as soon as that reply arrives (before its tool
  calls run). It is the model's text, never a clawbot notice.
- usage ``tokens``: a footer line under the reply with the turn's tokens; ``full`` adds the
  cost (when usage.prices has one) and the model.

Settings come from the turn's directives, else the session's stored ones, else off.
Nothing here may fail a turn: a chat that cannot be told is logged and left alone.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from clawbot.agent.notices import quoted_line
from clawbot.gateway.live import call_summary
from clawbot.sessions.settings import setting_of
from clawbot.types import InboundMessage, Message, ThinkingBlock, ToolCallBlock, Usage

log = logging.getLogger(__name__)

RESULT_WIDTH = 80


def usage_footer(mode: str, usage: Usage, cost_usd: float | None, model: str) -> str | None:
    """The footer line of ``usage`` mode (``None`` for ``off``)."""
    if mode not in ("tokens", "full"):
        return None
    line = f"Usage: {usage.prompt_tokens:,} in"
    if usage.cache_read_tokens:
        line += f" ({usage.cache_hit_share:.0%} cached)"
    line += f", {usage.output_tokens:,} out"
    if mode == "full":
        line += ", cost " + ("not priced" if cost_usd is None else f"${cost_usd:.4f}") + f", {quoted_line(model)}"
    return line


def result_summary(result: Message) -> str:
    """How a tool call ended, on one short line."""
    text = "".join(getattr(b, "text", "") for b in result.content).strip()
    if result.is_error:
        first = quoted_line(text.splitlines()[0] if text else "failed")
        return "error: " + (first if len(first) <= RESULT_WIDTH else first[: RESULT_WIDTH - 1] + "\u2026")
    lines = text.count("\n") + 1 if text else 0
    return f"ok, {len(text):,} chars" + (f" in {lines:,} lines" if lines > 1 else "")


def verbose_line(call: ToolCallBlock, result: Message | None) -> str:
    ended = result_summary(result) if result is not None else "no result"
    return f"Tool {quoted_line(call.name)}({call_summary(call)}): {ended}"


def thinking_of(reply: Message) -> str:
    return "\n".join(b.text for b in reply.content if isinstance(b, ThinkingBlock) and not b.redacted and b.text.strip()).strip()


class TurnDisplay:
    """Watches one turn for the chat ``origin`` came from (see the module's doc)."""

    def __init__(self, port: object, origin: InboundMessage, session_key: str, settings: Mapping[str, str]) -> None:
        self._port = port
        self._origin = origin
        self._session_key = session_key
        self.verbose = setting_of(settings, "verbose") == "on"
        self.reasoning = setting_of(settings, "reasoning")
        self.usage = setting_of(settings, "usage")
        self._thoughts: list[str] = []

    @property
    def watching(self) -> bool:
        return self.verbose or self.reasoning != "off"

    async def on_reply(self, reply: Message) -> None:
        thought = thinking_of(reply) if self.reasoning != "off" else ""
        if not thought:
            return
        if self.reasoning == "stream":
            await self._tell("Reasoning:\n" + thought, notice=False)
        else:
            self._thoughts.append(thought)

    async def on_tool_results(self, calls: Sequence[ToolCallBlock], results: Sequence[Message]) -> None:
        if not self.verbose:
            return
        by_id = {r.tool_call_id: r for r in results}
        await self._tell("\n".join(verbose_line(call, by_id.get(call.id)) for call in calls), notice=True)

    async def before_reply(self) -> None:
        """The turn is over: the reasoning kept for ``on`` goes out ahead of the reply."""
        if self._thoughts:
            await self._tell("Reasoning:\n" + "\n\n".join(self._thoughts), notice=False)
            self._thoughts = []

    async def _tell(self, text: str, *, notice: bool) -> None:
        deliver = getattr(self._port, "deliver", None)
        if deliver is None:
            return
        try:
            await deliver(self._origin.answer(text), self._session_key, notice=notice)
        except Exception:
            log.exception("showing a turn's steps in %s failed", self._session_key)
