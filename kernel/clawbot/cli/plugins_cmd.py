"""``clawbot plugins list`` (plugins add subcommands such as ``new``: clawbot-setup)."""

from __future__ import annotations

import sys

import attrs
import click

from clawbot.cli.extendable import PluginExtendableGroup
from clawbot.cli.output import console, echo, echo_json
from clawbot.cli.state import CliState, config_option
from clawbot.plugins import create_plugin_manager


@click.group(cls=PluginExtendableGroup)
def plugins() -> None:
    """List installed plugins or create a new one."""


def _manager(state: CliState):  # noqa: ANN202 - PluginManager and BootOutcome, imported lazily
    """The plugin manager after one kernel boot (registration failures and conflicts found).

    A broken configuration leaves only the environment's plugins (no boot); a boot that fails
    still leaves every plugin listed.
    """
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from clawbot.config import ConfigError
    from clawbot.doctor import BootOutcome, boot_kernel

    try:
        loaded = state.load()
    except ConfigError as exc:
        echo(f"warning: configuration ignored for this listing:\n{exc}", err=True)

        return create_plugin_manager(env=state.env), BootOutcome()
    outcome = boot_kernel(loaded, findings=False)
    if outcome.error:
        echo(f"warning: the kernel failed to start: {outcome.error}", err=True)
    return loaded.plugins, outcome


@plugins.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@config_option
@click.pass_obj
def list_plugins(state: CliState, as_json: bool) -> None:
    """Show every plugin found: distribution, version, hooks and status (with load errors).

    Also runs the registration hooks once, as `clawbot run` does, and lists the hooks that
    failed, the names two plugins both offer and the chat commands named like a built-in one.
    """
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from clawbot.doctor import conflict_fix

    manager, outcome = _manager(state)
    records = sorted(manager.records.values(), key=lambda r: r.name)
    failures = [attrs.asdict(f) for f in manager.failures]
    if as_json:
        payload = {
            "plugins": [attrs.asdict(r) for r in records],
            "hook_failures": failures,
            "conflicts": outcome.conflicts,
            "shadowed_commands": outcome.shadowed,
        }
        if outcome.error:
            payload["boot_error"] = outcome.error
        echo_json(payload, ensure_ascii=True)
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="clawbot plugins", title_justify="left")
    for column in ("name", "distribution", "version", "hooks", "status"):
        table.add_column(column, overflow="fold")
    failed_plugins = {f.plugin for f in manager.failures}
    for r in records:
        status = r.status if not r.error else f"{r.status}: {r.error}"
        style = {"loaded": "green", "blocked": "yellow", "failed": "red"}[r.status]
        if r.status == "loaded" and r.name in failed_plugins:
            status, style = "loaded, hook failed (see below)", "red"
        hooks = ", ".join(h.removeprefix("clawbot_") for h in r.hooks)
        table.add_row(escape(r.name), escape(r.distribution or "-"), escape(r.version or "-"), hooks or "-", f"[{style}]{escape(status)}[/]")
    out = console(soft_wrap=False, width=None if sys.stdout.isatty() else 160, highlight=False)
    out.print(table)
    for r in records:
        for warning in r.warnings:
            out.print(f"[yellow]warning[/]: plugin {escape(r.name)}: {escape(warning)}")
    for f in manager.failures:
        out.print(f"[red]error[/]: plugin {escape(f.plugin)} failed in {f.hook}: {escape(f.error)}")
    for conflict in outcome.conflicts:
        out.print(f"[red]conflict[/]: {escape(conflict)}\n  fix: {escape(conflict_fix(conflict))}")
    for shadowed in outcome.shadowed:
        out.print(f"[yellow]warning[/]: {escape(shadowed)}\n  fix: rename the plugin's command")
