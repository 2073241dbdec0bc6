"""Tools ask for what a plugin provides by type (``call.services.capability(Kind)``), and
services and capabilities reach clawbot through the kernel's ``AgentHost``.

Real kernel, real session files; only the model is scripted.
"""

from __future__ import annotations

import pytest
from clawbot import InboundMessage, OutboundMessage, ServiceUnavailable, Tool, ToolCall, ToolResult
from clawbot.agent.models import ModelChoice
from clawbot.agent.runtime import AgentRuntime
from clawbot.kernel import PluginConflictError
from clawbot.testing import plugin_from_hooks
from clawbot.types import AgentHost, Capability, CapabilityScope, TurnTrust

from ..agent.scripted import ScriptedProvider, call

SESSION = "agent:main:main"


class Greeter:
    """A capability kind: what the ``greet`` tool asks for."""

    def __init__(self, scope: CapabilityScope) -> None:
        self.scope = scope

    def greeting(self) -> str:
        return f"hello from {self.scope.agent_id} in {self.scope.session_key} ({self.scope.trust.value})"


class Unprovided:
    """A kind no plugin provides."""


def asking_tool(kind: type) -> Tool:
    async def handler(call: ToolCall) -> ToolResult:
        assert call.services is not None
        try:
            found = call.services.capability(kind)
        except ServiceUnavailable as exc:
            return ToolResult.error(str(exc))
        return ToolResult.text(found.greeting())

    return Tool(name="greet", description="Greet", parameters={"type": "object"}, handler=handler)


async def _runtime(make_kernel, provider: ScriptedProvider, **plugins: object) -> AgentRuntime:
    kernel = await make_kernel(plugins=plugins)
    runtime = AgentRuntime(kernel)
    await runtime.conversation("main", chain=[ModelChoice(provider, "m")])
    return runtime


@pytest.mark.hook_emission("clawbot_capabilities")
async def test_hook_capabilities_a_tool_gets_the_capability_a_plugin_provides_built_for_its_turn(make_kernel) -> None:
    scopes: list[CapabilityScope] = []

    def provide(scope: CapabilityScope) -> Greeter:
        scopes.append(scope)
        return Greeter(scope)

    provider = ScriptedProvider([call("greet", "c1")], "done")
    runtime = await _runtime(
        make_kernel,
        provider,
        greeter=plugin_from_hooks(clawbot_capabilities=lambda ctx: [Capability(Greeter, provide)]),
        asker=plugin_from_hooks(clawbot_tools=lambda ctx: [asking_tool(Greeter)]),
    )
    conversation = await runtime.conversation("main")
    await conversation.send(SESSION, "greet me")
    assert provider.requests[1].messages[-1].text == "hello from main in agent:main:main (owner)"
    (scope,) = scopes
    assert (scope.agent_id, scope.session_key, scope.origin, scope.trust) == ("main", SESSION, None, TurnTrust.OWNER)
    assert isinstance(scope.host, AgentHost) and scope.host is runtime.services.host
    assert runtime.kernel.capabilities.plugin_of(Capability(Greeter, provide).name) == "greeter"


async def test_hook_capabilities_a_kind_nobody_provides_tells_the_model_so(make_kernel) -> None:
    provider = ScriptedProvider([call("greet", "c1")], "done")
    runtime = await _runtime(make_kernel, provider, asker=plugin_from_hooks(clawbot_tools=lambda ctx: [asking_tool(Unprovided)]))
    await (await runtime.conversation("main")).send(SESSION, "greet me")
    result = provider.requests[1].messages[-1]
    assert result.is_error and "no installed plugin provides Unprovided" in result.text


async def test_hook_capabilities_two_plugins_providing_one_kind_refuse_to_boot(make_kernel) -> None:
    one = plugin_from_hooks(clawbot_capabilities=lambda ctx: [Capability(Greeter, Greeter)])
    two = plugin_from_hooks(clawbot_capabilities=lambda ctx: [Capability(Greeter, Greeter)])
    with pytest.raises(PluginConflictError) as caught:
        await make_kernel(plugins={"alpha": one, "beta": two})
    (conflict,) = caught.value.conflicts
    assert conflict.startswith(f"capability '{Greeter.__module__}.Greeter' is offered by both plugin")


async def test_hook_capabilities_a_capability_that_is_not_a_kind_is_a_plugin_failure(make_kernel) -> None:
    kernel = await make_kernel(plugins={"sloppy": plugin_from_hooks(clawbot_capabilities=lambda ctx: [Capability("Greeter", Greeter)])})
    (failure,) = kernel.plugins.failures
    assert (failure.plugin, failure.hook) == ("sloppy", "clawbot_capabilities") and "TypeError" in failure.error
    assert len(kernel.capabilities) == 0


async def test_the_host_runs_a_turn_of_an_agent_and_says_what_started_it(make_kernel) -> None:
    ended = []
    provider = ScriptedProvider("it is 7 o'clock")
    runtime = await _runtime(make_kernel, provider, ends=plugin_from_hooks(clawbot_agent_end=lambda event: ended.append(event)))
    host = runtime.services.host
    outcome = await host.run_turn("main", "agent:main:reminders", "what time is it?", kind="cron")
    assert (outcome.text, outcome.stopped) == ("it is 7 o'clock", None)
    assert provider.requests[0].messages[-1].text.endswith("what time is it?")
    assert [(e.session_key, e.kind, e.status) for e in ended] == [("agent:main:reminders", "cron", "ok")]
    assert host.default_agent_id == "main" and host.state_dir == runtime.kernel.paths.root
    assert host.workspace("main").is_absolute() and "~" not in str(host.workspace("main"))
    assert not host.gateway_running and host.channel_names() == []


async def test_the_host_offers_a_turn_only_the_tools_asked_for(make_kernel) -> None:
    provider = ScriptedProvider("ok", "ok")
    runtime = await _runtime(make_kernel, provider, asker=plugin_from_hooks(clawbot_tools=lambda ctx: [asking_tool(Greeter)]))
    host = runtime.services.host
    assert host.agent_tool_names("main") == frozenset({"greet"})
    await host.run_turn("main", "agent:main:a", "hi")
    await host.run_turn("main", "agent:main:b", "hi", tools=())
    assert [[t.name for t in r.tools] for r in provider.requests] == [["greet"], []]


async def test_the_host_refuses_delivery_and_events_without_a_gateway(make_kernel) -> None:
    runtime = await _runtime(make_kernel, ScriptedProvider())
    host = runtime.services.host
    with pytest.raises(ServiceUnavailable, match="no gateway is running"):
        await host.deliver(OutboundMessage(channel="fake", peer_id="alice", text="hi"))
    with pytest.raises(ServiceUnavailable, match="no gateway is running"):
        await host.post_system_event(SESSION, "the build finished")
    with pytest.raises(ServiceUnavailable, match="no agent 'ghost'"):
        await host.run_turn("ghost", "agent:ghost:main", "hi")


async def test_the_host_labels_a_report_as_clawbots_own_and_a_sessions_message_as_that_sessions(make_kernel) -> None:
    provider = ScriptedProvider("noted", "on it")
    runtime = await _runtime(make_kernel, provider)
    host = runtime.services.host
    event_origin = InboundMessage(channel="agent", peer_id="main", text="", chat_type="session", system_event=True)
    await host.run_turn("main", SESSION, "sub-agent 1f2e finished: 42", origin=event_origin)
    await host.run_turn("main", "agent:main:subagent:1f2e", "find the answer", from_session=SESSION, kind="subagent", trust=TurnTrust.NON_OWNER)
    event, task = (request.messages[-1] for request in provider.requests)
    assert "[System event from clawbot, not written by the user]\n  sub-agent 1f2e finished: 42" in event.text
    assert "Message from another clawbot session" in task.text and f'from: "{SESSION}"\n  find the answer' in task.text


async def test_the_host_ends_a_session_for_the_plugins_and_checks_a_model(make_kernel) -> None:
    ended = []
    runtime = await _runtime(make_kernel, ScriptedProvider("done"), ends=plugin_from_hooks(clawbot_session_end=lambda event: ended.append(event)))
    host = runtime.services.host
    await host.end_session("agent:main:subagent:never", "sub-agent done")  # never started: nothing to end
    await host.run_turn("main", "agent:main:subagent:ab12", "work", kind="subagent")
    await host.end_session("agent:main:subagent:ab12", "sub-agent done")
    assert [(e.session_key, e.reason) for e in ended] == [("agent:main:subagent:ab12", "sub-agent done")]
    problem = host.model_problem("nowhere/model-x", "main")
    assert problem is not None and "nowhere" in problem
