"""Loading configuration and plugins together.

They depend on each other: ``plugins.allow``/``deny`` decide which plugins load, and the
loaded plugins declare the classes that validate their own tables. :func:`load` does both
and raises one :class:`~clawbot.config.ConfigError` naming every problem.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs
import cattrs

from clawbot.config import ClawbotConfig, ConfigError, ConfigProblem
from clawbot.config.loader import (
    ConfigLocation,
    RawConfig,
    find_config,
    finish,
    make_converter,
    normalise_claims,
    read_raw,
    structure_core,
    structure_sections,
)
from clawbot.config.trust import ignored_local_config, refuse_if_writable, refuse_state_in_writable, writable_folders
from clawbot.credentials import credential_env
from clawbot.paths import StatePaths
from clawbot.plugins import BlockRules, PluginManager, create_plugin_manager
from clawbot.types.context import ConfigSection


@attrs.frozen
class Loaded:
    """A validated configuration and the plugin manager built from it."""

    config: ClawbotConfig
    plugins: PluginManager
    env: Mapping[str, str] = attrs.field(repr=False)  # holds API keys
    notices: tuple[str, ...] = ()  # one line each for the user (a ./clawbot.toml that is ignored)


def with_own_commands(path: str | None) -> str:
    """``path`` with the directory of the running clawbot's ``clawbot`` command at its end.

    ``uv run clawbot`` and an activated venv put that directory on PATH; starting the
    installed entry point by its full path (a service, a cron job) does not. Skill
    eligibility (a skill that needs ``clawbot``) and the commands tools run then see the
    same programs however clawbot was started. Nothing on PATH is shadowed: it is appended.
    """
    path = path or os.defpath
    scripts = sysconfig.get_path("scripts")
    if not scripts or shutil.which("clawbot", path=scripts) is None:
        return path
    entries = [os.path.normpath(p) for p in path.split(os.pathsep) if p]
    if os.path.normpath(scripts) in entries:
        return path
    return path + os.pathsep + scripts if path else scripts


def load(
    config_path: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    plugins: Mapping[str, object] | Iterable[tuple[str, object]] = (),
    load_entrypoints: bool = True,
    defaults: bool = False,
    stored_credentials: bool = True,
) -> Loaded:
    """Find and validate the configuration, loading the plugins it allows.

    ``plugins`` are registered explicitly in addition to (or, with
    ``load_entrypoints=False``, instead of) the installed entry points. ``defaults`` reads
    no file at all: the built-in defaults with every installed plugin (what is installed,
    even when the file in use is broken). ``stored_credentials=False``: ``env`` already holds
    the credentials to use (onboarding checks values before it stores them).
    """
    env = dict(os.environ if env is None else env)
    # stored credentials (`clawbot onboard`) under the real environment: a real variable wins
    for name, value in credential_env(StatePaths.resolve(env)).items() if stored_credentials else ():
        if not env.get(name):
            env[name] = value
    env["PATH"] = with_own_commands(env.get("PATH"))
    cwd = cwd or Path.cwd()
    location = None if defaults else find_config(config_path, env, cwd)
    raw = read_raw(location, env)
    converter = make_converter()
    core = structure_core(raw, converter)
    rules = BlockRules.build(core.plugins.allow, core.plugins.deny, env)
    manager = create_plugin_manager(plugins=plugins, load_entrypoints=load_entrypoints, rules=rules, env=env)
    for index, name in enumerate(core.plugins.allow):
        if name not in manager.records:
            raw.problems.append(ConfigProblem(f"plugins.allow[{index}]", f"no installed plugin is named {name!r}"))

    claims: dict[str, list[tuple[str, ConfigSection]]] = {}
    for contribution in manager.call_each_sync("clawbot_config_schema"):
        found, errors = normalise_claims(contribution.plugin, contribution.value)
        manager.records[contribution.plugin].warnings.extend(errors)
        for claim in found:
            claims.setdefault(claim.path, []).append((contribution.plugin, claim))
    inactive = [name for name, record in manager.records.items() if record.status != "loaded"]
    sections = structure_sections(raw, claims, converter, inactive)
    owners = {path: owners[0][0] for path, owners in claims.items() if len(owners) == 1}
    notices: tuple[str, ...] = ()
    # before the file's own problems: a planted file is refused, not debugged
    state = StatePaths.resolve(env)
    own_file = state.config_file
    folders = writable_folders(ClawbotConfig(core=core, sections=sections), env, cwd, str(location.path) if location else None)
    if location is None or location.path != own_file:
        own = _grants_of(own_file, env, converter, claims, inactive)
        folders += writable_folders(own, env, cwd, str(own_file) if own_file.is_file() else None)
    if location is not None:
        refuse_if_writable(location.path, location.named_by, folders, own_file)
    refuse_state_in_writable(state.root, folders)  # its credentials were read above: nothing is returned
    if not defaults and (location is None or location.path == own_file):
        notices = tuple(filter(None, [ignored_local_config(cwd, folders, own_file)]))
    return Loaded(finish(raw, core, sections, owners), manager, env, notices)


def _grants_of(
    path: Path, env: Mapping[str, str], converter: cattrs.Converter, claims: Mapping[str, list[tuple[str, ConfigSection]]], inactive: list[str]
) -> ClawbotConfig:
    """The user's own configuration as far as it is valid (its problems are reported when it is the one loaded)."""
    try:
        raw = read_raw(ConfigLocation(path, "your configuration file") if path.is_file() else None, env)
    except ConfigError:
        raw = RawConfig("<defaults>", {}, {}, [])
    return ClawbotConfig(core=structure_core(raw, converter), sections=structure_sections(raw, claims, converter, inactive))


__all__ = ["ConfigError", "Loaded", "load"]
