"""``clawbot doctor``."""

from __future__ import annotations

import sys

import click

from clawbot.cli.output import console
from clawbot.cli.state import CliState, config_option

_MARKS = {"ok": "[green]ok  [/]", "info": "[blue]info[/]", "warn": "[yellow]warn[/]", "fail": "[red]FAIL[/]"}


@click.command()
@click.option("--live", is_flag=True, help="Also send one tiny real request to the default model (costs a few tokens).")
@config_option
@click.pass_obj
def doctor(state: CliState, live: bool) -> None:
    """Check Python, SQLite, the state directory, the configuration, the model and its key, the
    workspace and the plugins.

    No usable model is a failure, and so is every key of the default model rejected (or refused
    for billing). --live sends the key a turn would use now. Keys are never shown, only where
    they come from. Exits with 1
    when a check fails; every problem comes with the command or edit that fixes it.
    """
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from rich.markup import escape

    from clawbot.doctor import run_checks

    out = console(highlight=False)
    findings = run_checks(state.config_path, state.env, live)
    for f in findings:
        out.print(f"{_MARKS[f.level]} {f.check:8} {escape(f.detail)}")
        if f.fix:
            fix = f.fix.replace("\n", "\n                   ")  # a list of options stays aligned
            out.print(f"              fix: {escape(fix)}")
    failed = sum(f.level == "fail" for f in findings)
    out.print(f"\n{failed} problem{'s' if failed != 1 else ''} found" if failed else "\nall checks passed")
    sys.exit(1 if failed else 0)
