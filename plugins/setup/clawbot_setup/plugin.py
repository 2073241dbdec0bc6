"""The setup plugin's hooks: the commands that set clawbot up and check it.

Only ``hookimpl`` is imported at module level, and ``clawbot_commands`` adds each command as
a :class:`~clawbot.commandkit.LazyCommand`: ``clawbot --help`` lists them by name and help
line, and a command's module (the credentials store, the template, the service files) loads
only when it is used.
"""

from __future__ import annotations

from clawbot import hookimpl


@hookimpl
def clawbot_commands(cli):
    import click
    from clawbot.commandkit import LazyCommand

    cli.add_command(LazyCommand("doctor", "Check the installation and say how to fix problems.", "clawbot_setup.doctor:doctor"))
    cli.add_command(LazyCommand("onboard", "Set up a model provider: key, base URL, default model.", "clawbot_setup.onboard:onboard"))
    # `plugins` and `gateway` are built-in groups: a group of the same name adds its subcommands to them
    plugins = click.Group("plugins")
    new_help = "Create a plugin distribution NAME from the plugin template, with a passing test."
    plugins.add_command(LazyCommand("new", new_help, "clawbot_setup.plugins_new:new_plugin"))
    cli.add_command(plugins)
    gateway = click.Group("gateway")
    gateway.add_command(LazyCommand("install", "Write the user service that runs `clawbot run`, enable it and start it now.", "clawbot_setup.service:install"))
    gateway.add_command(LazyCommand("uninstall", "Stop the user service, disable it and remove its file.", "clawbot_setup.service:uninstall"))
    gateway.add_command(LazyCommand("status", "Whether the service is installed and running, and whether a gateway answers.", "clawbot_setup.service:status"))
    cli.add_command(gateway)
