"""Every number in the configuration has a range: a negative or absurd value is named by key.

The table is built by walking every schema (the core tables and every plugin's, the example
plugins included), so a new numeric key without a range fails here.
"""

from __future__ import annotations

import sys
import typing
from pathlib import Path

import attrs
import pytest
from clawbot.config import CoreConfig
from clawbot.config.converter import make_converter
from clawbot.config.problems import walk
from clawbot.testing.cli import invoke_cli
from clawbot.types import ConfigSection, InRange

from .confighelpers import REPO_ROOT, problem_map, write

EXAMPLE_PLUGINS = ("plugins/tool-audit", "plugins/bootstrap-extra-files", "plugin-template")


def _plugin_schemas() -> list[type]:
    """The classes every plugin (installed or example) validates its tables with."""
    from clawbot.boot import load

    for name in EXAMPLE_PLUGINS:
        path = str(REPO_ROOT / name)
        if path not in sys.path:
            sys.path.insert(0, path)
    import clawbot_bootstrap_extra_files.plugin as extra
    import clawbot_example_tool.plugin as template
    import clawbot_tool_audit.plugin as audit

    loaded = load(
        None, env={"CLAWBOT_HOME": "/nonexistent", "HOME": "/nonexistent"}, plugins={"audit": audit, "extra": extra, "example_tool": template}, defaults=True
    )
    classes = []
    for contribution in loaded.plugins.call_each_sync("clawbot_config_schema"):
        values = contribution.value if isinstance(contribution.value, list | tuple) else [contribution.value]
        classes += [v.cls if isinstance(v, ConfigSection) else v for v in values if v is not None]
    return classes


def _inner_types(t: object) -> list[object]:
    args = typing.get_args(t)
    return [a for a in args if a is not type(None)] if args else [t]


def _classes(roots: list[type]) -> list[type]:
    seen: list[type] = []
    todo = list(roots)
    while todo:
        cl = todo.pop()
        if cl in seen:
            continue
        seen.append(cl)
        hints = typing.get_type_hints(cl)
        for field in attrs.fields(cl):
            for inner in _inner_types(hints[field.name]):
                for t in _inner_types(inner):
                    if attrs.has(t):
                        todo.append(t)
    return seen


def _numeric_fields() -> list[tuple[type, attrs.Attribute, type]]:
    found = []
    for cl in _classes([CoreConfig, *_plugin_schemas()]):
        hints = typing.get_type_hints(cl)
        for field in attrs.fields(cl):
            numeric = [t for t in _inner_types(hints[field.name]) if t in (int, float)]
            if numeric:
                found.append((cl, field, numeric[0]))
    return found


NUMERIC = _numeric_fields()


def test_the_walk_finds_the_numbers_of_core_and_plugin_tables() -> None:
    names = {f"{cl.__name__}.{field.name}" for cl, field, _ in NUMERIC}
    for expected in (
        "AgentDefaults.max_iterations",
        "ModelPrice.input",
        "AnthropicConfig.timeout_s",
        "ExecSettings.max_processes",
        "ExtraFilesConfig.max_files",
        "ToolsSettings.web_search_count",
        "ExampleToolConfig.top_words",
    ):
        assert expected in names
    assert len(NUMERIC) >= 25


def _required(cl: type, hints: dict[str, object]) -> dict[str, object]:
    """Valid values for the keys a table cannot leave out."""
    values: dict[str, object] = {}
    for field in attrs.fields(cl):
        if field.default is attrs.NOTHING:
            t = hints[field.name]
            values[field.name] = field.validator.lo if isinstance(field.validator, InRange) else "x/y" if t is str else None
    return values


# Keys also checked against each other (tests/config/test_settings_that_defeat_themselves.py):
# values of the table's other keys that let every in-range value of one key pass.
LENIENT = {
    "ContextPruningConfig": {"soft_trim_ratio": 0, "hard_clear_ratio": 1},
    "SoftTrimConfig": {"max_chars": 10_000_000, "head_chars": 0, "tail_chars": 0},
}


@pytest.mark.parametrize(("cl", "field", "kind"), NUMERIC, ids=[f"{c.__name__}.{f.name}" for c, f, _ in NUMERIC])
def test_every_numeric_key_rejects_values_outside_its_range_by_name(cl: type, field: attrs.Attribute, kind: type) -> None:
    assert isinstance(field.validator, InRange), f"{cl.__name__}.{field.name} needs validator=InRange(lo, hi)"
    low, high = field.validator.lo, field.validator.hi
    assert low >= 0 and high > low
    converter = make_converter()
    base = {**_required(cl, typing.get_type_hints(cl)), **LENIENT.get(cl.__name__, {})}
    for bad in (-1, kind(high * 10 + 1)):
        with pytest.raises(Exception) as caught:
            converter.structure({**base, field.name: bad}, cl)
        problems = list(dict.fromkeys(str(p) for p in walk(caught.value)))  # the loader drops repeats too
        assert problems == [f"{field.name}: must be between {_show(low)} and {_show(high)}, got {_show(bad)}"], problems
    for good in {kind(low), kind(high)}:
        assert getattr(converter.structure({**base, field.name: good}, cl), field.name) == good


INTEGERS = [(c, f, k) for c, f, k in NUMERIC if k is int]


@pytest.mark.parametrize(("cl", "field", "kind"), INTEGERS, ids=[f"{c.__name__}.{f.name}" for c, f, _ in INTEGERS])
def test_a_whole_number_key_given_a_huge_fraction_is_one_problem(cl: type, field: attrs.Attribute, kind: type) -> None:
    # memory_limit_mb = 1e9: wrong type and out of range, said once (the type)
    bad = float(field.validator.hi * 10 + 1)
    converter = make_converter()
    with pytest.raises(Exception) as caught:
        converter.structure({**_required(cl, typing.get_type_hints(cl)), field.name: bad}, cl)
    problems = list(dict.fromkeys(str(p) for p in walk(caught.value)))
    assert problems == [f"{field.name}: expected an integer, got {bad!r}"], problems


def _show(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def test_config_validate_names_every_bad_number_model_ref_and_provider(tmp_path: Path) -> None:
    config = write(
        tmp_path / "bad.toml",
        """\
[agents.defaults]
model = "gpt-4o"
max_iterations = -3
bootstrap_max_chars = 0

[[agents.list]]
id = "main"
model = { primary = "opnai/gpt-4o", fallbacks = ["anthropic/claude-opus-4-5", "claude"] }

[providers.openai]
timeout_s = -1
connect_timeout_s = 100000

[plugins.tools.exec]
max_processes = 0

[[usage.prices]]
model = "openai/gpt-4o"
input = -2.5
output = 10
""",
    )
    result = invoke_cli("config", "validate", "--config", str(config), home=tmp_path / "home")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    problems = problem_map(line.removeprefix("  - ") for line in result.stderr.splitlines()[1:])
    assert problems == {
        "agents.defaults.max_iterations": "must be between 1 and 1000, got -3",
        "agents.defaults.bootstrap_max_chars": "must be between 100 and 10000000, got 0",
        "agents.defaults.model": '"gpt-4o" has no provider prefix: write "<provider>/gpt-4o"',
        "agents.list[0].model.fallbacks[1]": '"claude" has no provider prefix: write "<provider>/claude"',
        "agents.list[0].model.primary": "no installed provider is named 'opnai' (did you mean openai?)",
        "providers.openai.timeout_s": "must be between 0.01 and 86400, got -1",
        "providers.openai.connect_timeout_s": "must be between 0.01 and 600, got 100000",
        "plugins.tools.exec.max_processes": "must be between 1 and 1000, got 0",
        "usage.prices[0].input": "must be between 0 and 10000, got -2.5",
    }, result.stderr


def test_model_shorthand_is_the_primary_model_in_defaults_and_per_agent(tmp_path: Path) -> None:
    config = write(
        tmp_path / "short.toml",
        """\
[agents.defaults]
model = "openai/gpt-4o"

[[agents.list]]
id = "main"

[[agents.list]]
id = "coder"
model = "anthropic/claude-opus-4-5"
""",
    )
    result = invoke_cli("config", "show", "--json", "--config", str(config), home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    import json

    shown = json.loads(result.stdout)["agents"]
    assert shown["defaults"]["model"] == {"primary": "openai/gpt-4o", "fallbacks": []}
    assert shown["list"][1]["model"] == {"primary": "anthropic/claude-opus-4-5", "fallbacks": []}
