"""Reading ``clawbot.toml``: find the file, substitute variables, validate every table.

Validation never stops at the first problem: the core tables, each plugin's tables and
every missing variable are checked, and :class:`ConfigError` lists them all at once.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import cattrs

from clawbot.config.converter import make_converter, show
from clawbot.config.envsubst import substitute
from clawbot.config.gateway_schema import binding_problems
from clawbot.config.problems import ConfigError, ConfigProblem, join, walk
from clawbot.config.schema import PLUGIN_ROOTS, ClawbotConfig, CoreConfig
from clawbot.paths import CONFIG_ENV, StatePaths
from clawbot.types.context import ConfigSection


@attrs.frozen
class ConfigLocation:
    """The configuration file to read and what named it."""

    path: Path  # absolute, links not followed: the trust check follows them itself
    named_by: str  # "named by --config", "named by $CLAWBOT_CONFIG", "your configuration file"


def find_config(explicit: str | os.PathLike[str] | None, env: Mapping[str, str], cwd: Path) -> ConfigLocation | None:
    """The first of ``--config``, ``$CLAWBOT_CONFIG`` and ``<state>/clawbot.toml``.

    Never a ``clawbot.toml`` that merely lies in the current directory: clawbot is often
    started inside an agent's workspace, where the agent could have put one. A path named
    explicitly (flag or variable) must exist; no file at all means defaults.
    """
    for named, origin in ((explicit, "--config"), (env.get(CONFIG_ENV) or None, f"${CONFIG_ENV}")):
        if named:
            path = Path(os.path.abspath(cwd / Path(named).expanduser()))
            if not path.is_file():
                raise ConfigError(str(path), [ConfigProblem("", f"file named by {origin} does not exist")])
            return ConfigLocation(path, f"named by {origin}")
    own = StatePaths.resolve(env).config_file
    return ConfigLocation(own, "your configuration file") if own.is_file() else None


def locate_config(explicit: str | os.PathLike[str] | None, env: Mapping[str, str], cwd: Path) -> Path | None:
    """The file :func:`find_config` finds."""
    location = find_config(explicit, env, cwd)
    return location.path if location is not None else None


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), [ConfigProblem("", f"not valid TOML: {exc}")]) from None
    except OSError as exc:
        raise ConfigError(str(path), [ConfigProblem("", f"cannot read: {exc.strerror}")]) from None


@attrs.define
class RawConfig:
    """A parsed file split into the core tables and the plugin-owned tables."""

    source: str
    core: dict[str, Any]
    plugin_tables: dict[str, Any]
    """Table path -> its raw value (a table, except a bad top-level key no core table has)."""
    problems: list[ConfigProblem]


def split_raw(data: Mapping[str, Any], source: str, env: Mapping[str, str]) -> RawConfig:
    """Substitute variables, then separate the plugin-owned tables from the core ones.

    ``[plugins]`` holds both core keys (allow, deny) and ``[plugins.<name>]`` tables;
    ``[channels]`` and ``[providers]`` hold only plugin tables; any other top-level key
    that is no core table is a plugin's own table (a plugin claims it by its bare name).
    """
    problems: list[ConfigProblem] = []
    data = substitute(dict(data), env, "", problems)
    core: dict[str, Any] = {}
    plugin_tables: dict[str, dict[str, Any]] = {}
    core_tables = _core_types()
    for key, value in data.items():
        if key not in PLUGIN_ROOTS and key not in core_tables:
            plugin_tables[key] = value  # a plugin's own top-level table (``[cron]``), or unknown
            continue
        if key not in PLUGIN_ROOTS:
            core[key] = value
            continue
        if not isinstance(value, dict):
            problems.append(ConfigProblem(key, f"expected a table, got {show(value)}"))
            continue
        core_keys = _core_keys(key)
        for name, table in value.items():
            if name in core_keys:
                core.setdefault(key, {})[name] = table
            elif isinstance(table, dict):
                plugin_tables[join(key, name)] = table
            elif core_keys:
                core.setdefault(key, {})[name] = table  # reported as an unknown key
            else:
                problems.append(ConfigProblem(join(key, name), f"expected a table, got {show(table)}"))
    return RawConfig(source, core, plugin_tables, problems)


def _core_types() -> dict[str, type]:
    """Each core key -> the type it holds (every field of CoreConfig is annotated)."""
    return {a.name: a.type for a in attrs.fields(CoreConfig) if a.type is not None}


def _core_keys(root: str) -> set[str]:
    table = _core_types().get(root)
    return {a.name for a in attrs.fields(table)} if table is not None and attrs.has(table) else set()


def structure_core(raw: RawConfig, converter: cattrs.Converter) -> CoreConfig:
    """Structure each core table on its own so one bad table does not hide another."""
    values: dict[str, Any] = {}
    types = _core_types()
    for key, value in raw.core.items():
        kind = types.get(key)
        if kind is None:
            raw.problems.append(_unknown_top_level(key, types))
            continue
        try:
            values[key] = converter.structure(value, kind)
        except Exception as exc:
            raw.problems.extend(walk(exc, key))
    core = CoreConfig(**values)
    if not any(p.path.startswith("agents") for p in raw.problems):  # a broken agents table names no agents to check against
        raw.problems.extend(binding_problems(core.bindings, [agent.id for agent in core.agents.list]))
    return core


def _unknown_top_level(key: str, fields: Iterable[str]) -> ConfigProblem:
    known = sorted({*fields, *PLUGIN_ROOTS})
    close = difflib.get_close_matches(key, known, n=1)
    hint = f" (did you mean {close[0]}?)" if close else f" (known tables: {', '.join(known)})"
    return ConfigProblem(key, f"unknown key{hint}")


def normalise_claims(plugin: str, value: Any) -> tuple[list[ConfigSection], list[str]]:
    """What one ``clawbot_config_schema`` result claims, and what is wrong with it."""
    items = value if isinstance(value, list | tuple) else [value]
    claims, errors = [], []
    for item in items:
        if item is None:
            continue
        claim = item if isinstance(item, ConfigSection) else ConfigSection(f"plugins.{plugin}", item)
        root, _, name = claim.path.partition(".")
        if not name and _own_top_level(root):
            claims.append(claim)  # a top-level table of its own, e.g. [cron]
        elif root not in PLUGIN_ROOTS or not name or "." in name:
            errors.append(f"cannot claim [{claim.path}]: claim <root>.<name> with root in {', '.join(PLUGIN_ROOTS)}, or a top-level table no core table has")
        elif not attrs.has(claim.cls):
            errors.append(f"config schema for [{claim.path}] must be an attrs class, got {claim.cls!r}")
        else:
            claims.append(claim)
    return claims, errors


def _own_top_level(name: str) -> bool:
    """Whether a plugin may claim ``[name]``: a bare key that is neither a core table nor a root of plugin tables."""
    return bool(name) and name.replace("_", "").isalnum() and name not in PLUGIN_ROOTS and name not in _core_types()


def structure_sections(
    raw: RawConfig,
    claims: Mapping[str, list[tuple[str, ConfigSection]]],
    converter: cattrs.Converter,
    inactive_plugins: Iterable[str] = (),
) -> dict[str, Any]:
    """Validate each claimed table; report unclaimed and doubly claimed tables."""
    sections: dict[str, Any] = {}
    for path, owners in sorted(claims.items()):
        if len(owners) > 1:
            names = " and ".join(sorted(plugin for plugin, _ in owners))
            raw.problems.append(ConfigProblem(path, f"claimed by two plugins: {names}"))
            continue
        ((_, claim),) = owners
        present = path in raw.plugin_tables
        if present and not isinstance(raw.plugin_tables[path], dict):
            raw.problems.append(ConfigProblem(path, f"expected a table, got {show(raw.plugin_tables[path])}"))
            continue
        try:
            sections[path] = converter.structure(raw.plugin_tables.get(path, {}), claim.cls)
        except Exception as exc:
            if present:
                raw.problems.extend(walk(exc, path))
            else:
                sections[path] = None  # installed but not configured: fine until used
    inactive = set(inactive_plugins)
    for path in sorted(set(raw.plugin_tables) - set(claims)):
        root, _, name = path.partition(".")
        if not name and inactive and isinstance(raw.plugin_tables[path], dict):
            continue  # maybe the table of a plugin that did not load: disabling a plugin never breaks the file
        if not name:  # a top-level key nobody claims: unknown, among the core tables and the claimed ones
            raw.problems.append(_unknown_top_level(root, [*_core_types(), *(p for p in claims if "." not in p)]))
            continue
        if name in inactive:
            continue
        siblings = [p.partition(".")[2] for p in claims if p.startswith(root + ".")]
        close = difflib.get_close_matches(name, siblings, n=1)
        hint = f" (did you mean {root}.{close[0]}?)" if close else ""
        raw.problems.append(ConfigProblem(path, f"no installed plugin reads this table{hint}"))
    return sections


def load_raw(explicit: str | os.PathLike[str] | None, env: Mapping[str, str], cwd: Path) -> RawConfig:
    return read_raw(find_config(explicit, env, cwd), env)


def read_raw(location: ConfigLocation | None, env: Mapping[str, str]) -> RawConfig:
    if location is None:
        return RawConfig("<defaults>", {}, {}, [])
    return split_raw(read_toml(location.path), str(location.path), env)


def finish(raw: RawConfig, core: CoreConfig, sections: dict[str, Any], owners: Mapping[str, str]) -> ClawbotConfig:
    """The validated configuration, or one :class:`ConfigError` with every problem found."""
    if raw.problems:
        # dict.fromkeys: drop duplicates but keep file order within a key (a set would not).
        raise ConfigError(raw.source, sorted(dict.fromkeys(raw.problems), key=lambda p: p.path))
    source = None if raw.source == "<defaults>" else raw.source
    unread = frozenset(path for path in raw.plugin_tables if "." not in path and path not in sections)
    return ClawbotConfig(core=core, sections=sections, owners=dict(owners), source=source, unread=unread)


__all__ = [
    "ConfigError",
    "ConfigLocation",
    "RawConfig",
    "find_config",
    "finish",
    "load_raw",
    "locate_config",
    "make_converter",
    "normalise_claims",
    "read_raw",
    "read_toml",
    "split_raw",
    "structure_core",
    "structure_sections",
]
