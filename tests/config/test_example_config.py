"""The root ``clawbot.toml`` and ``docs/configuration.md`` cannot drift from the code.

* the example file is a valid configuration equal to the built-in defaults;
* every key of the core schema and of each default plugin's table is in the example file
  (as a key or as a commented ``# key = value`` line) and has a row in the reference, whose
  type and default match the attrs field; so does every key of an installed plugin's table
  that cannot have defaults (the Telegram channel's, which needs a token);
* the reference has no row for a key that does not exist.
"""

from __future__ import annotations

import collections.abc
import json
import re
import tomllib
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import attrs
import pytest
from clawbot.config import CoreConfig
from clawbot.config.converter import make_converter
from clawbot.testing.cli import invoke_cli

from .confighelpers import CONFIG_DOC, EXAMPLE_CONFIG, REPO_ROOT, load_config

# ------------------------------------------------------------------ walking the schema


def _attrs_inside(t: Any) -> tuple[str, type | None]:
    """('table' | 'optional table' | 'list' | 'leaf', the attrs class inside if any)."""
    if attrs.has(t):
        return "table", t
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1 and attrs.has(inner[0]):
            return "optional table", inner[0]
    if origin is list and args and attrs.has(args[0]):
        return "list", args[0]
    return "leaf", None


def walk(cl: type, prefix: str = "", *, index: str = "") -> Iterator[tuple[str, attrs.Attribute, str]]:
    """Every field below ``cl`` as (dotted path, attribute, kind); list items get ``index``."""
    attrs.resolve_types(cl)
    for field in attrs.fields(cl):
        path = f"{prefix}.{field.name}" if prefix else field.name
        kind, inner = _attrs_inside(field.type)
        yield path, field, kind
        if inner is not None:
            yield from walk(inner, path + (index if kind == "list" else ""), index=index)


@pytest.fixture(scope="module")
def defaults(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The configuration with no file at all (entry points of the installed default plugins)."""
    return load_config(tmp_path_factory.mktemp("defaults"), None).config


@pytest.fixture(scope="module")
def plugin_classes(defaults: Any) -> dict[str, type]:
    """Table path -> attrs class of every table the default plugins claim."""
    classes = {path: type(section) for path, section in defaults.sections.items() if section is not None}
    assert {"channels.terminal", "providers.anthropic", "providers.openai"} <= set(classes)
    return classes


@pytest.fixture(scope="module")
def reference_classes(defaults: Any, plugin_classes: dict[str, type]) -> dict[str, type]:
    """Also the tables of installed plugins that need settings before they run (a channel's
    token) and so have no defaults: the reference documents them all the same."""
    from importlib.metadata import entry_points

    from clawbot import ConfigSection

    classes = dict(plugin_classes)
    for path, section in defaults.sections.items():
        if section is None:
            (entry,) = [e for e in entry_points(group="clawbot") if e.name == defaults.owners[path]]
            claims = entry.load().clawbot_config_schema()
            for claim in claims if isinstance(claims, list) else [claims]:
                if isinstance(claim, ConfigSection) and claim.path == path:
                    classes[path] = claim.cls
    assert "channels.telegram" in classes
    return classes


def schema_paths(plugin_classes: dict[str, type], *, index: str) -> dict[str, tuple[attrs.Attribute, str]]:
    out = {path: (field, kind) for path, field, kind in walk(CoreConfig, index=index)}
    for table, cl in plugin_classes.items():
        out.update({path: (field, kind) for path, field, kind in walk(cl, table, index=index)})
    return out


# ------------------------------------------------------------------ the example file loads and equals the defaults


def test_example_config_is_valid_and_equals_the_defaults(tmp_path: Path, defaults: Any) -> None:
    loaded = load_config(tmp_path, EXAMPLE_CONFIG.read_text(encoding="utf-8")).config
    assert loaded.core == defaults.core == CoreConfig()
    assert loaded.sections == defaults.sections
    assert loaded.owners == defaults.owners


def test_example_config_is_read_from_the_repository_root_only_when_named(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = invoke_cli("config", "path", home=home, cwd=REPO_ROOT)
    assert path.stdout.strip() == "no configuration file found: using the built-in defaults"
    assert f"note: {EXAMPLE_CONFIG} is ignored" in path.stderr
    assert "to use it: clawbot --config ./clawbot.toml" in path.stderr
    valid = invoke_cli("--config", "clawbot.toml", "config", "validate", home=home, cwd=REPO_ROOT)
    assert (valid.returncode, valid.stdout.strip()) == (0, f"{EXAMPLE_CONFIG}: valid"), valid.stderr
    assert "ignored" not in valid.stderr
    from_repo = invoke_cli("--config", "clawbot.toml", "config", "show", "--json", home=home, cwd=REPO_ROOT)
    from_nowhere = invoke_cli("config", "show", "--json", home=home, cwd=tmp_path)
    assert json.loads(from_repo.stdout) == json.loads(from_nowhere.stdout)


# ------------------------------------------------------------------ every key is in the example file


def _keys_of(value: Any, prefix: str) -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            path = f"{prefix}.{key}" if prefix else key
            yield path
            yield from _keys_of(inner, path)
    elif isinstance(value, list):
        for item in value:
            yield from _keys_of(item, prefix)


_HEADER = re.compile(r"^\[\[?\s*([A-Za-z0-9_.\-]+)\s*\]\]?\s*(#.*)?$")
_COMMENTED_KEY = re.compile(r"^#\s?([A-Za-z_][A-Za-z0-9_]*\s*=.*)$")
_COMMENTED_HEADER = re.compile(r"^#\s?(\[\[?\s*[A-Za-z0-9_.\-]+\s*\]\]?)\s*(#.*)?$")


def example_keys(text: str) -> tuple[set[str], set[str]]:
    """(keys set in the file, keys shown in commented ``# key = value`` lines)."""
    real = set(_keys_of(tomllib.loads(text), ""))
    commented: set[str] = set()
    table = ""
    for line in text.splitlines():
        line = line.strip()
        if header := _HEADER.match(line):
            table = header.group(1)
        elif commented_header := _COMMENTED_HEADER.match(line):  # e.g. "# [[auth.profiles]]"
            table = _HEADER.match(commented_header.group(1)).group(1)
        elif match := _COMMENTED_KEY.match(line):
            try:
                parsed = tomllib.loads(match.group(1))
            except tomllib.TOMLDecodeError:
                continue
            commented |= set(_keys_of(parsed, table))
    return real, commented


def test_every_key_is_in_the_example_config(plugin_classes: dict[str, type]) -> None:
    real, commented = example_keys(EXAMPLE_CONFIG.read_text(encoding="utf-8"))
    missing = sorted(set(schema_paths(plugin_classes, index="")) - real - commented)
    assert not missing, f"add to clawbot.toml: {missing}"


def test_only_optional_tables_are_left_as_comments(plugin_classes: dict[str, type]) -> None:
    """A key that has a TOML-writable default is set in the file, not only commented."""
    real, _ = example_keys(EXAMPLE_CONFIG.read_text(encoding="utf-8"))
    paths = schema_paths(plugin_classes, index="")
    commented_only = {p for p in paths if p not in real}
    allowed = {p for p, (field, kind) in paths.items() if kind == "optional table" and field.default is None}
    # The keys inside a list of tables that is empty by default can only be shown commented.
    allowed |= {p for p, (field, kind) in paths.items() if kind == "list" and p in real and _empty_default(field)}
    allowed |= {p for p in paths if any(p.startswith(o + ".") for o in allowed)}
    assert commented_only <= allowed, sorted(commented_only - allowed)


def _empty_default(field: attrs.Attribute) -> bool:
    default = field.default
    return isinstance(default, attrs.Factory) and not default.takes_self and default.factory() == []


def test_the_example_config_has_no_key_the_code_does_not_know(plugin_classes: dict[str, type]) -> None:
    real, commented = example_keys(EXAMPLE_CONFIG.read_text(encoding="utf-8"))
    known = set(schema_paths(plugin_classes, index="")) | set(plugin_classes) | {"channels", "providers"}
    stale = sorted(p for p in real | commented if p not in known and not p.startswith("plugins."))
    assert not stale, stale


def test_every_key_line_of_the_example_has_a_comment() -> None:
    lines = EXAMPLE_CONFIG.read_text(encoding="utf-8").splitlines()
    previous = ""
    for number, line in enumerate(lines, 1):
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*\s*=", line):
            assert previous.startswith("#"), f"clawbot.toml line {number}: {line!r} has no comment above it"
        if line.strip():
            previous = line.strip()


def test_example_header_explains_lookup_substitution_and_validation() -> None:
    header = EXAMPLE_CONFIG.read_text(encoding="utf-8").split("\n[", 1)[0]
    for needle in ("--config", "$CLAWBOT_CONFIG", "./clawbot.toml", "$CLAWBOT_HOME/clawbot.toml", "${VAR}", "${VAR:-", "$${"):
        assert needle in header, needle
    assert "clawbot config validate" in header


def test_secrets_stay_empty_and_show_the_env_form(plugin_classes: dict[str, type]) -> None:
    text = EXAMPLE_CONFIG.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    for table in plugin_classes:
        root, _, name = table.partition(".")
        section = data.get(root, {}).get(name, {})
        if "api_key" in section:
            assert section["api_key"] == ""
            assert re.search(rf'^# api_key = "\$\{{{name.upper()}_API_KEY\}}"$', text, re.M), table


# ------------------------------------------------------------------ every key is in the reference, with its type and default


def doc_rows() -> dict[str, tuple[str, str, str]]:
    rows: dict[str, tuple[str, str, str]] = {}
    for line in CONFIG_DOC.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\| `([a-z_][a-z0-9_.\[\]]*)` \| (.*)\|\s*$", line)
        if not match:
            continue
        cells = [c.strip() for c in match.group(2).split(" | ")]
        if "." not in match.group(1) and cells[0] != "list of tables":
            continue  # a top-level key is a row only when it is a list of tables ([[bindings]])
        assert len(cells) == 3, line
        rows[match.group(1)] = (cells[0], cells[1], cells[2])
    return rows


def _type_words(t: Any, kind: str) -> str:
    optional = [a for a in typing.get_args(t) if a is not type(None)] if typing.get_origin(t) in (typing.Union, types.UnionType) else None
    if optional is not None and len(optional) == 1:  # "X or unset": documented as X, default *(inherited)*
        t = optional[0]
    if kind in ("table", "optional table"):
        return "table"
    if kind == "list":
        return "list of tables"
    if typing.get_origin(t) is Literal:
        return "one of " + ", ".join(f'`"{c}"`' for c in typing.get_args(t))
    if typing.get_origin(t) is list and typing.get_args(t) == (str,):
        return "list of strings"
    if typing.get_origin(t) in (dict, collections.abc.Mapping):
        return "table"
    return {str: "string", int: "integer", float: "number", bool: "boolean"}[t]


def _default(field: attrs.Attribute) -> Any:
    if isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
        return field.default.factory()
    return field.default


def test_every_key_has_a_row_in_the_reference(reference_classes: dict[str, type]) -> None:
    """Leaf keys, optional tables and lists get a row; tables holding keys get a heading."""
    plugin_classes = reference_classes
    rows = doc_rows()
    doc = CONFIG_DOC.read_text(encoding="utf-8")
    paths = schema_paths(plugin_classes, index="[i]")
    missing = [path for path, (_, kind) in paths.items() if kind != "table" and path not in rows]
    assert not missing, f"add rows to docs/configuration.md: {missing}"
    for path, (field, kind) in paths.items():
        inner = _attrs_inside(field.type)[1]
        if kind == "list":
            assert f"### `[[{path}]]`" in doc, path
        elif kind == "table" and any(_attrs_inside(f.type)[0] == "leaf" for f in attrs.fields(inner)):
            assert f"### `[{path}]`" in doc, path
    for table in plugin_classes:
        assert f"### `[{table}]`" in doc, table
    stale = sorted(set(rows) - set(paths))
    assert not stale, f"docs/configuration.md documents keys that do not exist: {stale}"


def test_reference_types_and_defaults_match_the_code(reference_classes: dict[str, type]) -> None:
    rows = doc_rows()
    converter = make_converter()
    for path, (field, kind) in schema_paths(reference_classes, index="[i]").items():
        if path not in rows:
            continue
        type_cell, default_cell, _ = rows[path]
        assert type_cell == _type_words(field.type, kind), path
        expected = _default(field)
        if expected is attrs.NOTHING:
            assert default_cell == "*(required)*", path
            continue
        if expected is None:
            assert default_cell == "*(unset)*", path
            continue
        assert default_cell.startswith("`") and default_cell.endswith("`"), (path, default_cell)
        written = tomllib.loads(f"v = {default_cell[1:-1]}")["v"]
        assert converter.structure(written, field.type) == expected, (path, default_cell)


def test_reference_documents_the_environment_variables() -> None:
    doc = CONFIG_DOC.read_text(encoding="utf-8")
    for name in ("CLAWBOT_HOME", "CLAWBOT_CONFIG", "CLAWBOT_DISABLE_PLUGINS", "CLAWBOT_TRACE_PLUGINS"):
        assert f"`{name}`" in doc, name
    from clawbot.paths import CONFIG_ENV, HOME_ENV
    from clawbot.plugins.discovery import DISABLE_ENV
    from clawbot.plugins.tracing import TRACE_ENV

    assert {CONFIG_ENV, HOME_ENV, DISABLE_ENV, TRACE_ENV} == {"CLAWBOT_CONFIG", "CLAWBOT_HOME", "CLAWBOT_DISABLE_PLUGINS", "CLAWBOT_TRACE_PLUGINS"}
