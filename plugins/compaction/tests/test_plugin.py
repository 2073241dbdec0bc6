"""The plugin as installed: its entry point offers ``summary`` and ``trim``; the default
configuration makes ``summary`` active, a configured name the other, and doctor says which."""

from __future__ import annotations

from pathlib import Path

import pytest
from clawbot.testing import build_kernel
from clawbot.testing.cli import invoke_cli


@pytest.mark.parametrize(("config", "active"), [(None, "summary"), ('[agents.defaults.compaction]\nstrategy = "trim"\n', "trim")])
async def test_the_entry_point_offers_both_strategies_and_the_configured_one_is_active(clawbot_home: Path, config, active) -> None:
    kernel = await build_kernel(clawbot_home, config=config, load_entrypoints=True)
    try:
        assert {"summary", "trim"} <= set(kernel.compaction_strategies.names())
        assert kernel.compaction_strategies.plugin_of("summary") == kernel.compaction_strategies.plugin_of("trim") == "compaction"
        assert kernel.compaction_strategy.name == active
    finally:
        await kernel.aclose()


def test_doctor_shows_the_default_summary_strategy(clawbot_home: Path) -> None:
    run = invoke_cli("doctor", home=clawbot_home)
    assert "compaction strategy 'summary' is active (plugin compaction)" in " ".join(run.stdout.split())


def test_loading_the_plugin_imports_none_of_its_strategies() -> None:
    import subprocess
    import sys

    code = "import sys, clawbot_compaction.plugin; print(sorted(m for m in sys.modules if m.startswith('clawbot_compaction')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['clawbot_compaction', 'clawbot_compaction.plugin']"
