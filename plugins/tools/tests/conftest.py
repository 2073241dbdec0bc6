"""Fixtures shared by the tools tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from .exec_support import Harness


@pytest.fixture
async def make_harness():
    """``Harness(...)`` that is closed after the test (its processes killed, its temp dirs gone)."""
    made: list[Harness] = []

    def make(*args, **kwargs) -> Harness:
        harness = Harness(*args, **kwargs)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        await harness.close()


@pytest.fixture
async def gate(world: Path):
    """The requesting module's ``world`` with the real exec tools: allowlist mode, default
    safe bins, no chat (so a line that asks never runs)."""
    harness = Harness.in_world(world)
    yield harness
    await harness.close()
