"""A plugin's command that ``clawbot --help`` lists without importing it.

Listing the commands calls every plugin's ``clawbot_commands``, and every ``clawbot``
invocation that lists them pays for what that imports. A :class:`LazyCommand` carries only
a name, a help line and where the real command lives; the ``clawbot`` group hands out the
real one when the command is looked up. Plugins use it as ``clawbot.commandkit.LazyCommand``.
"""

from __future__ import annotations

import importlib
from typing import Any

import click


class LazyCommand(click.Command):
    """A command (or group) ``clawbot --help`` lists by its name and help line alone: the
    module that defines it (``target``, ``"module:attribute"``) loads when it is used, and
    from then on the real command parses, shows its own ``--help`` and runs.

    A plugin's ``clawbot_commands`` adds one so that listing the commands imports none of
    its command modules (a store, attrs classes, the kernel's value types); looking the
    command up (``clawbot pairing ...``) gives the real one, its options and subcommands::

        cli.add_command(LazyCommand("pairing", "Approve strangers ...", "clawbot_pairing.commands:pairing"))
    """

    def __init__(self, name: str, help: str, target: str) -> None:
        super().__init__(name=name, help=help, short_help=help)
        self._target = target

    def command(self) -> click.Command:
        """The real command, imported on first use."""
        module_name, _, attribute = self._target.partition(":")
        command: click.Command = getattr(importlib.import_module(module_name), attribute)
        return command

    @staticmethod
    def resolved(command: click.Command | None) -> click.Command | None:
        """``command`` itself, or the real command of a lazy one (imported now): what the
        ``clawbot`` group hands out once a command is looked up to be used or inspected."""
        return command.command() if isinstance(command, LazyCommand) else command

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any) -> click.Context:
        # click runs `ctx.command.invoke(ctx)`: the context made here belongs to the real command
        return self.command().make_context(info_name, args, parent, **extra)
