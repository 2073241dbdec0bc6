"""Every kind of configuration mistake: one message, every key path, exit code 2, no traceback."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs
import pytest
from clawbot.config import ConfigError
from clawbot.testing import plugin_from_hooks
from clawbot.testing.cli import invoke_cli
from clawbot.types.context import ConfigSection

from .confighelpers import load_config, problem_map, problems_of, run_cli, write

THREE_MISTAKES = """\
[plugins]
alow = ["terminal"]

[agents.defaults]
max_iterations = "40"

[providers.openai]
api = "chatt"
"""

THREE_PATHS = ("plugins.alow", "agents.defaults.max_iterations", "providers.openai.api")


def assert_one_report(result, source: Path, count: int, paths: tuple[str, ...]) -> None:
    __tracebackhide__ = True
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    header = f"{source}: {count} problem{'s' if count != 1 else ''}:"
    assert result.stderr.splitlines()[0] == header, result.stderr
    assert result.stderr.count("problem") == 1, "one message, not one per problem"
    lines = [line for line in result.stderr.splitlines()[1:] if line.strip()]
    assert len(lines) == count, result.stderr
    for path in paths:
        assert any(line.startswith(f"  - {path}: ") for line in lines), (path, result.stderr)


# ------------------------------------------------------------------ the acceptance item


@pytest.mark.parametrize(
    "argv",
    [
        ("--config", "{file}", "config", "validate"),
        ("--config", "{file}", "config", "show"),
        ("--config", "{file}", "config", "show", "--json"),
        ("--config", "{file}", "run"),
        ("--config", "{file}", "agent", "-m", "hi"),
    ],
    ids=lambda argv: " ".join(a for a in argv if a != "{file}"),
)
def test_three_mistakes_in_three_sections_give_one_message_naming_all(tmp_path: Path, argv: tuple[str, ...]) -> None:
    config = write(tmp_path / "broken.toml", THREE_MISTAKES)
    result = invoke_cli(*(a.replace("{file}", str(config)) for a in argv), home=tmp_path / "home")
    assert_one_report(result, config, 3, THREE_PATHS)
    assert result.stdout == ""
    assert "did you mean allow?" in result.stderr
    assert 'expected an integer, got "40"' in result.stderr
    assert 'expected one of "chat", "responses", got "chatt"' in result.stderr


@pytest.mark.parametrize(
    "argv",
    [("config", "validate", "--config", "{file}"), ("config", "show", "--config", "{file}"), ("run", "--config", "{file}")],
    ids=lambda argv: " ".join(a for a in argv if a != "{file}"),
)
def test_config_option_is_also_accepted_after_the_subcommand(tmp_path: Path, argv: tuple[str, ...]) -> None:
    """``clawbot config validate --config FILE`` / ``clawbot run --config FILE`` (the documented form).

    Fails until the subcommands accept ``--config`` (see the report: it is a root option only).
    """
    config = write(tmp_path / "broken.toml", THREE_MISTAKES)
    result = invoke_cli(*(a.replace("{file}", str(config)) for a in argv), home=tmp_path / "home")
    assert "No such option" not in result.stderr, result.stderr
    assert_one_report(result, config, 3, THREE_PATHS)


def test_the_same_mistakes_in_the_state_dir_file_stop_run(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = write(home / "clawbot.toml", THREE_MISTAKES)
    result = invoke_cli("run", home=home)
    assert_one_report(result, config, 3, THREE_PATHS)


# ------------------------------------------------------------------ unknown keys


@pytest.mark.parametrize(
    ("text", "path", "message"),
    [
        ('[plugins]\nalow = ["x"]\n', "plugins.alow", "unknown key (did you mean allow?)"),
        ("[agents.defaults]\nmax_iteration = 3\n", "agents.defaults.max_iteration", "unknown key (did you mean max_iterations?)"),
        ('[agents.defaults.model]\nfallback = ["a/b"]\n', "agents.defaults.model.fallback", "unknown key (did you mean fallbacks?)"),
        ('[[agents.list]]\nid = "a"\nworkspce = "x"\n', "agents.list[0].workspce", "unknown key (did you mean workspace?)"),
        ('[logging]\nlevle = "info"\n', "logging.levle", "unknown key (did you mean level?)"),
        ("[channels.terminal]\nenable = false\n", "channels.terminal.enable", "unknown key (did you mean enabled?)"),
        ('[providers.anthropic]\napikey = "x"\n', "providers.anthropic.apikey", "unknown key (did you mean api_key?)"),
        ("[plugins]\nzzz = 1\n", "plugins.zzz", "unknown key (known keys: allow, deny)"),
        ('[agents.defaults]\n"max iter" = 3\n', 'agents.defaults."max iter"', "unknown key (did you mean max_iterations?)"),
    ],
)
def test_unknown_key_names_its_path_and_the_closest_known_key(tmp_path: Path, text: str, path: str, message: str) -> None:
    assert problems_of(tmp_path, text) == [f"{path}: {message}"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[loging]\nlevel = "info"\n', "loging: unknown key (did you mean logging?)"),
        ("[agent.defaults]\nthinking = 'low'\n", "agent: unknown key (did you mean agents?)"),
        ("[chanels.terminal]\nenabled = true\n", "chanels: unknown key (did you mean channels?)"),
        (
            "[zzz]\na = 1\n",
            "zzz: unknown key (known tables: agents, auth, bindings, channels, cron, gateway, logging, memory, plugins, providers, session, skills, tools, usage)",
        ),
        (
            "debug = true\n",
            "debug: unknown key (known tables: agents, auth, bindings, channels, cron, gateway, logging, memory, plugins, providers, session, skills, tools, usage)",
        ),
    ],
)
def test_unknown_top_level_table(tmp_path: Path, text: str, expected: str) -> None:
    assert problems_of(tmp_path, text) == [expected]


# ------------------------------------------------------------------ wrong types: no silent coercion


@pytest.mark.parametrize(
    ("text", "path", "message"),
    [
        ('[agents.defaults]\nmax_iterations = "40"\n', "agents.defaults.max_iterations", 'expected an integer, got "40"'),
        ("[agents.defaults]\nmax_iterations = 4.5\n", "agents.defaults.max_iterations", "expected an integer, got 4.5"),
        ("[agents.defaults]\nmax_iterations = true\n", "agents.defaults.max_iterations", "expected an integer, got true"),
        ("[agents.defaults]\ntimezone = 5\n", "agents.defaults.timezone", "expected a string, got 5"),
        ("[agents.defaults.model]\nprimary = 3\n", "agents.defaults.model.primary", "expected a string, got 3"),
        ('[agents.defaults.model]\nfallbacks = "openai/gpt-4o"\n', "agents.defaults.model.fallbacks", 'expected a list, got "openai/gpt-4o"'),
        ('[plugins]\nallow = "terminal"\n', "plugins.allow", 'expected a list, got "terminal"'),
        ("[plugins]\ndeny = {a = 1}\n", "plugins.deny", "expected a list, got a table"),
        ('[channels.terminal]\nenabled = "yes"\n', "channels.terminal.enabled", 'expected true or false, got "yes"'),
        ("[channels.terminal]\nenabled = 1\n", "channels.terminal.enabled", "expected true or false, got 1"),
        ('[providers.anthropic]\ntimeout_s = "600"\n', "providers.anthropic.timeout_s", 'expected a number, got "600"'),
        ("[providers.anthropic]\ntimeout_s = true\n", "providers.anthropic.timeout_s", "expected a number, got true"),
        ("[agents]\ndefaults = 3\n", "agents.defaults", "expected a table, got 3"),
        ('[agents]\nlist = {id = "x"}\n', "agents.list", "expected a list, got a table"),
        ('[[agents.list]]\nid = "a"\nmodel = 3\n', "agents.list[0].model", "expected a table or a string, got 3"),
        ("logging = []\n", "logging", "expected a table, got a list"),
        ("plugins = 5\n", "plugins", "expected a table, got 5"),
        ('channels = "terminal"\n', "channels", 'expected a table, got "terminal"'),
        ("[channels]\nterminal = true\n", "channels.terminal", "expected a table, got true"),
    ],
)
def test_wrong_type_is_reported_not_coerced(tmp_path: Path, text: str, path: str, message: str) -> None:
    assert problems_of(tmp_path, text) == [f"{path}: {message}"]


def test_an_integer_is_accepted_where_a_number_is_expected(tmp_path: Path) -> None:
    loaded = load_config(tmp_path, "[providers.anthropic]\ntimeout_s = 30\n")
    timeout = loaded.config.section("providers.anthropic").timeout_s
    assert timeout == 30.0 and isinstance(timeout, float)


# ------------------------------------------------------------------ enumerations (Literal)


@pytest.mark.parametrize(
    ("text", "path", "message"),
    [
        ('[logging]\nlevel = "chatty"\n', "logging.level", 'expected one of "debug", "info", "warning", "error", got "chatty"'),
        ('[logging]\nlevel = "INFO"\n', "logging.level", 'expected one of "debug", "info", "warning", "error", got "INFO"'),
        (
            '[agents.defaults]\nthinking = "max"\n',
            "agents.defaults.thinking",
            'expected one of "off", "minimal", "low", "medium", "high", "xhigh", got "max"',
        ),
        (
            "[agents.defaults]\nthinking = false\n",
            "agents.defaults.thinking",
            'expected one of "off", "minimal", "low", "medium", "high", "xhigh", got false',
        ),
        ('[providers.openai]\napi = "chatt"\n', "providers.openai.api", 'expected one of "chat", "responses", got "chatt"'),
    ],
)
def test_bad_choice_lists_the_choices(tmp_path: Path, text: str, path: str, message: str) -> None:
    assert problems_of(tmp_path, text) == [f"{path}: {message}"]


# ------------------------------------------------------------------ environment variables


def test_missing_variable_names_the_variable_and_the_key(tmp_path: Path) -> None:
    text = '[providers.openai]\napi_key = "${NOPE}"\n[plugins]\ndeny = ["${ALSO_NOPE}"]\n'
    assert problems_of(tmp_path, text) == [
        "plugins.deny[0]: environment variable ALSO_NOPE is not set (or empty)",
        "providers.openai.api_key: environment variable NOPE is not set (or empty)",
    ]


def test_a_variable_set_to_the_empty_string_counts_as_missing(tmp_path: Path) -> None:
    text = '[providers.openai]\napi_key = "${EMPTY_KEY}"\n'
    assert problems_of(tmp_path, text, env={"EMPTY_KEY": ""}) == ["providers.openai.api_key: environment variable EMPTY_KEY is not set (or empty)"]


def test_variables_are_substituted_inside_strings(tmp_path: Path) -> None:
    text = '[providers.openai]\napi_key = "${MY_KEY}"\nbase_url = "http://${HOST}:11434/v1"\n'
    loaded = load_config(tmp_path, text, env={"MY_KEY": "sk-123", "HOST": "10.0.0.2"})
    section = loaded.config.section("providers.openai")
    assert section.api_key == "sk-123"
    assert section.base_url == "http://10.0.0.2:11434/v1"


def test_fallback_is_used_when_the_variable_is_unset_or_empty(tmp_path: Path) -> None:
    text = (
        '[agents.defaults]\nworkspace = "${WS:-~/fallback}"\ntimezone = "${TZ_X:-UTC}"\n'
        '[agents.defaults.model]\nprimary = "${MODEL:-anthropic/claude-opus-4-5}"\n'
    )
    loaded = load_config(tmp_path, text, env={"TZ_X": "", "MODEL": "openai/gpt-4o"})
    defaults = loaded.config.agents.defaults
    assert defaults.workspace == "~/fallback"  # unset
    assert defaults.timezone == "UTC"  # set but empty
    assert defaults.model.primary == "openai/gpt-4o"  # set: the variable wins


def test_empty_fallback_gives_an_empty_string(tmp_path: Path) -> None:
    loaded = load_config(tmp_path, '[providers.openai]\nbase_url = "${NOPE:-}"\n')
    assert loaded.config.section("providers.openai").base_url == ""


def test_double_dollar_writes_a_literal_placeholder(tmp_path: Path) -> None:
    text = '[channels.terminal]\nprompt = "$${NOT_A_VAR} $HOME $$ > "\n'
    loaded = load_config(tmp_path, text, env={"NOT_A_VAR": "substituted"})
    assert loaded.config.section("channels.terminal").prompt == "${NOT_A_VAR} $HOME $$ > "


def test_variables_are_not_substituted_in_keys(tmp_path: Path) -> None:
    assert problems_of(tmp_path, '[agents.defaults]\n"${X}" = 1\n', env={"X": "timezone"}) == [
        'agents.defaults."${X}": unknown key (known keys: workspace, model, thinking, timezone, max_iterations, prompt_mode, bootstrap_max_chars, bootstrap_total_max_chars, model_aliases, owner_ids, context_tokens, compaction, context_pruning, heartbeat, subagents)'
    ]


def test_missing_variables_are_reported_with_the_other_problems(tmp_path: Path) -> None:
    text = '[providers.openai]\napi_key = "${NOPE}"\napi = "chatt"\n[logging]\nlevel = "loud"\n'
    found = problem_map(problems_of(tmp_path, text))
    assert set(found) == {"providers.openai.api_key", "providers.openai.api", "logging.level"}
    assert found["providers.openai.api_key"] == "environment variable NOPE is not set (or empty)"


# ------------------------------------------------------------------ plugin-owned tables nobody claims


def test_unclaimed_table_is_an_error_with_did_you_mean(tmp_path: Path) -> None:
    @attrs.frozen(kw_only=True)
    class TelegramConfig:
        token: str = ""

    telegram = plugin_from_hooks(clawbot_config_schema=lambda: ConfigSection("channels.telegram", TelegramConfig))
    text = '[channels.telegarm]\ntoken = "x"\n[providers.mistral]\napi_key = "x"\n'
    assert problems_of(tmp_path, text, plugins={"telegram": telegram}) == [
        "channels.telegarm: no installed plugin reads this table (did you mean channels.telegram?)",
        "providers.mistral: no installed plugin reads this table",
    ]


def test_unclaimed_table_of_the_default_plugins_through_the_cli(tmp_path: Path) -> None:
    config = write(tmp_path / "c.toml", "[channels.termnal]\nenabled = true\n[providers.openia]\napi = 'chat'\n")
    result = invoke_cli("--config", str(config), "config", "validate", home=tmp_path / "home")
    assert_one_report(result, config, 2, ("channels.termnal", "providers.openia"))
    assert "channels.termnal: no installed plugin reads this table (did you mean channels.terminal?)" in result.stderr
    assert "providers.openia: no installed plugin reads this table (did you mean providers.openai?)" in result.stderr


# ------------------------------------------------------------------ lists and required keys


def test_list_items_are_named_by_index(tmp_path: Path) -> None:
    text = (
        '[[agents.list]]\nid = "main"\n'
        '[[agents.list]]\nname = "no id"\n'
        '[[agents.list]]\nid = 5\ndefault = "yes"\nmodel = { primary = 3, fallback = [] }\n'
        '[agents.defaults.model]\nfallbacks = [1, "openai/gpt-4o", true]\n'
    )
    assert problems_of(tmp_path, text) == [
        "agents.defaults.model.fallbacks[0]: expected a string, got 1",
        "agents.defaults.model.fallbacks[2]: expected a string, got true",
        "agents.list[1].id: required key is missing",
        'agents.list[2].default: expected true or false, got "yes"',
        "agents.list[2].id: expected a string, got 5",
        "agents.list[2].model.fallback: unknown key (did you mean fallbacks?)",
        "agents.list[2].model.primary: expected a string, got 3",
    ]


def test_required_key_missing_in_a_plugin_table(tmp_path: Path) -> None:
    @attrs.frozen(kw_only=True)
    class NeedsToken:
        token: str
        retries: int = 3

    plugin = plugin_from_hooks(clawbot_config_schema=lambda: NeedsToken)
    assert problems_of(tmp_path, "[plugins.needy]\nretries = 5\n", plugins={"needy": plugin}) == ["plugins.needy.token: required key is missing"]


def test_plugin_table_with_required_keys_may_be_absent(tmp_path: Path) -> None:
    @attrs.frozen(kw_only=True)
    class NeedsToken:
        token: str

    plugin = plugin_from_hooks(clawbot_config_schema=lambda: NeedsToken)
    loaded = load_config(tmp_path, None, plugins={"needy": plugin})
    assert loaded.config.section("plugins.needy") is None
    assert loaded.config.owners["plugins.needy"] == "needy"


def test_two_plugins_claiming_one_table_is_an_error_naming_both(tmp_path: Path) -> None:
    @attrs.frozen
    class Cfg:
        enabled: bool = True

    plugins = {
        "one": plugin_from_hooks(clawbot_config_schema=lambda: ConfigSection("channels.chat", Cfg)),
        "two": plugin_from_hooks(clawbot_config_schema=lambda: ConfigSection("channels.chat", Cfg)),
    }
    assert problems_of(tmp_path, None, plugins=plugins, load_entrypoints=False) == ["channels.chat: claimed by two plugins: one and two"]


# ------------------------------------------------------------------ files that cannot be read at all


def test_invalid_toml_is_one_message_with_the_line(tmp_path: Path) -> None:
    config = write(tmp_path / "c.toml", '[logging]\nlevel = "info"\n\n[agents.defaults]\nmax_iterations = -\n')
    for argv in (("config", "validate"), ("config", "show"), ("run",)):
        result = invoke_cli("--config", str(config), *argv, home=tmp_path / "home")
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert result.stderr.splitlines() == [f"{config}: 1 problem:", "  - not valid TOML: Invalid value (at line 5, column 18)"]


def test_duplicate_key_is_invalid_toml(tmp_path: Path) -> None:
    config = write(tmp_path / "c.toml", '[logging]\nlevel = "info"\nlevel = "debug"\n')
    result = invoke_cli("--config", str(config), "config", "validate", home=tmp_path / "home")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "not valid TOML" in result.stderr and "line 3" in result.stderr


@pytest.mark.parametrize("how", ["flag", "env"])
def test_config_named_explicitly_must_exist(tmp_path: Path, how: str) -> None:
    missing = tmp_path / "nowhere" / "clawbot.toml"
    write(tmp_path / "home" / "clawbot.toml", "")  # present, but must not be used instead
    if how == "flag":
        argv, env, origin = ("--config", str(missing)), {}, "--config"
    else:
        argv, env, origin = (), {"CLAWBOT_CONFIG": str(missing)}, "$CLAWBOT_CONFIG"
    for command in (("config", "validate"), ("config", "show"), ("config", "path"), ("run",)):
        result = invoke_cli(*argv, *command, home=tmp_path / "home", env=env)
        assert result.returncode == 2, command
        assert result.stderr.splitlines() == [f"{missing}: 1 problem:", f"  - file named by {origin} does not exist"]


def test_unreadable_file_is_a_config_error(tmp_path: Path) -> None:
    directory = tmp_path / "dir.toml"
    directory.mkdir()
    from clawbot.config.loader import read_toml

    with pytest.raises(ConfigError) as info:
        read_toml(directory)
    assert info.value.problems[0].message.startswith("cannot read: ")


# ------------------------------------------------------------------ the report itself


def test_problems_are_sorted_by_key_path_and_counted(tmp_path: Path) -> None:
    config = write(
        tmp_path / "c.toml",
        '[providers.openai]\napi = "x"\n[logging]\nlevel = "x"\n[agents.defaults]\nthinking = "x"\n[plugins]\nallow = 1\n',
    )
    result = invoke_cli("--config", str(config), "config", "validate", home=tmp_path / "home")
    paths = [line.split(": ")[0].removeprefix("  - ") for line in result.stderr.splitlines()[1:]]
    assert paths == ["agents.defaults.thinking", "logging.level", "plugins.allow", "providers.openai.api"]
    assert result.stderr.splitlines()[0] == f"{config}: 4 problems:"


def test_report_does_not_depend_on_hash_randomisation(tmp_path: Path) -> None:
    """Two problems on the same key must come out in the same order in every process.

    Fails until ``finish`` stops ordering through a ``set`` (see the report).
    """
    config = write(tmp_path / "c.toml", '[providers.openai]\nbase_url = "${AAA_UNSET}${BBB_UNSET}${CCC_UNSET}"\n')

    def report(seed: int) -> str:
        return run_cli("--config", str(config), "config", "validate", home=tmp_path / "home", env={"PYTHONHASHSEED": str(seed)}).stderr

    with ThreadPoolExecutor(3) as pool:  # the processes run side by side: each is a fresh interpreter start
        outputs = set(pool.map(report, range(6)))
    assert len(outputs) == 1, outputs
