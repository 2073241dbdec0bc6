"""What the test kit hands a plugin's tests is the public view, never the kernel's own objects.

A plugin test that could reach the internal ``Kernel`` (or its plugin manager, gateway,
agent runtime or conversation) through ``make_kernel`` would come to depend on it, and
break with every release that reshapes the kernel.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from clawbot.agent.conversation import Conversation
from clawbot.agent.runtime import AgentRuntime
from clawbot.gateway.runner import Gateway
from clawbot.kernel import Kernel
from clawbot.plugins import PluginManager
from clawbot.testing import FakeChannel, TestAgents, TestConversation, TestGateway, TestKernel, build_kernel
from clawbot.types import LLMProvider, Message

INTERNAL = (Kernel, PluginManager, Gateway, AgentRuntime, Conversation)


class Silent(LLMProvider):
    name = "silent"

    async def complete(self, request, on_text=None):  # noqa: ANN001, ANN201
        return Message.assistant("")


async def respond(message, session_key):  # noqa: ANN001, ANN201
    return None


def public_values(view: object) -> dict[str, object]:
    """Every public attribute of ``view`` that is not a method: what a test can read off it."""
    names = [name for name, member in inspect.getmembers(type(view)) if not name.startswith("_") and isinstance(member, property)]
    return {name: getattr(view, name) for name in names}


async def test_every_view_the_test_kit_hands_out_holds_no_internal_object(tmp_path: Path) -> None:
    kernel = await build_kernel(tmp_path / "home", plugins={"fake": FakeChannel().as_plugin()})
    agents = kernel.agents()
    try:
        views = [
            kernel,
            kernel.conversation(Silent()),
            kernel.gateway(respond),
            agents,
            agents.approvals,
            await agents.conversation(Silent()),
            agents.gateway(),
        ]
        assert [type(view) for view in views[:4]] == [TestKernel, TestConversation, TestGateway, TestAgents]
        leaks = {
            f"{type(view).__name__}.{name}": type(value).__name__
            for view in views
            for name, value in public_values(view).items()
            if isinstance(value, INTERNAL)
        }
        assert leaks == {}
        assert not any(hasattr(kernel, name) for name in ("plugins", "paths", "sessions", "auth", "active"))
    finally:
        await agents.aclose()
        await kernel.aclose()
