"""``message``: send a message to a chat, by default the one this turn came from.

Delivery goes through the running gateway (so ``message_sending`` hooks such as filters and
audit apply); a one-shot CLI run has no channels and gets a clear error. When the model
delivers its whole answer this way it should reply ``[[silent]]`` so the user does not get
it twice: the gateway drops a reply that is only a silent token.
"""

from __future__ import annotations

from clawbot import OutboundMessage, ServiceUnavailable, Tool, ToolCall, ToolResult
from clawbot.promptkit import SILENT_TOKEN

GROUP = "messaging"
MAX_CHARS = 20_000


async def message(call: ToolCall) -> ToolResult:
    services = call.services
    if services is None:
        return ToolResult.error("message is unavailable here: it only works inside an agent turn.")
    args = call.arguments
    origin = services.origin
    channel = args.get("channel") or (origin.channel if origin else None)
    target = args.get("target") or (origin.peer_id if origin and channel == origin.channel else None)
    if not channel or not target:
        running = ", ".join(services.channels()) or "none"
        return ToolResult.error(f"message: say where to send it: 'channel' (running: {running}) and 'target' (the chat or user id).")
    text = args["message"]
    if len(text) > MAX_CHARS:
        return ToolResult.error(f"message: {len(text)} chars is too long; send at most {MAX_CHARS} per message.")
    same_chat = origin is not None and channel == origin.channel and target == origin.peer_id
    outbound = OutboundMessage(
        channel=channel,
        peer_id=target,
        text=text,
        account_id=origin.account_id if same_chat and origin else "default",
        reply_to_id=args.get("reply_to"),
        thread_id=origin.thread_id if same_chat and origin else None,
    )
    try:
        await services.send_message(outbound)
    except ServiceUnavailable as exc:
        return ToolResult.error(f"message: {exc}")
    hint = f" If that was your whole answer, reply with only {SILENT_TOKEN}." if same_chat else ""
    return ToolResult.text(f"Sent to {channel}:{target} ({len(text)} chars).{hint}", channel=channel, target=target)


def make_tool() -> Tool:
    return Tool(
        name="message",
        description=(
            "Send a message to a chat. Default: the chat this conversation is in; pass channel and target to "
            f"reach another chat. If you deliver your reply with this tool, answer with only {SILENT_TOKEN} "
            "to avoid a duplicate."
        ),
        parameters={
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["send"], "description": "What to do. Only 'send' for now."},
                "message": {"type": "string", "minLength": 1, "description": "The text to send."},
                "target": {"type": "string", "description": "Chat or user id on the channel; default: this chat."},
                "channel": {"type": "string", "description": "Channel name (e.g. telegram); default: this channel."},
                "reply_to": {"type": "string", "description": "Message id to reply to, if the channel supports it."},
            },
            "required": ["message"],
            "additionalProperties": False,
        },
        handler=message,
        summary="Send messages to this or another chat",
        group=GROUP,
        profiles=("messaging",),
        order=400,
        concurrent=False,  # messages arrive in the order the model sent them
    )
