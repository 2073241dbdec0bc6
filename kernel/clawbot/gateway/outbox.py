"""Everything the gateway hands a channel leaves through here (:meth:`Outbox.hand_over`).

Control characters are made visible, ``notice`` is set by the kernel alone (clawbot's own
text: approval notices and confirmations, ``/stop`` answers, failures), and in anything
else the notice mark is broken up (:mod:`clawbot.agent.notices`); the ``message_sending``
hooks see the whole message, then it is cut for the channel (:mod:`clawbot.gateway.chunking`).
The model's reply is read for its directives first (:meth:`Outbox.send_reply`:
:mod:`clawbot.gateway.reply_protocol`, :mod:`clawbot.gateway.reply_media`). Sending never
raises into a turn: a failing channel is logged.
"""

from __future__ import annotations

import asyncio
import logging

import attrs

from clawbot.agent.notices import outgoing_text
from clawbot.gateway.chunking import split_message
from clawbot.gateway.reply_media import shape_reply
from clawbot.gateway.reply_protocol import parse_reply
from clawbot.kernel import Kernel
from clawbot.paths import expand_user_path
from clawbot.sessions.store import agent_of
from clawbot.types import Channel, InboundMessage, OutboundEvent, OutboundMessage

log = logging.getLogger("clawbot.gateway.runner")  # one logger name for the gateway's records


@attrs.frozen
class Outbox:
    kernel: Kernel
    agent_id: str
    """The agent named for messages that belong to no session."""

    async def send_reply(self, channel: Channel, message: InboundMessage, session_key: str, text: str, *, streamed: bool, shown: bool) -> None:
        """The model's reply, its directives read (:mod:`clawbot.gateway.reply_protocol`):
        nothing for a silent reply or a heartbeat acknowledgement, unless a live channel
        already shows some of it (it then learns the reply is over)."""
        try:
            parsed = parse_reply(text, self.kernel.config.agents.defaults.heartbeat.ack_max_chars)
            if not parsed.delivered and not shown:
                return
            workspace = expand_user_path(self.kernel.config.agent_workspace(agent_of(session_key)), self.kernel.env)
            staging = self.kernel.paths.root / "media" / "outbound"
            # Attached files are read and copied in a worker thread, never on the event loop.
            shaped = await asyncio.to_thread(shape_reply, parsed, message, workspace, channel.capabilities, staging)
            reply = attrs.evolve(shaped, streamed=streamed)
            await self.hand_over(channel, reply, session_key, notice=False)
        except Exception:
            log.exception("sending a reply on %s failed", channel.name)

    async def send(
        self,
        channel: Channel,
        message: InboundMessage,
        session_key: str,
        text: str,
        *,
        notice: bool = False,
        streamed: bool = False,
    ) -> None:
        """Answer ``message`` in its chat; a failing channel is logged, never raised."""
        try:
            reply = attrs.evolve(message.answer(text, quoting=True), streamed=streamed)
            await self.hand_over(channel, reply, session_key, notice=notice)
        except Exception:
            log.exception("sending a reply on %s failed", channel.name)

    async def hand_over(self, channel: Channel, message: OutboundMessage, session_key: str | None, *, notice: bool) -> bool:
        """The one way out to a channel: cleaned before the ``message_sending`` hooks see it
        and again after they rewrote it, with ``notice`` (and the approval a notice offers)
        as the kernel decided. A reply a hook rewrote is no longer the text that streamed.
        Whether it went out (``False``: a hook cancelled it)."""
        approval = message.approval if notice else None
        cleaned = attrs.evolve(message, text=outgoing_text(message.text, notice=notice), notice=notice, approval=approval)
        final = await self.kernel.plugins.message_sending(OutboundEvent(cleaned, agent_of(session_key) if session_key else self.agent_id, session_key))
        if final is None:
            return False
        streamed = cleaned.streamed and final.text == cleaned.text
        text = outgoing_text(final.text, notice=notice)
        whole = attrs.evolve(final, text=text, notice=notice, approval=approval, streamed=streamed)
        for piece in split_message(whole, channel.capabilities.max_text_length):  # the hooks saw it whole
            await channel.send(piece)
        return True
