"""The shipped memory provider for ``memory_locomo.py --provider locomo_provider:shipped``:
SqliteMemory with the default [plugins.memory] settings (local offline embedder), exactly
what an agent's memory_search runs."""

from __future__ import annotations

import os
from pathlib import Path


def shipped(**settings):
    """``make_provider(workspace, state_dir)`` for the shipped provider, default settings but
    for ``settings`` (``embedder="none"``: keyword only; ``disable=["fts5"]``: vectors only)."""
    from clawbot_memory.config import MemorySettings
    from clawbot_memory.provider import SqliteMemory

    def make(workspace: Path, state_dir: Path):
        return SqliteMemory(settings=MemorySettings(**settings), state_dir=state_dir, workspace_of=lambda _agent: workspace, env=dict(os.environ))

    return make
