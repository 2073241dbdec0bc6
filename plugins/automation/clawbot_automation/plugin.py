"""Entry point of the automation plugin: hooks only, the scheduler and the CLI load when asked for."""

from clawbot import hookimpl


@hookimpl
def clawbot_commands(cli):
    from clawbot_automation.cron_cli import cron

    cli.add_command(cron)
