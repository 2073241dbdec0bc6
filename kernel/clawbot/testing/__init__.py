"""Test kit for clawbot and for plugin authors (also a pytest plugin: ``clawbot.testing.pytest_plugin``).

* :class:`FakeChannel` injects inbound messages and collects outbound ones.
* :func:`build_kernel` builds a fresh kernel with exactly the plugins a test names.
* ``clawbot.testing.fake_llm.FakeLLM`` is a fake Anthropic / OpenAI server for the real SDKs.
* :data:`AWKWARD_TEXT` names strings every writer of model or channel text to disk must store.

Fixtures (``clawbot_home``, ``workspace``, ``make_kernel``, ``fake_channel``, ``fake_llm``,
``fake_llm_server``) are documented in :mod:`clawbot.testing.pytest_plugin`.
"""

from clawbot.testing.awkward_text import AWKWARD_TEXT
from clawbot.testing.distributions import install_distribution
from clawbot.testing.fake_channel import FakeChannel
from clawbot.testing.kernels import build_kernel, plugin_from_hooks

__all__ = ["AWKWARD_TEXT", "FakeChannel", "build_kernel", "install_distribution", "plugin_from_hooks"]
