"""A chat message's turn, set up: its directives stripped and applied, its display watching.

Used by the gateway's responder (:meth:`clawbot.agent.runtime.AgentRuntime.respond`).
"""

from __future__ import annotations

import attrs

from clawbot.agent.conversation import TurnResult
from clawbot.agent.owners import is_owner, owner_ids_for
from clawbot.agent.replies import is_silent
from clawbot.agent.turn_options import TurnOptions
from clawbot.gateway.directives import directive_values, split_directives
from clawbot.gateway.live import LiveTurn
from clawbot.gateway.turn_display import TurnDisplay, usage_footer
from clawbot.kernel import Kernel
from clawbot.types import InboundMessage


@attrs.define
class TurnSetup:
    text: str
    options: TurnOptions
    display: TurnDisplay

    async def finish(self, result: TurnResult, live: LiveTurn | None = None) -> str | None:
        """The reply to send, with the usage footer when asked for; the reasoning kept for
        ``/reasoning on`` is sent first. A silent reply stays silent."""
        await self.display.before_reply()
        footer = usage_footer(self.display.usage, result.usage, result.cost_usd, result.model)
        if footer is None or not result.text or is_silent(result.text):
            return result.text
        tail = "\n\n" + footer
        if live is not None:  # shown live with the reply, so the channel sees it as part of it
            await live.text(tail)
        return result.text + tail


def setup_turn(kernel: Kernel, port: object, message: InboundMessage, session_key: str) -> TurnSetup:
    """What the turn of ``message`` runs with: the owner's leading directives are taken off
    the text and set this turn's thinking, model, verbose, reasoning and usage; anyone
    else's stay in the text (see :mod:`clawbot.gateway.directives`)."""
    directives, rest = split_directives(message.text)
    values: dict[str, str] = {}
    text = message.text
    if directives and rest and not message.system_event and is_owner(message, owner_ids_for(kernel.config, message.channel)):
        values, text = directive_values(directives), rest
    info = kernel.sessions.get(session_key)
    settings = {**(info.settings if info is not None else {}), **values}
    display = TurnDisplay(port, message, session_key, settings)
    options = TurnOptions(
        thinking=values.get("think"),
        model=values.get("model"),
        on_reply=display.on_reply if display.watching else None,
        on_tool_results=display.on_tool_results if display.verbose else None,
    )
    return TurnSetup(text, options, display)
