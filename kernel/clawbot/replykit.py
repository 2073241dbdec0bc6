"""Reading an agent's reply the way the gateway does, for a plugin that delivers it itself.

A service that runs a turn (a scheduled job) and sends its reply to a chat must read the
reply as a chat's reply is read: directives taken out, a reply that is only a silent token
(or ``HEARTBEAT_OK`` with at most ``ack_max_chars`` beside it) not delivered at all, and
each ``MEDIA:`` file confined to the agent's workspace and copied before it is attached.
"""

from __future__ import annotations

from clawbot.gateway.reply_media import attachment
from clawbot.gateway.reply_protocol import ParsedReply, parse_reply

__all__ = ["ParsedReply", "attachment", "parse_reply"]
