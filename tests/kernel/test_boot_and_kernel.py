"""Booting a kernel: plugins named explicitly, registries with provenance, conflicts."""

from __future__ import annotations

import attrs
import pytest
from clawbot import ConfigSection, Tool, ToolResult
from clawbot.config import ConfigError
from clawbot.kernel import PluginConflictError
from clawbot.testing import plugin_from_hooks


def _tool(name: str) -> Tool:
    return Tool(name=name, description=f"{name} tool", parameters={"type": "object"}, handler=lambda call: ToolResult.text("ok"))


@attrs.frozen
class GreeterSettings:
    greeting: str = "hello"
    times: int = 1


async def test_plugin_gets_its_own_validated_settings_and_claimed_sections(make_kernel) -> None:
    seen = {}

    def tools(ctx):
        seen["settings"], seen["sections"], seen["name"] = ctx.settings, dict(ctx.sections), ctx.plugin_name
        return [_tool("greet")]

    plugin = plugin_from_hooks(clawbot_config_schema=lambda: GreeterSettings, clawbot_tools=tools)
    kernel = await make_kernel(plugins={"greeter": plugin}, config='[plugins.greeter]\ngreeting = "hi"\n')
    assert seen["name"] == "greeter"
    assert seen["settings"] == GreeterSettings(greeting="hi", times=1)
    assert seen["sections"] == {"plugins.greeter": GreeterSettings(greeting="hi")}
    assert kernel.tools.names() == ["greet"] and kernel.tools.plugin_of("greet") == "greeter"
    assert kernel.config.owners == {"plugins.greeter": "greeter"}


async def test_every_conflict_is_reported_at_once_with_both_plugin_names(make_kernel) -> None:
    a = plugin_from_hooks(clawbot_tools=lambda ctx: [_tool("read"), _tool("write")])
    b = plugin_from_hooks(clawbot_tools=lambda ctx: [_tool("read"), _tool("write"), _tool("ls")])
    with pytest.raises(PluginConflictError) as info:
        await make_kernel(plugins={"alpha": a, "beta": b})
    message = str(info.value)
    assert "tool 'read' is offered by both plugin" in message and "tool 'write'" in message
    assert "'alpha'" in message and "'beta'" in message
    assert "plugins.deny" in message
    assert len(info.value.conflicts) == 2


async def test_a_plugin_that_raises_while_registering_is_recorded_and_others_still_register(make_kernel) -> None:
    def broken(ctx):
        raise RuntimeError("cannot reach my backend")

    kernel = await make_kernel(plugins={"good": plugin_from_hooks(clawbot_tools=lambda ctx: [_tool("fine")]), "bad": plugin_from_hooks(clawbot_tools=broken)})
    assert kernel.tools.names() == ["fine"]
    (failure,) = kernel.plugins.failures
    assert failure.plugin == "bad" and failure.hook == "clawbot_tools"
    assert "cannot reach my backend" in failure.error


async def test_config_errors_of_core_and_plugin_tables_come_together(make_kernel) -> None:
    plugin = plugin_from_hooks(clawbot_config_schema=lambda: GreeterSettings)
    config = '[plugins.greeter]\ntimes = "twice"\n\n[logging]\nlevel = "loud"\n\n[agents.defaults]\nworkspce = "~/w"\n'
    with pytest.raises(ConfigError) as info:
        await make_kernel(plugins={"greeter": plugin}, config=config)
    paths = [p.path for p in info.value.problems]
    assert paths == ["agents.defaults.workspce", "logging.level", "plugins.greeter.times"]
    text = str(info.value)
    assert 'expected one of "debug", "info", "warning", "error", got "loud"' in text
    assert "did you mean workspace?" in text
    assert 'expected an integer, got "twice"' in text


async def test_claiming_a_channel_table(make_kernel) -> None:
    @attrs.frozen
    class ChatConfig:
        token: str
        enabled: bool = True

    plugin = plugin_from_hooks(clawbot_config_schema=lambda: ConfigSection("channels.chat", ChatConfig))
    kernel = await make_kernel(plugins={"chat": plugin})
    assert kernel.config.section("channels.chat") is None  # not configured: required key missing is fine
    kernel = await make_kernel(plugins={"chat": plugin}, config='[channels.chat]\ntoken = "${CHAT_TOKEN}"\n', env={"CHAT_TOKEN": "t-1"})
    assert kernel.config.section("channels.chat") == ChatConfig(token="t-1")
    with pytest.raises(ConfigError) as info:
        await make_kernel(plugins={"chat": plugin}, config="[channels.chat]\nenabled = false\n")
    assert str(info.value.problems[0]) == "channels.chat.token: required key is missing"


async def test_an_agent_uses_its_own_workspace_else_the_default(make_kernel) -> None:
    config = (
        '[agents.defaults]\nworkspace = "~/shared"\n\n[[agents.list]]\nid = "main"\ndefault = true\n\n[[agents.list]]\nid = "coder"\nworkspace = "~/code"\n'
    )
    kernel = await make_kernel(config=config)
    assert kernel.config.agent_workspace("coder") == "~/code"
    assert kernel.config.agent_workspace("main") == "~/shared"
    assert kernel.config.default_agent_id() == "main"


def test_every_public_type_is_exported_by_clawbot_types_and_reachable_from_clawbot() -> None:
    import clawbot
    import clawbot.types as types

    public = {name for name in vars(types) if name[:1].isupper()}
    assert set(types.__all__) == public  # a new type must be added to __all__
    assert all(getattr(clawbot, name) is getattr(types, name) for name in types.__all__)
