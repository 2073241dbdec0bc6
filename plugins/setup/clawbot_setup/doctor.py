"""``clawbot doctor``: checks of the installation, each problem with its fix.

Python, SQLite and the state directory (writable, private) are checked here; the rest (the
configuration, the plugins, the model and its key, the workspaces) is the kernel's answer
(:func:`clawbot.commandkit.kernel_health`), plugins' own lines included.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

import click
from clawbot.commandkit import CliState, config_option, console, kernel_health
from clawbot.paths import StatePaths
from clawbot.types import HealthCheck

_MARKS = {"ok": "[green]ok  [/]", "info": "[blue]info[/]", "warn": "[yellow]warn[/]", "fail": "[red]FAIL[/]"}


@click.command(short_help="Check the installation and say how to fix problems.")
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
    from rich.markup import escape  # rich loads only when the doctor prints, not for --help

    out = console(highlight=False)
    findings = [*check_python(), *check_sqlite(), *check_state_dir(state.env), *kernel_health(state, live=live)]
    for f in findings:
        out.print(f"{_MARKS[f.level]} {f.area:8} {escape(f.detail)}")
        if f.fix:
            fix = f.fix.replace("\n", "\n                   ")  # a list of options stays aligned
            out.print(f"              fix: {escape(fix)}")
    failed = sum(f.level == "fail" for f in findings)
    out.print(f"\n{failed} problem{'s' if failed != 1 else ''} found" if failed else "\nall checks passed")
    sys.exit(1 if failed else 0)


def check_python() -> list[HealthCheck]:
    version = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info < (3, 11):  # noqa: UP036 - the check runs on whatever Python started clawbot
        return [HealthCheck("fail", "python", f"Python {version} is too old", "install Python 3.11 or newer")]
    return [HealthCheck("ok", "python", f"Python {version} ({sys.executable})")]


def check_sqlite() -> list[HealthCheck]:
    # Only what the kernel itself needs (sessions); what a plugin needs of SQLite (full-text
    # search, extensions) is its own clawbot_doctor_checks, so no absent plugin is named.
    return [HealthCheck("ok", "sqlite", f"SQLite {sqlite3.sqlite_version}")]


def check_state_dir(env: Mapping[str, str]) -> list[HealthCheck]:
    paths = StatePaths.resolve(env)
    root = paths.root
    if not root.exists():
        parent = next((p for p in root.parents if p.exists()), Path("/"))
        if os.access(parent, os.W_OK):
            return [HealthCheck("info", "state", f"{root} does not exist yet; it is created on first run")]
        return [HealthCheck("fail", "state", f"{root} cannot be created ({parent} is not writable)", "set CLAWBOT_HOME to a writable directory")]
    if not os.access(root, os.W_OK):
        return [HealthCheck("fail", "state", f"{root} is not writable", f"fix its permissions: chmod u+w {root}")]
    return [HealthCheck("ok", "state", f"state directory {root}"), *check_state_modes(paths)]


# the state directory holds transcripts, keys and logs: nobody else may read any of it
_MAX_ENTRIES = 20_000  # a huge sessions folder is sampled, not walked to the end


def check_state_modes(paths: StatePaths) -> list[HealthCheck]:
    """Directories 0700 and files 0600 under the state directory (credentials: a failure)."""
    root = paths.root
    if not root.is_dir() or os.name != "posix":
        return []
    loose: list[Path] = []
    for count, (directory, _dirs, files) in enumerate(os.walk(root)):
        for path in [Path(directory), *(Path(directory) / f for f in files)]:
            try:
                if stat.S_IMODE(path.lstat().st_mode) & 0o077 and not path.is_symlink():
                    loose.append(path)
            except OSError:
                continue
        if count > _MAX_ENTRIES:
            break
    if not loose:
        return [HealthCheck("ok", "state", f"{root} is private (directories 0700, files 0600)")]
    creds = [p for p in loose if p == paths.credentials or paths.credentials in p.parents]
    others = [p for p in loose if p not in creds]
    findings = []
    if creds:
        findings.append(
            HealthCheck(
                "fail",
                "state",
                f"{_listed(creds)} readable by other users (holds API keys)",
                f"chmod 700 {paths.credentials} && chmod 600 {paths.credentials}/*",
            )
        )
    if others:
        findings.append(HealthCheck("warn", "state", f"{_listed(others)} readable by other users (transcripts, logs, settings)", f"chmod -R go-rwx {root}"))
    return findings


def _listed(paths: list[Path]) -> str:
    shown = ", ".join(f"{p} ({stat.S_IMODE(p.lstat().st_mode):04o})" for p in paths[:3])
    return shown + (f" and {len(paths) - 3} more" if len(paths) > 3 else "") + (" is" if len(paths) == 1 else " are")
