"""The setup plugin's hooks: the commands that set clawbot up and check it."""

from __future__ import annotations

import click
from clawbot import hookimpl


@hookimpl
def clawbot_commands(cli: click.Group) -> None:
    # The command modules load when the CLI lists its commands, never when plugins are discovered.
    from clawbot_setup.doctor import doctor
    from clawbot_setup.onboard import onboard
    from clawbot_setup.plugins_new import plugins
    from clawbot_setup.service import gateway

    cli.add_command(doctor)
    cli.add_command(onboard)
    cli.add_command(plugins)
    cli.add_command(gateway)
