"""The chained hooks: each plugin sees the previous plugin's rewrite."""

from __future__ import annotations

import inspect
import time
from collections.abc import Generator, Mapping
from typing import Any, Protocol

import attrs
import pluggy

from clawbot.plugins.arguments import hook_arguments
from clawbot.plugins.tracing import log_call
from clawbot.types import (
    OutboundEvent,
    OutboundMessage,
    ToolCallDecision,
    ToolCallEvent,
)


class HookRunner(Protocol):
    """What a chain needs of the plugin manager, which calls the chains and passes itself in."""

    trace: bool

    def hookimpls(self, hook: str) -> list[Any]: ...

    def impls(self, hook: str) -> list[Any]: ...

    def call_impl_sync(self, hook: str, impl: Any, **kwargs: Any) -> tuple[bool, Any]: ...

    async def call_impl(self, hook: str, impl: Any, **kwargs: Any) -> tuple[bool, Any]: ...

    def record_failure(self, plugin: str, hook: str, exc: BaseException) -> None: ...


async def before_tool_call(manager: HookRunner, event: ToolCallEvent) -> ToolCallDecision:
    """Run ``clawbot_before_tool_call`` implementations in order.

    Returns the final decision: blocked (with the first blocker's reason, naming the plugin)
    or allowed with the possibly rewritten arguments. A plugin that raises blocks the call
    (fail closed): a crashed guard must not let a dangerous call through.
    """
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
            manager.record_failure(impl.plugin_name, "clawbot_before_tool_call", TypeError(f"expected ToolCallDecision, got {result!r}"))
            continue
        if result.blocked:
            return ToolCallDecision.block(result.reason or f"blocked by plugin {impl.plugin_name}")
        if result.arguments is not None:
            arguments, rewritten = _json_copy(dict(result.arguments)), True
    return ToolCallDecision(arguments=arguments if rewritten else None)


async def message_sending(manager: HookRunner, event: OutboundEvent) -> OutboundMessage | None:
    """Run ``clawbot_message_sending``; ``None`` means a plugin cancelled the message."""
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
            manager.record_failure(impl.plugin_name, "clawbot_message_sending", TypeError(f"expected OutboundMessage, got {result!r}"))
    return message


def bootstrap_files(manager: HookRunner, ctx: Any) -> Any:
    """Run ``clawbot_bootstrap_files``: the first plain result, edited by every override.

    pluggy's rules for a ``firstresult`` hook with wrappers, run here one implementation at a
    time so that each failure has a name: plain implementations in pluggy's order until one
    returns something other than ``None``; every ``@hookimpl(wrapper=True)`` runs its code
    before ``yield`` outermost first, receives the inner result from ``yield`` and returns
    the list the next one out receives (an old-style ``hookwrapper=True`` gets pluggy's
    ``Result``, as pluggy would give it). An implementation that raises, an ``async``
    one, or a wrapper that does not yield exactly once is recorded and left out, so the
    others still apply and one broken override cannot take the default files away.
    """
    hook = "clawbot_bootstrap_files"
    kwargs = {"ctx": ctx}
    started: list[tuple[Any, Generator[Any, Any, Any]]] = []
    plain: list[Any] = []
    for impl in reversed(manager.hookimpls(hook)):  # pluggy's calling order: wrappers first
        if inspect.iscoroutinefunction(impl.function) or inspect.isasyncgenfunction(impl.function):
            manager.record_failure(impl.plugin_name, hook, TypeError(f"{hook} must be synchronous"))
        elif impl.wrapper or impl.hookwrapper:
            wrapper = _enter(manager, hook, impl, kwargs)
            if wrapper is not None:
                started.append((impl, wrapper))
        else:
            plain.append(impl)
    result = None
    for impl in plain:
        ok, value = manager.call_impl_sync(hook, impl, **kwargs)
        if ok and value is not None:
            result = value
            break
    for impl, wrapper in reversed(started):  # innermost first
        result = _leave(manager, hook, impl, wrapper, result)
    return result


def _enter(manager: HookRunner, hook: str, impl: Any, kwargs: Mapping[str, Any]) -> Generator[Any, Any, Any] | None:
    """Run a wrapper up to its ``yield``; ``None`` (recorded) if it fails before that."""
    try:
        wrapper = impl.function(*hook_arguments(impl, kwargs))
        if not inspect.isgenerator(wrapper):
            raise TypeError(f"{hook} wrapper must be a generator function (one yield)")
        next(wrapper)
    except StopIteration:
        manager.record_failure(impl.plugin_name, hook, TypeError(f"{hook} wrapper did not yield"))
        return None
    except Exception as exc:
        manager.record_failure(impl.plugin_name, hook, exc)
        return None
    return wrapper


def _leave(manager: HookRunner, hook: str, impl: Any, wrapper: Generator[Any, Any, Any], inner: Any) -> Any:
    """Send ``inner`` into a started wrapper; its return value, or ``inner`` if it failed."""
    started = time.perf_counter()
    outcome = pluggy.Result(inner, None) if impl.hookwrapper else None
    try:
        wrapper.send(outcome if outcome is not None else inner)
    except StopIteration as stop:
        if manager.trace:
            log_call(hook, impl.plugin_name, time.perf_counter() - started, "wrapper")
        return outcome.get_result() if outcome is not None else stop.value
    except Exception as exc:
        manager.record_failure(impl.plugin_name, hook, exc)
        return inner
    wrapper.close()
    manager.record_failure(impl.plugin_name, hook, TypeError(f"{hook} wrapper yielded more than once"))
    return inner


def _json_copy(value: Any) -> Any:
    """A deep copy of decoded JSON (dicts, lists, scalars): cheaper than ``copy.deepcopy``."""
    if isinstance(value, dict):
        return {key: _json_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_copy(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_json_copy(item) for item in value)
    return value
