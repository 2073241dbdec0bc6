"""API keys never appear in reprs, logs, transcripts or CLI output."""

from __future__ import annotations

from pathlib import Path

import clawbot_openai.plugin as openai_plugin
from clawbot.testing.cli import invoke_cli

SENTINEL = "sk-SENTINEL-do-not-print-9f3a"
CONFIG = f"""
[[auth.profiles]]
provider = "openai"
id = "spare"
api_key = "{SENTINEL}-spare"

[providers.openai]
api_key = "{SENTINEL}"
"""


async def test_no_repr_shows_a_key(make_kernel) -> None:
    kernel = await make_kernel(plugins={"openai": openai_plugin}, config=CONFIG, env={"OPENAI_API_KEY": SENTINEL + "-env"})
    ctx = kernel.plugin_context("openai")
    for thing in (kernel, kernel.config, ctx, ctx.section("providers.openai"), kernel.config.auth, kernel.llm_providers["openai"]):
        assert SENTINEL not in repr(thing), type(thing).__name__
    assert kernel.config.section("providers.openai").api_key == SENTINEL  # still usable


def test_debug_logs_and_json_output_of_a_real_turn_hold_no_key(tmp_path: Path, fake_llm_thread) -> None:
    fake_llm_thread.reply("hello")
    (tmp_path / "clawbot.toml").write_text(
        CONFIG.replace("[providers.openai]", f'[providers.openai]\nbase_url = "{fake_llm_thread.base_url}/v1"')
        + '\n[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n[logging]\nlevel = "debug"\n'
    )
    result = invoke_cli("agent", "-m", "hi", "--json", home=tmp_path, env={"CLAWBOT_TRACE_PLUGINS": "1"})
    assert result.returncode == 0, result.stderr
    assert fake_llm_thread.requests[-1].headers["authorization"] == f"Bearer {SENTINEL}"
    assert SENTINEL not in result.stdout + result.stderr
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.name != "clawbot.toml":
            assert SENTINEL not in path.read_text(errors="replace"), path
    shown = invoke_cli("config", "show", home=tmp_path)
    assert SENTINEL not in shown.stdout and "***" in shown.stdout
