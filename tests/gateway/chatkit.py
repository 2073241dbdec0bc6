"""A running chat for the gateway tests: real kernel, real gateway and turns, the fake channel.

Only the model is scripted (:class:`~tests.agent.scripted.ScriptedProvider`); the tools,
the approval broker, the session files and the gateway's command handling are the real ones.
"""

from __future__ import annotations

import asyncio
from typing import Any

from clawbot import ApprovalDecision, ApprovalRequest, ServiceUnavailable, Tool, ToolCall, ToolResult
from clawbot.agent.models import ModelChoice
from clawbot.agent.runtime import AgentRuntime
from clawbot.gateway.runner import Gateway
from clawbot.testing import plugin_from_hooks


def guarded_tool(decisions: list[ApprovalDecision], *, name: str = "guarded", command: str = "launch --rocket", **request: Any) -> Tool:
    """A tool that needs approval and reports back through a system event once allowed
    (``request``: other fields of its :class:`ApprovalRequest`)."""

    async def handler(call: ToolCall) -> ToolResult:
        services = call.services
        assert services is not None

        async def on_decision(decision: ApprovalDecision) -> None:
            decisions.append(decision)
            if decision is ApprovalDecision.ALLOW_ONCE:
                await services.post_system_event(f"{name} finished: {command}")

        try:
            fields = {"tool_name": name, "reason": "it is irreversible", "allow_always": False, **request}
            ticket = services.request_approval(ApprovalRequest(command=command, on_decision=on_decision, **fields))
        except ServiceUnavailable as exc:
            return ToolResult.error(str(exc))
        return ToolResult.text(f"Approval required. Reply with: {ticket.reply_with}", approval_id=ticket.id)

    return Tool(name, "needs approval", {"type": "object"}, handler)


def file_tool(changes: dict[str, str | None]) -> Tool:
    """A third-party tool the kernel knows nothing about, writing (``None``: deleting) workspace files directly."""

    def handler(call: ToolCall) -> ToolResult:
        for name, text in changes.items():
            path = call.workspace / name
            if text is None:
                path.unlink()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        return ToolResult.text("ok")

    return Tool("files", "changes files", {"type": "object"}, handler)


def background_tool(text: str) -> Tool:
    """A tool whose job finishes later and reports as a system event (like exec in the background)."""

    async def handler(call: ToolCall) -> ToolResult:
        services = call.services
        assert services is not None
        await services.post_system_event(text)
        return ToolResult.text("started in the background")

    return Tool("background", "starts a job", {"type": "object"}, handler)


class Chat:
    """A gateway serving ``channel`` with one agent ``main`` answering through ``provider``."""

    def __init__(self, kernel: Any, runtime: AgentRuntime, gateway: Gateway, task: asyncio.Task[None], channel: Any) -> None:
        self.kernel, self.runtime, self.gateway, self.task, self.channel = kernel, runtime, gateway, task, channel

    async def close(self) -> None:
        self.gateway.stop()
        await self.task
        await self.runtime.aclose()
        await self.kernel.aclose()


async def open_chat(
    make_kernel: Any,
    channel: Any,
    provider: Any,
    *,
    tools: list[Tool] = (),
    config: str = "",
    plugins: dict | None = None,
    model: str = "m",
) -> Chat:
    tool_plugin = plugin_from_hooks(clawbot_tools=lambda ctx: list(tools))
    kernel = await make_kernel(plugins={"fake": channel.as_plugin(), "chat-tools": tool_plugin, **(plugins or {})}, config=config)
    runtime = AgentRuntime(kernel)
    await runtime.conversation("main", chain=[ModelChoice(provider, model)])
    gateway = Gateway(kernel, runtime.respond, "main", runtime=runtime)
    task = asyncio.create_task(gateway.run([channel]))
    await channel.wait_started()
    return Chat(kernel, runtime, gateway, task, channel)


async def eventually(predicate: Any, timeout: float = 30.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)
