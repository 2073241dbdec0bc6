"""The ``clawbot`` command line.

Start-up must stay fast, so nothing heavy is imported here: built-in subcommands are
imported only when run, and plugins are discovered only when the full command list is
needed (``--help``) or a name is not built in. Plugin discovery for commands honours
``CLAWBOT_DISABLE_PLUGINS``; ``plugins.allow``/``deny`` from the config apply when a command
boots the kernel.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from clawbot.cli.lazy import LazyCommand
from clawbot.cli.logs import configure_logging, default_logging
from clawbot.cli.state import CliState
from clawbot.plugins.tracing import tracing_enabled

# name -> (module:attribute, one-line help shown by --help without importing the module)
BUILTIN_COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("clawbot.cli.run_cmd:run", "Start the gateway with the enabled channels."),
    "agent": ("clawbot.cli.agent_cmd:agent", "Run one agent turn and print the reply."),
    "gateway": ("clawbot.cli.gateway_cmd:gateway", "Install, remove, check or read the log of the gateway service."),
    "status": ("clawbot.cli.status_cmd:status", "Is a gateway running: address, uptime, channels, turns."),
    "plugins": ("clawbot.cli.plugins_cmd:plugins", "List installed plugins or create a new one."),
    "config": ("clawbot.cli.config_cmd:config", "Show, validate or locate the configuration."),
    "sessions": ("clawbot.cli.sessions_cmd:sessions", "List sessions, show or reset one, or print its file."),
    "context": ("clawbot.cli.context_cmd:context", "Show what the system prompt is made of and its size."),
    "skills": ("clawbot.cli.skills_cmd:skills", "List the skills each agent has, or check them for problems."),
    "memory": ("clawbot.cli.memory_cmd:memory", "Show, rebuild or search the agents' long-term memory index."),
    "dev": ("clawbot.testing.dev_cli:dev", "Tools for developing clawbot and its plugins."),
}

# Built-in groups a plugin adds subcommands to with a group of the same name (clawbot.cli.extendable).
EXTENDABLE_GROUPS = frozenset({"plugins", "gateway"})


class ClawbotGroup(click.Group):
    """A click group whose built-ins load lazily and whose plugins add commands by hook."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._plugin_commands: dict[str, click.Command] | None = None
        self._group_extensions: dict[str, dict[str, click.Command]] = {}
        self.plugin_command_errors: list[str] = []

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*BUILTIN_COMMANDS, *self.commands, *self._plugins()})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands:
            return self.commands[name]
        if name in BUILTIN_COMMANDS:
            module_name, _, attribute = BUILTIN_COMMANDS[name][0].partition(":")
            command = getattr(importlib.import_module(module_name), attribute)
            self.add_command(command, name)
            return command
        return LazyCommand.resolved(self._plugins().get(name))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_text) for name, (_, help_text) in BUILTIN_COMMANDS.items()]
        rows += [(name, cmd.get_short_help_str(60)) for name, cmd in self._plugins().items()]
        with formatter.section("Commands"):
            formatter.write_dl(sorted(rows))
        if self.plugin_command_errors:
            with formatter.section("Plugin problems"):
                formatter.write_dl([("!", e) for e in self.plugin_command_errors])

    def forget_plugin_commands(self) -> None:
        """Discover the plugins' commands afresh at the next lookup: each run of ``main`` sees
        the plugins its own environment allows (``CLAWBOT_DISABLE_PLUGINS``), also when one
        process runs several (an embedder, a test)."""
        self._plugin_commands = None
        self._group_extensions = {}
        self.plugin_command_errors = []

    def group_extensions(self, group: str) -> dict[str, click.Command]:
        """The subcommands plugins add to the built-in group ``group`` (see :mod:`clawbot.cli.extendable`)."""
        self._plugins()
        return self._group_extensions.get(group, {})

    def _plugins(self) -> dict[str, click.Command]:
        if self._plugin_commands is None:
            self._plugin_commands = self._discover_plugin_commands()
        return self._plugin_commands

    def _discover_plugin_commands(self) -> dict[str, click.Command]:
        # deferred: the plugin manager and the value types load only when plugin commands are listed or looked up
        from clawbot.plugins import create_plugin_manager

        manager = create_plugin_manager()
        found: dict[str, click.Command] = {}
        owners: dict[str, str] = {}
        for impl in manager.impls("clawbot_commands"):
            scratch = click.Group()
            manager.call_impl_sync("clawbot_commands", impl, cli=scratch)
            for name, command in scratch.commands.items():
                if name in EXTENDABLE_GROUPS and isinstance(command, click.Group):
                    self._extend_group(name, command, impl.plugin_name, owners)
                    continue
                if name in BUILTIN_COMMANDS or name in found:
                    other = owners.get(name, "clawbot (built in)")
                    self.plugin_command_errors.append(f"command {name!r} of plugin {impl.plugin_name!r} clashes with {other}; ignored")
                    continue
                found[name], owners[name] = command, f"plugin {impl.plugin_name!r}"
        for failure in manager.failures:
            self.plugin_command_errors.append(f"plugin {failure.plugin!r} failed in {failure.hook}: {failure.error}")
        return found

    def _extend_group(self, group: str, extension: click.Group, plugin: str, owners: dict[str, str]) -> None:
        """A plugin's group named like a built-in group adds its commands to that group."""
        into = self._group_extensions.setdefault(group, {})
        for name, command in extension.commands.items():
            qualified = f"{group} {name}"
            if name in into:
                self.plugin_command_errors.append(f"command {qualified!r} of plugin {plugin!r} clashes with {owners[qualified]}; ignored")
                continue
            into[name], owners[qualified] = command, f"plugin {plugin!r}"


@click.group(cls=ClawbotGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Configuration file (default: $CLAWBOT_CONFIG, else ~/.clawbot/clawbot.toml; never ./clawbot.toml unless named).",
)
@click.version_option(package_name="clawbot-kernel", prog_name="clawbot")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None) -> None:
    """clawbot: your personal AI agent, on every chat channel you use."""
    ctx.obj = CliState(config_path=config_path, env=dict(os.environ))


def main(argv: list[str] | None = None) -> None:
    if tracing_enabled():  # before anything calls a hook, plugin command discovery included
        configure_logging("warning", os.environ)
    else:
        default_logging()
    if isinstance(cli, ClawbotGroup):
        cli.forget_plugin_commands()
    cli.main(args=argv, prog_name="clawbot")


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
