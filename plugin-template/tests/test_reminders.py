"""The reminders: a background service and a capability, through a real clawbot gateway.

``running_gateway`` (from ``clawbot.testing``) runs the gateway ``clawbot run`` runs, on a
fake chat; the model is a scripted stand-in, so the test says exactly what it "decides".
"""

from __future__ import annotations

import asyncio

import clawbot_example_tool.plugin as plugin
from clawbot import LLMProvider, Message, ModelInfo, Role, StopReason, TextBlock, ToolCallBlock, Usage
from clawbot.testing import FakeChannel, plugin_from_hooks, running_gateway

PLUGIN = "example_tool"
SERVICE = "example_tool_reminders"
CONFIG = '[agents.defaults.model]\nprimary = "scripted/m"\n\n[plugins.example_tool]\nreminder_check_seconds = 0.05\n'


class ScriptedModel(LLMProvider):
    """Answers with the replies it was given, in order: a text, or a tool call."""

    name = "scripted"

    def __init__(self, *replies: str | ToolCallBlock) -> None:
        self.replies = list(replies)
        self.requests = []

    def model_info(self, model_id: str) -> ModelInfo:
        return ModelInfo(model_id, context_window=200_000)

    async def complete(self, request, on_text=None) -> Message:
        self.requests.append(request)
        reply = self.replies.pop(0) if self.replies else "done"
        if isinstance(reply, str):
            return Message(Role.ASSISTANT, (TextBlock(reply),), usage=Usage(10, 2), stop_reason=StopReason.END_TURN)
        return Message(Role.ASSISTANT, (reply,), usage=Usage(10, 2), stop_reason=StopReason.TOOL_USE)


def remind(text: str, in_minutes: float) -> ToolCallBlock:
    return ToolCallBlock(id="call-1", name="example_tool_remind", arguments={"text": text, "in_minutes": in_minutes})


async def kernel_with(make_kernel, model: ScriptedModel):
    return await make_kernel(plugins={PLUGIN: plugin, "model": plugin_from_hooks(clawbot_llm_providers=lambda ctx: [model])}, config=CONFIG)


async def test_the_gateway_runs_the_reminder_service_and_the_tool_sets_a_reminder_it_sends(make_kernel) -> None:
    model = ScriptedModel(remind("stretch your legs", 0), "I will remind you.")
    kernel = await kernel_with(make_kernel, model)
    chat = FakeChannel()
    async with running_gateway(kernel, chat) as gateway:
        report = await gateway.wait_for_service(SERVICE)
        assert (report["plugin"], report["health"], report["restarts"]) == (PLUGIN, "ok", 0)
        await chat.inject("remind me to stretch my legs", peer_id="alice")
        async with asyncio.timeout(30):  # the service looks every 0.05 s
            while "Reminder: stretch your legs" not in chat.texts():
                await asyncio.sleep(0.01)
        async with asyncio.timeout(30):
            while gateway.services()[SERVICE]["detail"] != "0 waiting, 1 sent":
                await asyncio.sleep(0.01)
    assert sorted(chat.texts()) == ["I will remind you.", "Reminder: stretch your legs"]  # due at once: either may come first
    assert [message.peer_id for message in chat.sent] == ["alice", "alice"]
    assert "Reminder set" in model.requests[1].messages[-1].text  # what the tool told the model


async def test_a_turn_from_no_chat_gets_no_reminder_and_the_model_hears_why(make_kernel) -> None:
    model = ScriptedModel(remind("water the plants", 5), "There is no chat to remind you in.")
    kernel = await kernel_with(make_kernel, model)
    async with running_gateway(kernel, FakeChannel()) as gateway:
        outcome = await gateway.host.run_turn("main", "agent:main:notes", "remind me to water the plants")
    assert outcome.text == "There is no chat to remind you in."
    result = model.requests[1].messages[-1]
    assert result.is_error and "no reminder was set" in result.text and "nowhere to send a reminder" in result.text
