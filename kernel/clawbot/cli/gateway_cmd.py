"""``clawbot gateway logs``: the gateway's log. The service itself (``install``,
``uninstall``, ``status``) is the clawbot-setup plugin's, added to this group.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from clawbot.cli.extendable import PluginExtendableGroup
from clawbot.cli.output import echo
from clawbot.cli.state import CliState


@click.group(cls=PluginExtendableGroup)
def gateway() -> None:
    """Run the gateway as a user service: install, uninstall, status, logs."""


@gateway.command()
@click.option("-n", "--lines", "count", default=50, show_default=True, type=click.IntRange(0), help="How many of the last lines to show.")
@click.option("-f", "--follow", is_flag=True, help="Keep showing new lines as they are written (Ctrl-C stops).")
@click.pass_obj
def logs(state: CliState, count: int, follow: bool) -> None:
    """Show the gateway's log (<state dir>/logs/gateway.log)."""
    from clawbot.cli.logs import gateway_log_file

    path = gateway_log_file(state.paths().root)
    if not path.exists() and not follow:
        echo(f"No gateway log yet: {path} does not exist (the gateway writes it once `clawbot run` starts).", err=True)
        sys.exit(1)
    position = 0
    if path.exists():
        data = path.read_bytes()
        lines = data.decode("utf-8", "replace").splitlines()
        for line in lines[-count:] if count else []:
            echo(line)
        position = len(data)
    if follow:
        try:
            _follow(path, position)
        except KeyboardInterrupt:
            pass


def _follow(path: Path, position: int, poll_s: float = 0.5) -> None:
    """Print what is added to ``path``; a rotated file is read again from its start."""
    while True:
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            size = 0
        if size < position:  # rotated: the new file starts empty
            position = 0
        if size > position:
            with path.open("rb") as handle:
                handle.seek(position)
                chunk = handle.read(size - position)
            position += len(chunk)
            echo(chunk.decode("utf-8", "replace"), nl=False)
        time.sleep(poll_s)
