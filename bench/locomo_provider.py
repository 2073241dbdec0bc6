"""The shipped memory provider for ``memory_locomo.py --provider locomo_provider:shipped``:
SqliteMemory with the default [plugins.memory] settings (local offline embedder), exactly
what an agent's memory_search runs."""

from __future__ import annotations

import os
from pathlib import Path


def shipped(workspace: Path, state_dir: Path):
    from clawbot_memory.config import MemorySettings
    from clawbot_memory.provider import SqliteMemory

    return SqliteMemory(settings=MemorySettings(), state_dir=state_dir, workspace_of=lambda _agent: workspace, env=dict(os.environ))
