"""Finding the file, falling back to defaults, and plugin-owned tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from clawbot.config import ClawbotConfig, ConfigError, CoreConfig
from clawbot.config.loader import locate_config
from clawbot.testing import install_distribution, plugin_from_hooks
from clawbot.testing.cli import invoke_cli

from .confighelpers import load_config, problems_of, run_cli, write

# ------------------------------------------------------------------ lookup order


@pytest.fixture
def four_files(tmp_path: Path) -> dict[str, Path]:
    """A config file in each of the four places, each with its own log level."""
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    return {
        "flag": write(tmp_path / "flag" / "flag.toml", '[logging]\nlevel = "debug"\n'),
        "env": write(tmp_path / "env" / "env.toml", '[logging]\nlevel = "info"\n'),
        "cwd": write(cwd / "clawbot.toml", '[logging]\nlevel = "error"\n'),
        "home": write(home / "clawbot.toml", '[logging]\nlevel = "warning"\n'),
    }


def _locate(files: dict[str, Path], tmp_path: Path, *, flag: bool, env: bool) -> Path | None:
    environment = {"CLAWBOT_HOME": str(tmp_path / "home")}
    if env:
        environment["CLAWBOT_CONFIG"] = str(files["env"])
    return locate_config(files["flag"] if flag else None, environment, tmp_path / "cwd")


def test_lookup_order_in_process(tmp_path: Path, four_files: dict[str, Path]) -> None:
    assert _locate(four_files, tmp_path, flag=True, env=True) == four_files["flag"]
    assert _locate(four_files, tmp_path, flag=False, env=True) == four_files["env"]
    assert _locate(four_files, tmp_path, flag=False, env=False) == four_files["home"]  # never ./clawbot.toml
    four_files["home"].unlink()
    assert _locate(four_files, tmp_path, flag=False, env=False) is None


def _cli(tmp_path: Path, files: dict[str, Path], *args: str, flag: bool, env: bool) -> Any:
    argv = ("--config", str(files["flag"])) if flag else ()
    environment = {"CLAWBOT_CONFIG": str(files["env"])} if env else {}
    return invoke_cli(*argv, *args, home=tmp_path / "home", cwd=tmp_path / "cwd", env=environment)


@pytest.mark.parametrize(
    ("flag", "env", "remove", "winner", "level"),
    [
        (True, True, (), "flag", "debug"),
        (False, True, (), "env", "info"),
        (False, False, (), "home", "warning"),
        (False, False, ("cwd",), "home", "warning"),
    ],
    ids=["--config beats everything", "$CLAWBOT_CONFIG beats the files", "the state dir, ./clawbot.toml ignored", "state dir"],
)
def test_lookup_order_through_the_cli(
    tmp_path: Path, four_files: dict[str, Path], flag: bool, env: bool, remove: tuple[str, ...], winner: str, level: str
) -> None:
    for name in remove:
        four_files[name].unlink()
    path = _cli(tmp_path, four_files, "config", "path", flag=flag, env=env)
    assert path.returncode == 0, path.stderr
    assert path.stdout.strip() == str(four_files[winner])
    shown = _cli(tmp_path, four_files, "config", "show", "--json", flag=flag, env=env)
    assert json.loads(shown.stdout)["logging"]["level"] == level
    valid = _cli(tmp_path, four_files, "config", "validate", flag=flag, env=env)
    assert valid.stdout.strip() == f"{four_files[winner]}: valid"


def test_no_file_anywhere_means_valid_defaults(tmp_path: Path) -> None:
    loaded = load_config(tmp_path, None)
    assert loaded.config.core == CoreConfig()
    assert loaded.config.source is None
    assert loaded.config.agent_ids() == ["main"] and loaded.config.default_agent_id() == "main"
    for result, expected in (
        (invoke_cli("config", "path", home=tmp_path / "home"), "no configuration file found: using the built-in defaults"),
        (invoke_cli("config", "validate", home=tmp_path / "home"), "built-in defaults: valid"),
    ):
        assert result.returncode == 0 and result.stdout.strip() == expected, result.stderr


def test_an_empty_file_is_the_defaults_too(tmp_path: Path) -> None:
    loaded = load_config(tmp_path, "")
    assert loaded.config.core == CoreConfig()
    assert loaded.config.source == str(tmp_path / "given.toml")


def test_state_dir_defaults_to_dot_clawbot_in_home(tmp_path: Path) -> None:
    home = tmp_path / "user"
    config = write(home / ".clawbot" / "clawbot.toml", '[logging]\nlevel = "info"\n')
    result = invoke_cli("config", "path", home=home, cwd=tmp_path, env={"CLAWBOT_HOME": None})
    assert result.stdout.strip() == str(config), result.stderr


def test_relative_paths_are_resolved_against_the_current_directory(tmp_path: Path) -> None:
    config = write(tmp_path / "cwd" / "sub" / "mine.toml", "")
    for argv, env in ((("--config", "sub/mine.toml"), {}), ((), {"CLAWBOT_CONFIG": "sub/mine.toml"})):
        result = invoke_cli(*argv, "config", "path", home=tmp_path / "home", cwd=tmp_path / "cwd", env=env)
        assert result.stdout.strip() == str(config), result.stderr


def test_empty_clawbot_config_variable_is_ignored(tmp_path: Path) -> None:
    config = write(tmp_path / "home" / "clawbot.toml", "")
    result = invoke_cli("config", "path", home=tmp_path / "home", env={"CLAWBOT_CONFIG": ""})
    assert result.stdout.strip() == str(config)


def test_values_from_the_file_reach_the_config(tmp_path: Path) -> None:
    text = """\
[plugins]
deny = ["workspace"]

[agents.defaults]
workspace = "~/work"
thinking = "high"
timezone = "Europe/Berlin"
max_iterations = 12

[agents.defaults.model]
primary = "anthropic/claude-opus-4-5"
fallbacks = ["openai/gpt-4o"]

[[agents.list]]
id = "main"

[[agents.list]]
id = "coder"
name = "Coder"
default = true
workspace = "~/code"
model = { primary = "openai/gpt-4o" }

[logging]
level = "debug"

[channels.terminal]
prompt = "> "

[providers.openai]
api = "responses"
timeout_s = 30
"""
    config: ClawbotConfig = load_config(tmp_path, text).config
    assert config.plugins.deny == ["workspace"]
    assert config.agents.defaults.thinking == "high" and config.agents.defaults.max_iterations == 12
    assert config.agents.defaults.model.fallbacks == ["openai/gpt-4o"]
    assert config.agent_ids() == ["main", "coder"] and config.default_agent_id() == "coder"
    coder = config.agents.list[1]
    assert coder.model is not None and coder.model.primary == "openai/gpt-4o" and coder.model.fallbacks == []
    assert config.agents.list[0].model is None
    assert config.logging.level == "debug"
    assert config.section("channels.terminal").prompt == "> " and config.section("channels.terminal").enabled is True
    assert config.section("providers.openai").api == "responses" and config.section("providers.openai").timeout_s == 30.0
    assert config.owners["providers.openai"] == "openai" and config.owners["channels.terminal"] == "terminal"


# ------------------------------------------------------------------ plugin-owned tables


@attrs.frozen(kw_only=True)
class GreeterSettings:
    greeting: str = "hello"
    times: int = 1


async def test_bare_attrs_class_validates_the_plugins_own_table(tmp_path: Path, make_kernel: Any) -> None:
    seen: list[Any] = []

    def tools(ctx: Any) -> list:
        seen.append(ctx.settings)
        return []

    greeter = plugin_from_hooks(clawbot_config_schema=lambda: GreeterSettings, clawbot_tools=tools)
    loaded = load_config(tmp_path, '[plugins.greeter]\ngreeting = "hi"\n', plugins={"greeter": greeter})
    assert loaded.config.section("plugins.greeter") == GreeterSettings(greeting="hi")
    assert loaded.config.owners["plugins.greeter"] == "greeter"

    await make_kernel(plugins={"greeter": greeter}, config="[plugins.greeter]\ntimes = 3\n")
    assert seen == [GreeterSettings(times=3)]


def test_bare_attrs_class_problems_are_reported_under_the_plugins_table(tmp_path: Path) -> None:
    greeter = plugin_from_hooks(clawbot_config_schema=lambda: GreeterSettings)
    text = '[plugins]\nallow = ["greeter", "terminal"]\n[plugins.greeter]\ngreting = "hi"\ntimes = "3"\n'
    assert problems_of(tmp_path, text, plugins={"greeter": greeter}) == [
        "plugins.greeter.greting: unknown key (did you mean greeting?)",
        'plugins.greeter.times: expected an integer, got "3"',
    ]


def test_plugins_table_without_a_plugin(tmp_path: Path) -> None:
    assert problems_of(tmp_path, "[plugins.greeter]\ntimes = 3\n") == ["plugins.greeter: no installed plugin reads this table"]


GREETER_SOURCE = """\
import attrs
from clawbot import hookimpl


@attrs.frozen(kw_only=True)
class GreeterSettings:
    greeting: str = "hello"


@hookimpl
def clawbot_config_schema():
    return GreeterSettings
"""


@pytest.fixture
def greeter_site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    install_distribution(site, "clawbot-greeter", entry_points={"greeter": "clawbot_greeter"}, modules={"clawbot_greeter.py": GREETER_SOURCE})
    return site


def test_installed_plugin_table_is_validated_through_the_cli(tmp_path: Path, greeter_site: Path) -> None:
    config = write(tmp_path / "c.toml", "[plugins.greeter]\ngreeting = 5\n")
    result = run_cli("--config", str(config), "config", "validate", home=tmp_path / "home", extra_path=greeter_site)
    assert result.returncode == 2
    assert "plugins.greeter.greeting: expected a string, got 5" in result.stderr

    write(config, '[plugins.greeter]\ngreeting = "hey"\n')
    shown = run_cli("--config", str(config), "config", "show", "--json", home=tmp_path / "home", extra_path=greeter_site)
    assert json.loads(shown.stdout)["plugins"]["greeter"] == {"greeting": "hey"}


@pytest.mark.parametrize(
    ("how", "env"),
    [
        ("CLAWBOT_DISABLE_PLUGINS", {"CLAWBOT_DISABLE_PLUGINS": "greeter,openai"}),
        ("plugins.deny", {}),
        ("plugins.allow", {}),
    ],
)
def test_blocked_plugins_tables_are_neither_validated_nor_unclaimed(tmp_path: Path, greeter_site: Path, how: str, env: dict[str, str]) -> None:
    head = {
        "CLAWBOT_DISABLE_PLUGINS": "",
        "plugins.deny": '[plugins]\ndeny = ["greeter", "openai"]\n',
        "plugins.allow": '[plugins]\nallow = ["terminal", "anthropic", "workspace"]\n',
    }[how]
    config = write(tmp_path / "c.toml", head + '[plugins.greeter]\ngreeting = 5\n[providers.openai]\napi = "chatt"\n')
    common = {"home": tmp_path / "home", "extra_path": greeter_site, "env": env}
    result = run_cli("--config", str(config), "config", "validate", **common)
    assert result.returncode == 0, result.stderr
    shown = json.loads(run_cli("--config", str(config), "config", "show", "--json", **common).stdout)
    assert "openai" not in shown.get("providers", {}) and "greeter" not in shown["plugins"]
    assert "anthropic" in shown["providers"]


def test_a_typo_next_to_a_blocked_plugin_is_still_reported(tmp_path: Path) -> None:
    config = write(tmp_path / "c.toml", "[providers.openia]\napi = 'chat'\n")
    result = run_cli("--config", str(config), "config", "validate", home=tmp_path / "home", env={"CLAWBOT_DISABLE_PLUGINS": "openai"})
    assert result.returncode == 2
    assert "providers.openia: no installed plugin reads this table" in result.stderr


def test_allow_naming_a_plugin_that_is_not_installed(tmp_path: Path) -> None:
    text = '[plugins]\nallow = ["terminal", "matrix", "anthropic", "slack"]\n'
    assert problems_of(tmp_path, text) == [
        "plugins.allow[1]: no installed plugin is named 'matrix'",
        "plugins.allow[3]: no installed plugin is named 'slack'",
    ]


def test_allow_naming_a_plugin_disabled_by_the_environment_is_fine(tmp_path: Path) -> None:
    loaded = load_config(tmp_path, '[plugins]\nallow = ["terminal", "openai"]\n', env={"CLAWBOT_DISABLE_PLUGINS": "openai"})
    assert loaded.plugins.records["openai"].status == "blocked"
    assert "providers.openai" not in loaded.config.sections


def test_deny_naming_an_unknown_plugin_is_fine(tmp_path: Path) -> None:
    loaded = load_config(tmp_path, '[plugins]\ndeny = ["not-installed"]\n')
    assert loaded.config.plugins.deny == ["not-installed"]


def test_bad_claims_become_plugin_warnings_not_config_errors(tmp_path: Path) -> None:
    class NotAttrs:
        pass

    from clawbot.types.context import ConfigSection

    odd = plugin_from_hooks(clawbot_config_schema=lambda: [ConfigSection("agents.mine", GreeterSettings), ConfigSection("channels.x", NotAttrs)])
    loaded = load_config(tmp_path, None, plugins={"odd": odd})
    warnings = loaded.plugins.records["odd"].warnings
    assert any("cannot claim [agents.mine]" in w for w in warnings)
    assert any("must be an attrs class" in w for w in warnings)


def test_config_error_is_an_exception_listing_every_problem(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, '[logging]\nlevel = 1\n[agents.defaults]\nthinking = "x"\n')
    error = info.value
    assert error.source == str(tmp_path / "given.toml")
    assert [p.path for p in error.problems] == ["agents.defaults.thinking", "logging.level"]
    assert str(error).splitlines()[0] == f"{error.source}: 2 problems:"
