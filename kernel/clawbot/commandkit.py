"""Helpers for plugins that add CLI commands (``clawbot_commands``).

A plugin command shares the root group's options and its lazily loaded configuration and
kernel through :class:`CliState` (``click.get_current_context().find_object(CliState)``).

A command prints with :func:`echo`, :func:`echo_json` and :func:`console` (rich), never with
``click.echo`` or ``print``: they show control characters as ``\\uXXXX``, so a file name or a
note from the workspace cannot send escape sequences to the user's terminal.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from clawbot.cli.output import console, echo, echo_json
from clawbot.cli.state import EXIT_CONFIG, CliState, config_option, user_errors
from clawbot.paths import StatePaths


def load_config(state: CliState | None) -> Any:
    """The validated configuration (the defaults when there is no file); exit 2 if broken.

    ``state`` is ``None`` when the command runs outside the clawbot group (embedded, tests).
    """
    with user_errors():
        if state is None:
            # deferred: plugins import commandkit when `clawbot --help` lists their commands, and the config loads cattrs
            from clawbot.boot import load

            return load(None).config
        return state.load().config


def config_file_in_use(state: CliState | None) -> Path | None:
    """The configuration file clawbot reads (``None``: the built-in defaults); exit 2 if a named one is missing."""
    # deferred: plugins import commandkit when `clawbot --help` lists their commands, and the config loads cattrs
    from clawbot.config.edit import file_in_use

    with user_errors():
        return file_in_use(state.config_path if state else None, state.env if state else os.environ, Path.cwd())[0]


def set_config_string(state: CliState | None, table: str, key: str, value: str, *, entry: str | None = None) -> list[str]:
    """Set ``[table] key = "value"`` in the file clawbot writes (``<state>/clawbot.toml``);
    with ``entry``, ``table`` names an array of tables and the key is set in its entry whose
    ``id`` is ``entry`` (one agent of ``[[agents.list]]``).

    Returns what to tell the user: what was written, or, when another file is named instead
    (``--config``, ``$CLAWBOT_CONFIG``; never rewritten) or the file cannot be edited safely,
    exactly which line to put where.
    """
    # deferred: plugins import commandkit when `clawbot --help` lists their commands, and the config loads cattrs
    from clawbot.config.edit import file_in_use, precedence, set_entry_string, set_string, write_private

    env = state.env if state else os.environ
    target = StatePaths.resolve(env).config_file
    with user_errors():
        in_use, named = file_in_use(state.config_path if state else None, env, Path.cwd())
    line = f"{key} = {json.dumps(value, ensure_ascii=False)}"
    place = f"the [[{table}]] entry with id = {json.dumps(entry)}" if entry is not None else f"[{table}]"
    if in_use is not None and in_use.resolve() != target.resolve():
        return [
            f"{precedence(in_use, target, named)}; it was not changed. To make this the setting in use,",
            f"put this line under {place} in {in_use}:",
            "",
            f"    {line}",
            "",
        ]
    text = target.read_text(encoding="utf-8") if target.is_file() else ""
    parts = tuple(table.split("."))
    new = set_string(text, parts, key, value) if entry is None else set_entry_string(text, parts, entry, key, value)
    if new is None:
        return [f"{target} could not be edited safely and was not changed; put this line under {place} in it:", "", f"    {line}", ""]
    if new != text:
        try:
            write_private(target, new)
        except OSError as exc:
            return [f"{target} could not be written ({exc.strerror or exc}); put this line under {place} in it:", "", f"    {line}", ""]
    if entry is not None:
        return [f"Set {line} in {place} of {target}"]
    return [f"Set {table}.{line} in {target}"]


__all__ = [
    "EXIT_CONFIG",
    "CliState",
    "config_file_in_use",
    "config_option",
    "console",
    "echo",
    "echo_json",
    "load_config",
    "set_config_string",
    "user_errors",
]
