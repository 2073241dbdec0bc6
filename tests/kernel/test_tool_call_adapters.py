"""Models without native tool calling get their tools through the installed adapter
(``clawbot_tool_call_adapters``); the turn only ever sees tool calls."""

from __future__ import annotations

import attrs
import pytest
from clawbot import Message, ModelInfo, ModelRequest, ProviderError, TextBlock, Tool, ToolCallBlock, ToolResult
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.kernel import PluginConflictError
from clawbot.testing import plugin_from_hooks
from clawbot.types import StopReason, ToolCallAdapter

from ..agent.scripted import ScriptedProvider

KEY = "agent:main:main"
SHOUT = Tool(
    "shout",
    "Upper-case text.",
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    lambda call: ToolResult.text(call.arguments["text"].upper()),
)


class PlainModels(ScriptedProvider):
    """Scripted models of which only ``smart`` takes native tools."""

    def model_info(self, model_id: str) -> ModelInfo:
        return ModelInfo(model_id, native_tools=model_id == "smart")


class ShoutLines(ToolCallAdapter):
    """A toy convention: the tool names in the prompt, ``SHOUT <text>`` lines as calls."""

    def __init__(self, name: str = "shout-lines") -> None:
        self.name = name
        self.encoded: list[ModelRequest] = []

    def encode(self, request: ModelRequest) -> ModelRequest:
        self.encoded.append(request)
        tools = ", ".join(spec.name for spec in request.tools)
        system = attrs.evolve(request.system, stable=f"{request.system.stable}\nTools: {tools}")
        return attrs.evolve(request, system=system, tools=())

    def decode(self, reply: Message) -> Message:
        if not reply.text.startswith("SHOUT "):
            return reply
        call = ToolCallBlock("c1", "shout", {"text": reply.text.removeprefix("SHOUT ")})
        return attrs.evolve(reply, content=(call,), stop_reason=StopReason.TOOL_USE)


def _adapters(*adapters: ToolCallAdapter) -> object:
    return plugin_from_hooks(clawbot_tool_call_adapters=lambda ctx: list(adapters))


@pytest.mark.hook_emission("clawbot_tool_call_adapters")
async def test_hook_tool_call_adapters_a_model_without_native_tools_calls_tools_through_the_adapter(make_kernel) -> None:
    adapter = ShoutLines()
    kernel = await make_kernel(plugins={"tools": plugin_from_hooks(clawbot_tools=lambda ctx: [SHOUT]), "adapter": _adapters(adapter)})
    provider = PlainModels("SHOUT hi", "The tool said HI.")
    result = await Conversation(kernel, ModelChoice(provider, "plain"), "main", services=None).send(KEY, "shout hi")
    assert result.text == "The tool said HI." and result.tool_calls == 1
    first = provider.requests[0]
    assert first.tools == () and first.system.stable.endswith("Tools: shout")
    assert [spec.name for spec in adapter.encoded[0].tools] == ["shout"]  # the kernel handed it the real specs


async def test_hook_tool_call_adapters_a_model_with_native_tools_never_meets_the_adapter(make_kernel) -> None:
    adapter = ShoutLines()
    kernel = await make_kernel(plugins={"tools": plugin_from_hooks(clawbot_tools=lambda ctx: [SHOUT]), "adapter": _adapters(adapter)})
    provider = PlainModels("SHOUT hi")
    result = await Conversation(kernel, ModelChoice(provider, "smart"), "main", services=None).send(KEY, "shout hi")
    assert result.text == "SHOUT hi" and result.tool_calls == 0
    assert adapter.encoded == [] and [spec.name for spec in provider.requests[0].tools] == ["shout"]


async def test_hook_tool_call_adapters_without_one_the_next_model_of_the_chain_answers(make_kernel) -> None:
    kernel = await make_kernel(plugins={"tools": plugin_from_hooks(clawbot_tools=lambda ctx: [SHOUT])})
    provider = PlainModels("from the smart model")
    conversation = Conversation(kernel, ModelChoice(provider, "plain"), "main", fallbacks=[ModelChoice(provider, "smart")], services=None)
    result = await conversation.send(KEY, "hello")
    assert result.text == "from the smart model" and [r.model for r in provider.requests] == ["smart"]


async def test_hook_tool_call_adapters_without_one_a_model_without_native_tools_is_refused_by_name(make_kernel) -> None:
    kernel = await make_kernel(plugins={"tools": plugin_from_hooks(clawbot_tools=lambda ctx: [SHOUT])})
    provider = PlainModels("never sent")
    with pytest.raises(ProviderError, match="scripted/plain takes no native tools and no installed plugin offers tool calling through the prompt"):
        await Conversation(kernel, ModelChoice(provider, "plain"), "main", services=None).send(KEY, "hello")
    assert provider.requests == []


async def test_hook_tool_call_adapters_two_installed_refuse_to_boot(make_kernel) -> None:
    with pytest.raises(PluginConflictError) as caught:
        await make_kernel(plugins={"alpha": _adapters(ShoutLines("one")), "beta": _adapters(ShoutLines("two"))})
    (conflict,) = caught.value.conflicts
    assert conflict == "only one tool call adapter may be installed: 'one' by plugin 'alpha' and 'two' by plugin 'beta'"


async def test_hook_tool_call_adapters_an_adapter_of_the_wrong_type_is_a_plugin_failure(make_kernel) -> None:
    kernel = await make_kernel(plugins={"sloppy": plugin_from_hooks(clawbot_tool_call_adapters=lambda ctx: [TextBlock("not an adapter")])})
    (failure,) = kernel.plugins.failures
    assert failure.plugin == "sloppy" and kernel.tool_call_adapter is None


class BrokenAdapter(ShoutLines):
    """An adapter that raises in one of its two steps."""

    def __init__(self, broken_step: str) -> None:
        super().__init__("broken-lines")
        self.broken_step = broken_step

    def encode(self, request: ModelRequest) -> ModelRequest:
        if self.broken_step == "encode":
            raise RuntimeError("my prompt template is missing")
        return super().encode(request)

    def decode(self, reply: Message) -> Message:
        if self.broken_step == "decode":
            raise RuntimeError("cannot parse that reply")
        return super().decode(reply)


@pytest.mark.parametrize(("step", "error"), [("encode", "my prompt template is missing"), ("decode", "cannot parse that reply")])
async def test_hook_tool_call_adapters_an_adapter_that_raises_is_its_plugins_failure_and_the_next_model_answers(make_kernel, step: str, error: str) -> None:
    kernel = await make_kernel(plugins={"tools": plugin_from_hooks(clawbot_tools=lambda ctx: [SHOUT]), "adapter": _adapters(BrokenAdapter(step))})
    plain, smart = PlainModels("SHOUT hi"), PlainModels("from the smart model")
    conversation = Conversation(kernel, ModelChoice(plain, "plain"), "main", fallbacks=[ModelChoice(smart, "smart")], services=None)
    result = await conversation.send(KEY, "shout hi")
    assert result.text == "from the smart model"
    assert [request.model for request in smart.requests] == ["smart"]
    (failure,) = kernel.plugins.failures
    assert failure.plugin == "adapter" and failure.hook == "clawbot_tool_call_adapters" and error in failure.error


@pytest.mark.parametrize(("step", "error"), [("encode", "my prompt template is missing"), ("decode", "cannot parse that reply")])
async def test_hook_tool_call_adapters_an_adapter_that_raises_with_no_model_left_is_a_clear_error(make_kernel, step: str, error: str) -> None:
    kernel = await make_kernel(plugins={"tools": plugin_from_hooks(clawbot_tools=lambda ctx: [SHOUT]), "adapter": _adapters(BrokenAdapter(step))})
    provider = PlainModels("SHOUT hi")
    with pytest.raises(ProviderError, match=f"the tool call adapter 'broken-lines' failed to {step} for scripted/plain: {error}"):
        await Conversation(kernel, ModelChoice(provider, "plain"), "main", services=None).send(KEY, "shout hi")
    assert [failure.plugin for failure in kernel.plugins.failures] == ["adapter"]
