"""Built-in command groups that plugins add subcommands to.

A plugin extends ``clawbot plugins`` or ``clawbot gateway`` by adding, in its
``clawbot_commands`` hook, a group of the same name: that group's commands become the
built-in group's subcommands (the clawbot-setup plugin adds ``plugins new`` and ``gateway
install``/``uninstall`` this way). A built-in subcommand wins over a plugin's of the same
name, and two plugins offering one subcommand are reported like clashing commands.
"""

from __future__ import annotations

from typing import Protocol

import click

from clawbot.cli.lazy import LazyCommand


class SubcommandSource(Protocol):
    """The root group: it discovers plugin commands once and hands each group its extensions."""

    def group_extensions(self, group: str) -> dict[str, click.Command]: ...


class PluginExtendableGroup(click.Group):
    """A built-in group whose unknown subcommands are looked up among the plugins' groups of its name."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._extensions(ctx)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, cmd_name) or LazyCommand.resolved(self._extensions(ctx).get(cmd_name))

    def _extensions(self, ctx: click.Context) -> dict[str, click.Command]:
        root = ctx.find_root().command
        if not hasattr(root, "group_extensions") or self.name is None:  # run outside the clawbot group (embedded)
            return {}
        source: SubcommandSource = root
        extensions = source.group_extensions(self.name)
        return {name: command for name, command in extensions.items() if name not in self.commands}
