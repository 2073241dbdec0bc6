"""``clawbot cron`` as ``clawbot --help`` lists it: the commands load when one is used.

The commands need the job store (cattrs, the scheduler); ``clawbot --help`` must stay cheap,
so it sees only this group's name and help line.
"""

from __future__ import annotations

import importlib

import click

HELP = "Add, list, remove and run cron jobs: messages your agent acts on at set times."


class LazyCronGroup(click.Group):
    def __init__(self) -> None:
        super().__init__(name="cron", help=HELP, short_help=HELP)

    @staticmethod
    def _commands() -> click.Group:
        group: click.Group = importlib.import_module("clawbot_automation.cron_cli").cron
        return group

    def list_commands(self, ctx: click.Context) -> list[str]:
        return self._commands().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self._commands().get_command(ctx, cmd_name)
