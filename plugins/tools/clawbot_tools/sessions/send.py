"""``sessions_send``: hand a message to another session (often another agent) and wait for
its reply, or fire and forget with ``timeout_seconds = 0``.

The message arrives labelled by clawbot with the sending session and agent (in the trusted
metadata; its text is untrusted there), and the reply comes back fenced as untrusted data.
"""

from __future__ import annotations

from clawbot import ServiceUnavailable, Tool, ToolCall, ToolResult

from clawbot_tools.calls import schema, services_of
from clawbot_tools.sessions.common import GROUP

DEFAULT_TIMEOUT_S = 120
MAX_TIMEOUT_S = 600


async def sessions_send(call: ToolCall) -> ToolResult:
    services = services_of(call)
    if isinstance(services, ToolResult):
        return services
    key = call.arguments["session_key"]
    text = call.arguments["message"]
    timeout = min(float(call.arguments.get("timeout_seconds", DEFAULT_TIMEOUT_S)), MAX_TIMEOUT_S)
    if key == services.session_key:
        return ToolResult.error("sessions_send: that is this session; answer here instead.")
    try:
        reply = await services.send_to_session(key, text, timeout_s=timeout)
    except ServiceUnavailable as exc:
        return ToolResult.error(f"sessions_send: {exc}")
    except TimeoutError:
        return ToolResult.error(f"sessions_send: {key} did not answer within {timeout:g} s; it keeps working. Check later with sessions_history.")
    if reply is None:
        return ToolResult.text(f"Sent to {key}; not waiting for the reply.", session_key=key, waited=False)
    # The other session may have read anything (a web page, a chat): its words are data here.
    from clawbot.safetext import fence

    return ToolResult.text(fence(reply, label=f"the reply of session {key}"), session_key=key, waited=True)


def make_tool() -> Tool:
    return Tool(
        name="sessions_send",
        description=(
            "Send a message to another session (e.g. agent:<agent id>:main for another agent's main session) "
            "and return its reply. timeout_seconds = 0 sends without waiting."
        ),
        parameters=schema(
            {
                "session_key": {"type": "string", "description": "Target session key (sessions_list, agents_list)."},
                "message": {"type": "string", "minLength": 1, "description": "What to send."},
                "timeout_seconds": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": MAX_TIMEOUT_S,
                    "description": f"How long to wait for the reply. Default {DEFAULT_TIMEOUT_S}; 0: do not wait.",
                },
            },
            ["session_key", "message"],
        ),
        handler=sessions_send,
        summary="Send a message to another session or agent and get its reply",
        group=GROUP,
        profiles=("coding", "messaging"),
        order=530,
        timeout_s=MAX_TIMEOUT_S + 10,
        concurrent=False,  # another session answers messages in the order they were sent
    )
