"""Running one tool call the model made, always ending in a result the model can act on.

Unknown tool, arguments that are not a JSON object, nest too deep, hold NaN or a lone
surrogate or fail the tool's schema, a plugin guard's block, a handler that raises or times
out: each becomes an ``is_error`` tool result that says what to change, never an exception
out of the loop.

Which calls of a reply run together, and in what order, is decided by
:mod:`clawbot.agent.toolbatch`.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from clawbot.kernel import Kernel
from clawbot.providerkit import tool_arguments_problem, value_problem
from clawbot.types import (
    Message,
    Role,
    Tool,
    ToolCall,
    ToolCallBlock,
    ToolCallEvent,
    ToolResult,
    ToolResultEvent,
    ToolServices,
    TurnTrust,
)

DEFAULT_TOOL_TIMEOUT_S = 120.0


@attrs.frozen
class ToolRunContext:
    """Everything a tool call needs from its run."""

    kernel: Kernel
    tools: Mapping[str, Tool]
    agent_id: str
    session_key: str
    workspace: Path
    default_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S
    services: ToolServices | None = None
    #: whose word the turn carries: every call of it gets it (``ToolCall.trust``)
    trust: TurnTrust = TurnTrust.NON_OWNER


def schema_problem(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` is not a usable JSON schema, or ``None``."""
    return _schema_problem(json.dumps(schema, sort_keys=True, default=str))


@functools.lru_cache(maxsize=1024)  # tool schemas are static: check each one once
def _schema_problem(schema_json: str) -> str | None:
    # deferred: jsonschema is slow to import; a turn without tool calls never needs it
    import jsonschema

    schema = json.loads(schema_json)
    try:
        jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator).check_schema(schema)
    except jsonschema.SchemaError as exc:
        return exc.message
    return None


def schema_errors(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> list[str]:
    # deferred: jsonschema is slow to import; a turn without tool calls never needs it
    import jsonschema

    validator_cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    validator = validator_cls(schema)
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(arguments)'}: {e.message}" for e in errors]


def as_message(call: ToolCallBlock, result: ToolResult) -> Message:
    """``result`` as the tool_result message answering ``call``."""
    return Message(Role.TOOL_RESULT, result.content, tool_call_id=call.id, tool_name=call.name, is_error=result.is_error)


async def run_tool_call(ctx: ToolRunContext, call: ToolCallBlock) -> tuple[Message, ToolResult]:
    """Execute ``call``; returns the tool_result message and the full result (with details)."""
    result = await _execute(ctx, call)
    return as_message(call, result), result


async def _execute(ctx: ToolRunContext, call: ToolCallBlock) -> ToolResult:
    try:
        return await _checked_execute(ctx, call)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a bug in a plugin or a hook must not end the turn
        return ToolResult.error(f"{call.name} could not run: {type(exc).__name__}: {exc}")


async def _checked_execute(ctx: ToolRunContext, call: ToolCallBlock) -> ToolResult:
    tool = ctx.tools.get(call.name)
    if tool is None:
        available = ", ".join(sorted(ctx.tools)) or "none"
        return ToolResult.error(f"Unknown tool {call.name!r}. Available tools: {available}.")
    # Checked before anything walks the arguments: a schema check, a guard's copy or the
    # handler would recurse once per level of nesting and could abort the turn; a NaN or a
    # lone surrogate would reach the tool (and its files) as if it were a value.
    if call.raw_arguments is not None:
        problem = tool_arguments_problem(call.raw_arguments)
    else:  # also for a provider that did not parse through providerkit
        problem = value_problem(call.arguments)
    if problem is not None:
        return ToolResult.error(f"The arguments for {call.name} {problem}. Send one JSON object matching the tool's schema.")
    if (broken := schema_problem(tool.parameters)) is not None:
        return ToolResult.error(f"{call.name} cannot be used: its JSON schema is invalid ({broken}). This is a bug in its plugin.")
    problems = schema_errors(tool.parameters, call.arguments)
    if problems:
        return ToolResult.error(f"Invalid arguments for {call.name}:\n" + "\n".join(f"- {p}" for p in problems))
    event = ToolCallEvent(call.id, call.name, dict(call.arguments), ctx.agent_id, ctx.session_key)
    decision = await ctx.kernel.plugins.before_tool_call(event)
    if decision.blocked:
        return ToolResult.error(f"The call to {call.name} was blocked: {decision.reason}")
    arguments = call.arguments
    if decision.arguments is not None:
        arguments = decision.arguments
        # a guard's rewrite reaches the handler, which trusts the schema: check it again
        if problems := schema_errors(tool.parameters, arguments):
            listed = "\n".join(f"- {p}" for p in problems)
            return ToolResult.error(f"The call to {call.name} was rewritten by a plugin into invalid arguments, so it did not run:\n{listed}")
    started = time.perf_counter()
    result = await _invoke(ctx, tool, ToolCall(call.id, call.name, arguments, ctx.agent_id, ctx.session_key, ctx.workspace, ctx.services, ctx.trust))
    duration_ms = (time.perf_counter() - started) * 1000
    await ctx.kernel.plugins.notify(
        "clawbot_after_tool_call",
        event=ToolResultEvent(attrs.evolve(event, arguments=dict(arguments)), result, duration_ms),
    )
    return result


async def _invoke(ctx: ToolRunContext, tool: Tool, call: ToolCall) -> ToolResult:
    timeout = tool.timeout_s or ctx.default_timeout_s
    outcome: object  # what a plugin's handler gives back is checked below, not trusted
    try:
        async with asyncio.timeout(timeout):
            if inspect.iscoroutinefunction(tool.handler):
                outcome = tool.handler(call)
            else:
                # A blocking handler (file I/O, a slow regex) must not freeze the gateway, and the
                # timeout can only fire while the loop runs: give it a worker thread.
                outcome = await asyncio.to_thread(tool.handler, call)
            if inspect.isawaitable(outcome):
                outcome = await outcome
    except TimeoutError:
        return ToolResult.error(f"{tool.name} timed out after {timeout:g} s. Try a smaller request or a longer timeout.")
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        return ToolResult.error(f"{tool.name} failed: {type(exc).__name__}: {exc}")
    if isinstance(outcome, str):
        return ToolResult.text(outcome)
    if not isinstance(outcome, ToolResult):
        return ToolResult.error(f"{tool.name} returned {type(outcome).__name__}, not a ToolResult (a bug in its plugin).")
    return outcome
