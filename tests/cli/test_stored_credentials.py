"""Stored model-provider credentials become the variables each provider reads."""

from __future__ import annotations

from pathlib import Path

from clawbot.credentials import credential_env, save_credential
from clawbot.paths import StatePaths


def test_credential_env_maps_stored_files_to_the_provider_variables(tmp_path: Path) -> None:
    paths = StatePaths(tmp_path)
    assert credential_env(paths) == {}
    save_credential(paths, "anthropic", "sk-ant", "https://proxy.example/anthropic")
    save_credential(paths, "ollama", "", "http://gpu-box:11434/v1")
    save_credential(paths, "someone-else", "secret")  # no known variables: left out
    assert credential_env(paths) == {
        "ANTHROPIC_API_KEY": "sk-ant",
        "ANTHROPIC_BASE_URL": "https://proxy.example/anthropic",
        "OLLAMA_BASE_URL": "http://gpu-box:11434/v1",
    }
