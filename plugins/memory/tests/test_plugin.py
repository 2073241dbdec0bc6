"""The plugin through the kernel: the "sqlite" provider, its [plugins.memory] table, the
index under the state directory, each agent's own workspace."""

from __future__ import annotations

from pathlib import Path

import clawbot_memory.plugin
import pytest
from clawbot.testing import ConfigError, build_kernel

from .memory_support import write


def config(tmp_path: Path, memory: str = "") -> str:
    return f"""
[agents.defaults]
workspace = "{tmp_path / "ws-main"}"

[[agents.list]]
id = "main"
default = true

[[agents.list]]
id = "helper"
workspace = "{tmp_path / "ws-helper"}"

[plugins.memory]
{memory if "embedder" in memory else 'embedder = "none"'}
{"" if "embedder" in memory else memory}
"""


async def test_the_kernel_serves_memory_from_the_sqlite_provider(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(tmp_path / "ws-main" / "MEMORY.md", "The boiler was serviced in March.\n")
    write(tmp_path / "ws-helper" / "memory" / "2024-01-01.md", "Helper notes about the boiler.\n")
    kernel = await build_kernel(home, plugins={"memory": clawbot_memory.plugin}, config=config(tmp_path, "max_results = 3"))
    try:
        provider = kernel.memory_provider
        assert provider is not None and provider.name == "sqlite"
        found = await provider.search("boiler", agent_id="main")
        assert [(h.path, h.start_line, h.end_line) for h in found.hits] == [("MEMORY.md", 1, 1)]
        assert found.mode == "keyword"
        helper = await provider.search("boiler", agent_id="helper")
        assert [h.path for h in helper.hits] == ["memory/2024-01-01.md"]
        status = await provider.status(agent_id="main")
        assert status.index_path == str(home / "memory" / "main.sqlite") and status.index_bytes > 0
        assert (status.files, status.chunks, status.dirty) == (1, 1, False)
        assert (home / "memory" / "helper.sqlite").is_file()
    finally:
        await kernel.aclose()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("chunk_overlap = 5000", "plugins.memory.chunk_overlap: must be between 0 and 4096, got 5000"),
        ("chunk_tokens = 2", "plugins.memory.chunk_tokens: must be between 16 and 8192, got 2"),
        ("max_results = 0", "plugins.memory.max_results: must be between 1 and 100, got 0"),
        ("min_score = 1.5", "plugins.memory.min_score: must be between 0 and 1, got 1.5"),
        ("watch_debounce_ms = -1", "plugins.memory.watch_debounce_ms: must be between 0 and 600000, got -1"),
        ('embedder = "bert"', "plugins.memory.embedder"),
        ('disable = ["sqlite"]', "plugins.memory.disable"),
        ("vector_weight = 0\ntext_weight = 0", "plugins.memory.text_weight: vector_weight and text_weight cannot both be 0"),
        ("chunk_size = 10", "plugins.memory.chunk_size"),
    ],
)
async def test_bad_settings_are_named_by_key(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        await build_kernel(tmp_path / "home", plugins={"memory": clawbot_memory.plugin}, config=config(tmp_path, line))
    assert message in str(raised.value)
