"""Test kit for clawbot and for plugin authors (also a pytest plugin: ``clawbot.testing.pytest_plugin``).

* :class:`FakeChannel` injects inbound messages and collects outbound ones.
* :func:`build_kernel` builds a fresh kernel with exactly the plugins a test names.
* :func:`running_gateway` runs its gateway on a test's channels: agents, services, tools.
* :class:`ResponderHost` is an ``AgentHost`` whose turns a test function answers (a service without a model).
* ``clawbot.testing.fake_llm.FakeLLM`` is a fake Anthropic / OpenAI server for the real SDKs.
* :func:`plant_hostile` puts a FIFO, a socket, a link out, a huge file ... (:data:`HOSTILE_KINDS`)
  where a reader expects a workspace file; :func:`call_in_thread` fails a test whose reader blocks.
* :data:`AWKWARD_TEXT` names strings every writer of model or channel text to disk must store.
* :class:`ConfigError`, :class:`HookFailure` and :func:`create_plugin_manager` are the kernel
  names a plugin's tests check against (a bad table, a failing hook, a plugin that loads),
  so those tests import nothing but the public API.

Fixtures (``clawbot_home``, ``workspace``, ``make_kernel``, ``fake_channel``, ``fake_llm``,
``fake_llm_server``) are documented in :mod:`clawbot.testing.pytest_plugin`.
"""

from clawbot.config import ConfigError, ConfigProblem
from clawbot.plugins import HookFailure, create_plugin_manager
from clawbot.testing.awkward_text import AWKWARD_TEXT
from clawbot.testing.distributions import install_distribution
from clawbot.testing.fake_channel import FakeChannel
from clawbot.testing.gateway_runs import GatewayInTest, running_gateway
from clawbot.testing.hostile_files import HOSTILE_KINDS, HOSTILE_SECRET, call_in_thread, plant_hostile, secret_outside
from clawbot.testing.hosts import ResponderHost
from clawbot.testing.kernels import build_kernel, plugin_from_hooks

__all__ = [
    "AWKWARD_TEXT",
    "ConfigError",
    "ConfigProblem",
    "FakeChannel",
    "GatewayInTest",
    "HOSTILE_KINDS",
    "HookFailure",
    "HOSTILE_SECRET",
    "build_kernel",
    "call_in_thread",
    "create_plugin_manager",
    "install_distribution",
    "plant_hostile",
    "plugin_from_hooks",
    "running_gateway",
    "ResponderHost",
    "secret_outside",
]
