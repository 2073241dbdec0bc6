"""The chained lifecycle hooks: each plugin sees the previous plugin's rewrite."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from clawbot.plugins.manager import PluginManager
    from clawbot.types import (
        OutboundEvent,
        OutboundMessage,
        ToolCallDecision,
        ToolCallEvent,
    )


async def before_tool_call(manager: PluginManager, event: ToolCallEvent) -> ToolCallDecision:
    """Run ``clawbot_before_tool_call`` implementations in order.

    Returns the final decision: blocked (with the first blocker's reason, naming the plugin)
    or allowed with the possibly rewritten arguments. A plugin that raises blocks the call
    (fail closed): a crashed guard must not let a dangerous call through.
    """
    from clawbot.types import ToolCallDecision

    impls = manager.impls("clawbot_before_tool_call")
    if not impls:  # the common case: nothing to copy for
        return ToolCallDecision()
    arguments = _json_copy(dict(event.arguments))
    rewritten = False
    for impl in impls:
        # A deep copy each (tool arguments are small JSON values): a plugin editing them in
        # place, nested lists included, must change neither what others see nor what runs.
        current = attrs.evolve(event, arguments=_json_copy(arguments))
        ok, result = await manager.call_impl("clawbot_before_tool_call", impl, event=current)
        if not ok:  # fail closed: a guard that crashed has not approved the call
            return ToolCallDecision.block(f"blocked: plugin {impl.plugin_name} failed while checking this call")
        if result is None:
            continue
        if not isinstance(result, ToolCallDecision):
            manager.record_failure(
                impl.plugin_name, "clawbot_before_tool_call", TypeError(f"expected ToolCallDecision, got {result!r}")
            )
            continue
        if result.blocked:
            return ToolCallDecision.block(result.reason or f"blocked by plugin {impl.plugin_name}")
        if result.arguments is not None:
            arguments, rewritten = _json_copy(dict(result.arguments)), True
    return ToolCallDecision(arguments=arguments if rewritten else None)


async def message_sending(manager: PluginManager, event: OutboundEvent) -> OutboundMessage | None:
    """Run ``clawbot_message_sending``; ``None`` means a plugin cancelled the message."""
    from clawbot.types import OutboundMessage

    message = event.message
    for impl in manager.impls("clawbot_message_sending"):
        ok, result = await manager.call_impl("clawbot_message_sending", impl, event=attrs.evolve(event, message=message))
        if not ok or result is None or result is True:
            continue
        if result is False:
            return None
        if isinstance(result, OutboundMessage):
            message = result
        else:
            manager.record_failure(
                impl.plugin_name, "clawbot_message_sending", TypeError(f"expected OutboundMessage, got {result!r}")
            )
    return message


def _json_copy(value: Any) -> Any:
    """A deep copy of decoded JSON (dicts, lists, scalars): cheaper than ``copy.deepcopy``."""
    if isinstance(value, dict):
        return {key: _json_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_copy(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_json_copy(item) for item in value)
    return value
