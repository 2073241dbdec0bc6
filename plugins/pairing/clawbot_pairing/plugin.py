"""The pairing plugin's hooks: answering strangers, ``clawbot pairing``, its doctor line.

Only ``hookimpl`` is imported at module level: plugin discovery (``clawbot --help``) stays
cheap, and the store and the commands load when a hook needs them.
"""

from __future__ import annotations

from clawbot import hookimpl

PAIRING_HELP = "Approve strangers who asked to talk to your agent (pairing codes)."


@hookimpl
def clawbot_direct_stranger(ctx, event):
    from clawbot_pairing.strangers import answer_stranger

    return answer_stranger(ctx.state_dir, event)


@hookimpl
def clawbot_commands(cli):
    from clawbot.commandkit import LazyCommand

    cli.add_command(LazyCommand("pairing", PAIRING_HELP, "clawbot_pairing.commands:pairing"))


@hookimpl
def clawbot_doctor_checks(ctx):
    from clawbot_pairing.doctor import approved_senders_check

    return approved_senders_check(ctx.state_dir)
