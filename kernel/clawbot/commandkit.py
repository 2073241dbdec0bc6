"""Helpers for plugins that add CLI commands (``clawbot_commands``).

A plugin command shares the root group's options and its lazily loaded configuration and
kernel through :class:`CliState` (``click.get_current_context().find_object(CliState)``).

A command prints with :func:`echo`, :func:`echo_json` and :func:`console` (rich), never with
``click.echo`` or ``print``: they show control characters as ``\\uXXXX``, so a file name or a
note from the workspace cannot send escape sequences to the user's terminal.
"""

from __future__ import annotations

from typing import Any

from clawbot.cli.output import console, echo, echo_json
from clawbot.cli.state import EXIT_CONFIG, CliState, config_option, user_errors


def load_config(state: CliState | None) -> Any:
    """The validated configuration (the defaults when there is no file); exit 2 if broken.

    ``state`` is ``None`` when the command runs outside the clawbot group (embedded, tests).
    """
    with user_errors():
        if state is None:
            from clawbot.boot import load

            return load(None).config
        return state.load().config


__all__ = ["EXIT_CONFIG", "CliState", "config_option", "console", "echo", "echo_json", "load_config", "user_errors"]
