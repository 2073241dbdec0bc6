"""``clawbot config show|validate|path`` as a user runs them."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import attrs
from clawbot.config import CoreConfig
from clawbot.testing.cli import invoke_cli

from .confighelpers import write

SECRET = "sk-test-9f8e7d6c5b4a-do-not-print"


def _defaults_tree() -> dict:
    """The core defaults as ``config show --json`` prints them."""
    return json.loads(json.dumps(attrs.asdict(CoreConfig())))


def test_show_fills_in_every_default(tmp_path: Path) -> None:
    result = invoke_cli("config", "show", "--json", home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    tree = json.loads(result.stdout)
    plugin_tables = {k: v for k, v in tree["plugins"].items() if k not in ("allow", "deny")}
    tree["plugins"] = {k: v for k, v in tree["plugins"].items() if k in ("allow", "deny")}
    for key, value in _defaults_tree().items():
        assert tree[key] == value
    assert set(plugin_tables) <= {"tools", "memory"}  # [plugins.<name>] tables of the installed default plugins
    assert tree["channels"]["terminal"] == {"enabled": True, "prompt": "you> ", "peer_id": "local", "user_name": "you"}
    assert tree["providers"]["openai"] == {
        "api_key": "",
        "base_url": "",
        "api": "chat",
        "timeout_s": 600.0,
        "connect_timeout_s": 5.0,
        "stream_idle_timeout_s": 300.0,
    }
    assert tree["providers"]["anthropic"] == {"api_key": "", "base_url": "", "timeout_s": 600.0, "connect_timeout_s": 5.0, "stream_idle_timeout_s": 120.0}


def test_show_merges_the_file_with_the_defaults(tmp_path: Path) -> None:
    config = write(tmp_path / "c.toml", '[agents.defaults]\nthinking = "low"\n[channels.terminal]\nprompt = "> "\n')
    result = invoke_cli("--config", str(config), "config", "show", "--json", home=tmp_path / "home")
    tree = json.loads(result.stdout)
    assert tree["agents"]["defaults"]["thinking"] == "low"
    assert tree["agents"]["defaults"]["max_iterations"] == 40
    assert tree["channels"]["terminal"]["prompt"] == "> " and tree["channels"]["terminal"]["enabled"] is True


def test_show_prints_toml_that_is_itself_a_valid_config(tmp_path: Path) -> None:
    config = write(tmp_path / "c.toml", '[logging]\nlevel = "info"\n[[agents.list]]\nid = "main"\nmodel = { primary = "openai/gpt-4o" }\n')
    result = invoke_cli("--config", str(config), "config", "show", home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == f"# effective configuration from {config}"
    shown = tomllib.loads(result.stdout)
    as_json = json.loads(invoke_cli("--config", str(config), "config", "show", "--json", home=tmp_path / "home").stdout)
    assert shown["logging"] == as_json["logging"] == {"level": "info", "file_max_bytes": 5_000_000, "file_backups": 5}
    assert shown["agents"]["list"] == [{"id": "main", "name": "", "default": False, "workspace": "", "model": {"primary": "openai/gpt-4o", "fallbacks": []}}]
    again = write(tmp_path / "again.toml", result.stdout)
    check = invoke_cli("--config", str(again), "config", "validate", home=tmp_path / "home")
    assert check.returncode == 0, check.stderr
    reshown = invoke_cli("--config", str(again), "config", "show", "--json", home=tmp_path / "home")
    assert json.loads(reshown.stdout) == as_json


def test_show_says_when_only_defaults_are_used(tmp_path: Path) -> None:
    result = invoke_cli("config", "show", home=tmp_path / "home")
    assert result.stdout.splitlines()[0] == "# effective configuration from built-in defaults"


def test_show_masks_secrets_set_through_the_environment(tmp_path: Path) -> None:
    config = write(
        tmp_path / "c.toml",
        '[providers.openai]\napi_key = "${MY_OPENAI_KEY}"\n[providers.anthropic]\napi_key = "${MY_ANTHROPIC_KEY:-fallback-secret}"\n',
    )
    env = {"MY_OPENAI_KEY": SECRET}
    for argv in (("config", "show"), ("config", "show", "--json")):
        result = invoke_cli("--config", str(config), *argv, home=tmp_path / "home", env=env)
        assert result.returncode == 0, result.stderr
        assert SECRET not in result.stdout and SECRET not in result.stderr
        assert "fallback-secret" not in result.stdout
        tree = json.loads(result.stdout) if "--json" in argv else tomllib.loads(result.stdout)
        assert tree["providers"]["openai"]["api_key"] == "***"
        assert tree["providers"]["anthropic"]["api_key"] == "***"
        assert tree["providers"]["openai"]["base_url"] == ""  # only secrets are masked


def test_show_masks_a_secret_written_in_the_file(tmp_path: Path) -> None:
    config = write(tmp_path / "c.toml", f'[providers.anthropic]\napi_key = "{SECRET}"\n')
    result = invoke_cli("--config", str(config), "config", "show", home=tmp_path / "home")
    assert SECRET not in result.stdout
    assert tomllib.loads(result.stdout)["providers"]["anthropic"]["api_key"] == "***"


def test_validate_prints_the_file_and_valid(tmp_path: Path) -> None:
    config = write(tmp_path / "c.toml", '[logging]\nlevel = "error"\n')
    result = invoke_cli("--config", str(config), "config", "validate", home=tmp_path / "home")
    assert (result.returncode, result.stdout, result.stderr) == (0, f"{config}: valid\n", "")


def test_validate_does_not_need_the_secret_variables_when_a_fallback_is_given(tmp_path: Path) -> None:
    config = write(tmp_path / "c.toml", '[providers.openai]\napi_key = "${OPENAI_API_KEY:-}"\n')
    result = invoke_cli("--config", str(config), "config", "validate", home=tmp_path / "home")
    assert result.returncode == 0, result.stderr


def test_missing_variable_through_the_cli(tmp_path: Path) -> None:
    config = write(tmp_path / "c.toml", '[providers.openai]\napi_key = "${NOPE}"\n')
    result = invoke_cli("--config", str(config), "config", "validate", home=tmp_path / "home")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        f"{config}: 1 problem:",
        "  - providers.openai.api_key: environment variable NOPE is not set (or empty)",
    ]
    ok = invoke_cli("--config", str(config), "config", "validate", home=tmp_path / "home", env={"NOPE": SECRET})
    assert ok.returncode == 0 and SECRET not in ok.stdout + ok.stderr


def test_path_prints_only_the_path(tmp_path: Path) -> None:
    config = write(tmp_path / "home" / "clawbot.toml", "this is not even TOML =")
    result = invoke_cli("config", "path", home=tmp_path / "home")
    assert (result.returncode, result.stdout) == (0, f"{config}\n")  # path does not validate


def test_config_help_lists_the_subcommands(tmp_path: Path) -> None:
    result = invoke_cli("config", "--help", home=tmp_path / "home")
    assert result.returncode == 0
    for name in ("show", "validate", "path"):
        assert name in result.stdout
