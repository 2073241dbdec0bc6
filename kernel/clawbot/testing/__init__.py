"""Test kit for clawbot and for plugin authors (its fixtures: ``clawbot.testing.pytest_plugin``,
loaded where a conftest.py asks: ``pytest_plugins = ["clawbot.testing.pytest_plugin"]``).

* :class:`FakeChannel` injects inbound messages and collects outbound ones.
* :func:`build_kernel` builds a fresh kernel with exactly the plugins a test names, seen as a
  :class:`TestKernel`: what the plugins registered, their settings and failures, and real
  turns (:meth:`TestKernel.run_turn`, :class:`TestConversation`), gateways
  (:class:`TestGateway`) and agents with approvals and tool services (:class:`TestAgents`).
* :func:`running_gateway` runs a real gateway on a test's channels: agents, services, tools.
* :class:`ResponderHost` is an ``AgentHost`` whose turns a test function answers (a service without a model).
* ``clawbot.testing.fake_llm.FakeLLM`` is a fake Anthropic / OpenAI server for the real SDKs.
* :func:`plant_hostile` puts a FIFO, a socket, a link out, a huge file ... (:data:`HOSTILE_KINDS`)
  where a reader expects a workspace file; :func:`call_in_thread` fails a test whose reader blocks.
* :data:`AWKWARD_TEXT` names strings every writer of model or channel text to disk must store.
* :class:`ConfigError`, :class:`HookFailure`, :func:`create_plugin_manager` and
  :func:`schema_problem` are the kernel names a plugin's tests check against (a bad table, a
  failing hook, a plugin that loads, a tool's parameters the kernel accepts as a JSON schema),
  so those tests import nothing but the public API.

Fixtures (``clawbot_home``, ``workspace``, ``make_kernel``, ``fake_channel``, ``fake_llm``,
``fake_llm_server``) are documented in :mod:`clawbot.testing.pytest_plugin`.
"""

from clawbot.agent.toolrun import schema_problem
from clawbot.config import ConfigError, ConfigProblem
from clawbot.plugins import HookFailure, create_plugin_manager
from clawbot.testing.agents import APPROVAL_NOTICE_MAX_DETAILS, TestAgents, TestApprovals, approval_notice
from clawbot.testing.awkward_text import AWKWARD_TEXT
from clawbot.testing.configs import config_with_agent_defaults
from clawbot.testing.distributions import install_distribution
from clawbot.testing.fake_channel import FakeChannel
from clawbot.testing.gateway_runs import GatewayInTest, running_gateway
from clawbot.testing.gateways import TestGateway
from clawbot.testing.hostile_files import HOSTILE_KINDS, HOSTILE_SECRET, call_in_thread, plant_hostile, secret_outside
from clawbot.testing.hosts import ResponderHost
from clawbot.testing.kernel_view import TestKernel
from clawbot.testing.kernels import build_kernel, plugin_from_hooks
from clawbot.testing.turns import TestConversation, TurnReply

__all__ = [
    "APPROVAL_NOTICE_MAX_DETAILS",
    "AWKWARD_TEXT",
    "ConfigError",
    "ConfigProblem",
    "FakeChannel",
    "GatewayInTest",
    "HOSTILE_KINDS",
    "HookFailure",
    "HOSTILE_SECRET",
    "TestAgents",
    "TestApprovals",
    "TestConversation",
    "TestGateway",
    "TestKernel",
    "TurnReply",
    "approval_notice",
    "build_kernel",
    "call_in_thread",
    "config_with_agent_defaults",
    "create_plugin_manager",
    "install_distribution",
    "plant_hostile",
    "plugin_from_hooks",
    "schema_problem",
    "running_gateway",
    "ResponderHost",
    "secret_outside",
]
