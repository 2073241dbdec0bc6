"""The pairing plugin's hooks: answering strangers, ``clawbot pairing``, its doctor line."""

from __future__ import annotations

import click
from clawbot import hookimpl
from clawbot.types import HealthCheck, PluginContext, StrangerAnswer, StrangerEvent

from clawbot_pairing.commands import pairing
from clawbot_pairing.doctor import approved_senders_check
from clawbot_pairing.strangers import answer_stranger


@hookimpl
def clawbot_direct_stranger(ctx: PluginContext, event: StrangerEvent) -> StrangerAnswer:
    return answer_stranger(ctx.state_dir, event)


@hookimpl
def clawbot_commands(cli: click.Group) -> None:
    cli.add_command(pairing)


@hookimpl
def clawbot_doctor_checks(ctx: PluginContext) -> list[HealthCheck]:
    return approved_senders_check(ctx.state_dir)
