"""What a plugin reads of clawbot's settings (``ctx.clawbot``) cannot be changed by it, and the
state it keeps (``ctx.state``) is its own, the same in every hook, and one per kernel."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import attrs
import pytest
from clawbot import hookimpl
from clawbot.agent.system_prompt import PromptRequest, build_system_prompt
from clawbot.gateway.runner import Gateway
from clawbot.testing import FakeChannel, plugin_from_hooks
from clawbot.types import AgentSettings, HeartbeatSettings, Settings
from clawbot.types.settings import DEFAULT_HEARTBEAT_PROMPT

AGENTS = """
[agents.defaults]
workspace = "~/shared"
timezone = "Europe/Berlin"
owner_ids = ["+15550001"]
model_aliases = { opus = "anthropic/claude-opus-4-5" }
bootstrap_max_chars = 5000

[agents.defaults.model]
primary = "anthropic/claude-opus-4-5"

[[agents.list]]
id = "main"
default = true

[[agents.list]]
id = "coder"
name = "Coder"
workspace = "~/code"
model = "openai/gpt-5"

[skills]
prompt_max_chars = 4000
"""


class Keeper:
    """A plugin that notes, in every hook it gets, the state and settings it was handed."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any], Settings]] = []

    @hookimpl
    def clawbot_tools(self, ctx):  # noqa: ANN001, ANN201 - the hook's signature
        ctx.state["made in"] = "clawbot_tools"
        self.seen.append(("clawbot_tools", ctx.state, ctx.clawbot))
        return []

    @hookimpl
    def clawbot_prompt_sections(self, ctx):  # noqa: ANN001, ANN201
        self.seen.append(("clawbot_prompt_sections", ctx.state, ctx.clawbot))
        return []

    @hookimpl
    def clawbot_bootstrap_files(self, ctx):  # noqa: ANN001, ANN201
        self.seen.append(("clawbot_bootstrap_files", ctx.state, ctx.clawbot))

    @hookimpl
    def clawbot_gateway_start(self, event):  # noqa: ANN001, ANN201
        self.seen.append(("clawbot_gateway_start", event.state, event.clawbot))


def tools_context_catcher(caught: list[Any]) -> object:
    def clawbot_tools(ctx):  # noqa: ANN001, ANN202
        caught.append(ctx)
        return []

    return plugin_from_hooks(clawbot_tools=clawbot_tools)


async def test_a_plugin_reads_the_settings_typed_and_cannot_change_them(make_kernel, clawbot_home: Path) -> None:
    caught: list[Any] = []
    kernel = await make_kernel(plugins={"reader": tools_context_catcher(caught)}, config=AGENTS)
    settings = caught[0].clawbot

    assert settings.agents == (
        AgentSettings("main", workspace=clawbot_home / "shared", model="anthropic/claude-opus-4-5", default=True),
        AgentSettings("coder", name="Coder", workspace=clawbot_home / "code", model="openai/gpt-5"),
    )
    assert settings.default_agent_id == "main"
    assert settings.workspace_of("coder") == clawbot_home / "code"
    assert settings.workspace_of("not-listed") == settings.default_workspace == clawbot_home / "shared"
    assert (settings.timezone, settings.owner_ids, dict(settings.model_aliases)) == ("Europe/Berlin", ("+15550001",), {"opus": "anthropic/claude-opus-4-5"})
    assert (settings.bootstrap_max_chars, settings.skills_prompt_max_chars, settings.skills_prompt_description_max_chars) == (5000, 4000, 500)
    with pytest.raises(KeyError, match="no agent 'ghost' is configured"):
        settings.agent("ghost")

    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        settings.timezone = "UTC"
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        settings.agents[0].workspace = Path("/elsewhere")
    with pytest.raises(TypeError):
        settings.model_aliases["opus"] = "evil/model"  # type: ignore[index]
    with pytest.raises(AttributeError):
        settings.agents.append(AgentSettings("intruder"))  # type: ignore[attr-defined]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        caught[0].clawbot = Settings()
    assert kernel.settings == settings and kernel.settings.timezone == "Europe/Berlin"


HEARTBEATS = """
[agents.defaults.heartbeat]
every_minutes = 45
model = "cheap/model"
active_from = "08:00"
active_until = "22:00"
ack_max_chars = 80
target = "none"

[[agents.list]]
id = "main"
default = true

[[agents.list]]
id = "ops"
heartbeat = { every_minutes = 10, model = "other/fast" }

[[agents.list]]
id = "quiet"
heartbeat = { every_minutes = 0 }

[tools]
agent_to_agent = ["main", "ops"]
"""


async def test_each_agent_reads_its_heartbeat_with_its_own_cadence_and_model_over_the_defaults(make_kernel) -> None:
    kernel = await make_kernel(config=HEARTBEATS)
    settings = kernel.settings
    defaults = HeartbeatSettings(45, "cheap/model", DEFAULT_HEARTBEAT_PROMPT, "08:00", "22:00", 80, "none")
    assert settings.heartbeat == settings.heartbeat_of("main") == settings.heartbeat_of("not-listed") == defaults
    assert settings.heartbeat_of("ops") == attrs.evolve(defaults, every_minutes=10, model="other/fast")
    assert settings.heartbeat_of("quiet") == attrs.evolve(defaults, every_minutes=0)
    assert settings.agent_to_agent == ("main", "ops")


async def run_every_hook(kernel: Any, workspace: Path) -> None:
    """The kernel's own calls: a system prompt (sections, bootstrap files) and a gateway start."""
    await build_system_prompt(kernel, PromptRequest("main", "agent:main:main", workspace, {}))
    channel = kernel.channels["fake"]
    gateway = Gateway(kernel, lambda message, session_key: asyncio.sleep(0, "ok"), "main")
    running = asyncio.create_task(gateway.run([channel]))
    await channel.wait_started()
    gateway.stop()
    await running


async def test_a_plugin_keeps_one_state_in_every_hook_and_another_in_another_kernel(make_kernel, clawbot_home: Path, workspace: Path) -> None:
    keeper = Keeper()  # one plugin object, as a module plugin is, in two kernels of one process
    others: list[Any] = []
    kernels = []
    for home in ("one", "two"):
        plugins = {"keeper": keeper, "other": tools_context_catcher(others), "fake": FakeChannel().as_plugin()}
        kernel = await make_kernel(plugins=plugins, home=clawbot_home / home, config=f'[agents.defaults]\nworkspace = "{workspace}"\n')
        await run_every_hook(kernel, workspace)
        kernels.append(kernel)

    hooks = ["clawbot_tools", "clawbot_bootstrap_files", "clawbot_prompt_sections", "clawbot_gateway_start"]
    first, second = keeper.seen[:4], keeper.seen[4:]
    assert [hook for hook, _, _ in first] == [hook for hook, _, _ in second] == hooks
    assert all(state is first[0][1] for _, state, _ in first), "one kernel hands the plugin one state in every hook"
    assert all(state is second[0][1] for _, state, _ in second)
    assert first[0][1] is not second[0][1] and first[0][1] == second[0][1] == {"made in": "clawbot_tools"}
    assert all(settings is kernels[0].settings for _, _, settings in first)
    assert all(settings is kernels[1].settings for _, _, settings in second)
    assert others[0].state is not first[0][1] and others[0].state == {}, "another plugin's state is its own"
    assert kernels[0].plugins.failures == kernels[1].plugins.failures == []
