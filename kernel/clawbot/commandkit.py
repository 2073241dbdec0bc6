"""Helpers for plugins that add CLI commands (``clawbot_commands``).

A plugin command shares the root group's options and its lazily loaded configuration and
kernel through :class:`CliState` (``click.get_current_context().find_object(CliState)``).
"""

from __future__ import annotations

from typing import Any

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


__all__ = ["EXIT_CONFIG", "CliState", "config_option", "load_config", "user_errors"]
