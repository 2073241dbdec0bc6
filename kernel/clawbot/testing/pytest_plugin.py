"""The pytest plugin of ``clawbot.testing``: its fixtures load only where a project asks for them.

A plugin's ``tests/conftest.py`` (or the project's root conftest.py) says::

    pytest_plugins = ["clawbot.testing.pytest_plugin"]

(or ``pytest -p clawbot.testing.pytest_plugin``). Installing clawbot registers no pytest
plugin, so no other project's test run gets these fixtures.

Fixtures:

``clawbot_home``
    A private state directory; ``CLAWBOT_HOME`` and ``HOME`` point at it for the test.
``workspace``
    An empty agent workspace directory.
``make_kernel``
    ``await make_kernel(plugins={...}, config="...")``: a fresh
    :class:`~clawbot.testing.TestKernel` with exactly those plugins (see
    :func:`clawbot.testing.build_kernel`).
``fake_channel``
    A :class:`~clawbot.testing.FakeChannel` named ``fake``.
``fake_llm``
    A fake Anthropic / OpenAI server used in process (``fake_llm.http_client()``).
``fake_llm_server``
    The same fake, served over 127.0.0.1; the fixture value is the running ``FakeLLM`` and
    ``fake_llm_server.base_url`` its address.

This module imports only what its fixtures need when they are used, so installing clawbot
does not slow down unrelated test suites.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def clawbot_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "clawbot-home"
    home.mkdir()
    monkeypatch.setenv("CLAWBOT_HOME", str(home))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAWBOT_CONFIG", raising=False)
    monkeypatch.delenv("CLAWBOT_DISABLE_PLUGINS", raising=False)
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def make_kernel(clawbot_home: Path) -> Any:
    from clawbot.testing.kernels import build_kernel

    async def factory(**kwargs: Any) -> Any:
        return await build_kernel(kwargs.pop("home", clawbot_home), **kwargs)

    return factory


@pytest.fixture
def fake_channel() -> Any:
    from clawbot.testing.fake_channel import FakeChannel

    return FakeChannel()


@pytest.fixture
def fake_llm() -> Any:
    from clawbot.testing.fake_llm import FakeLLM

    return FakeLLM()


@pytest.fixture
async def fake_llm_server(fake_llm: Any) -> AsyncIterator[Any]:
    async with fake_llm.serve() as base_url:
        fake_llm.base_url = base_url
        yield fake_llm


@pytest.fixture
def fake_llm_thread(fake_llm: Any) -> Iterator[Any]:
    """The fake served from a background thread, for tests that start subprocesses."""
    with fake_llm.serve_in_thread() as base_url:
        fake_llm.base_url = base_url
        yield fake_llm
