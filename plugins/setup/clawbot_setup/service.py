"""``clawbot gateway install|uninstall|status``: the gateway as a user service.

Linux: a systemd user unit (``$XDG_CONFIG_HOME/systemd/user/clawbot-gateway.service``),
enabled and started with ``systemctl --user``. macOS: a launchd agent
(``~/Library/LaunchAgents/ai.clawbot.gateway.plist``) loaded with ``launchctl bootstrap``.
Where the user's service manager cannot be reached (a container, an SSH session without a
user bus) the file is still written and the command says what to do instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence

import click
from clawbot.commandkit import CliState, config_option, echo, user_errors
from clawbot.control.endpoint import live_endpoint
from clawbot.statefile import make_private_dir

from clawbot_setup.service_files import (
    LAUNCHD_LABEL,
    UNIT_NAME,
    ServiceSpec,
    launchd_plist,
    launchd_plist_path,
    service_spec,
    systemd_unit,
    systemd_unit_path,
    write_service_file,
)

MANAGER_TIMEOUT_S = 30
NO_USER_BUS = (
    "Without a user service manager, run `clawbot run` under the supervisor you have (a container's "
    "entry point, tmux, ...); on a server over SSH, `loginctl enable-linger $USER` keeps your user "
    "services running, then log in again and rerun `clawbot gateway install`."
)


def _platform() -> str:
    return "macos" if sys.platform == "darwin" else "linux"


def _run_manager(argv: Sequence[str]) -> tuple[int, str]:
    """Run the service manager; (exit status, its output). 127: it is not installed."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=MANAGER_TIMEOUT_S, check=False)
    except FileNotFoundError:
        return 127, f"{argv[0]} is not installed"
    except subprocess.TimeoutExpired:
        return 124, f"{' '.join(argv)} did not answer within {MANAGER_TIMEOUT_S} s"
    return done.returncode, (done.stdout + done.stderr).strip()


def _systemctl(*args: str) -> tuple[int, str]:
    return _run_manager(["systemctl", "--user", *args])


def _user_bus_missing(code: int, output: str) -> bool:
    words = ("failed to connect to bus", "no medium found", "dbus_session_bus_address", "not been booted with systemd", "xdg_runtime_dir")
    return code == 127 or any(w in output.lower() for w in words)


@click.group()
def gateway() -> None:
    """Run the gateway as a user service: install, uninstall, status, logs."""


@gateway.command()
@config_option
@click.pass_obj
def install(state: CliState) -> None:
    """Write the user service that runs `clawbot run`, enable it and start it now.

    Linux: a systemd user unit; macOS: a launchd agent. It runs this Python with
    CLAWBOT_HOME and --config as given here; no key is written into it. Rerun it after
    moving clawbot to another Python. A configuration `clawbot run` would refuse (broken, or
    in a folder an agent can write) installs nothing: the service would only fail and restart.
    """
    with user_errors():
        state.load()
    spec = service_spec(state.env, state.config_path, state.paths().root)
    if _platform() == "macos":
        sys.exit(_install_launchd(state.env, spec))
    sys.exit(_install_systemd(state.env, spec))


def _install_systemd(env: Mapping[str, str], spec: ServiceSpec) -> int:
    path = systemd_unit_path(env)
    write_service_file(path, systemd_unit(spec))
    echo(f"Wrote {path}")
    for args in (("daemon-reload",), ("enable", "--now", UNIT_NAME)):
        code, output = _systemctl(*args)
        if code != 0:
            if _user_bus_missing(code, output):
                echo(f"systemctl --user is not available here ({output.splitlines()[0] if output else f'exit status {code}'}).", err=True)
                echo(f"The unit is written; nothing was started. {NO_USER_BUS}", err=True)
            else:
                echo(f"systemctl --user {' '.join(args)} failed: {output}", err=True)
            return 1
    echo(f"Started {UNIT_NAME}; it starts again at login and after a failure. `clawbot gateway status` shows it, `clawbot gateway logs -f` follows its log.")
    return 0


def _install_launchd(env: Mapping[str, str], spec: ServiceSpec) -> int:
    path = launchd_plist_path(env)
    make_private_dir(spec.log_path.parent)  # the state dir's logs folder: 0700 like every state folder
    write_service_file(path, launchd_plist(spec))
    echo(f"Wrote {path}")
    domain = f"gui/{os.getuid()}"
    _run_manager(["launchctl", "bootout", f"{domain}/{LAUNCHD_LABEL}"])  # an older one, if loaded
    code, output = _run_manager(["launchctl", "bootstrap", domain, str(path)])
    if code != 0:
        echo(f"launchctl bootstrap failed: {output}", err=True)
        return 1
    echo(f"Started {LAUNCHD_LABEL}; it starts again at login and after a failure.")
    return 0


@gateway.command()
@click.pass_obj
def uninstall(state: CliState) -> None:
    """Stop the user service, disable it and remove its file."""
    if _platform() == "macos":
        path = launchd_plist_path(state.env)
        _run_manager(["launchctl", "bootout", f"gui/{os.getuid()}/{LAUNCHD_LABEL}"])
    else:
        path = systemd_unit_path(state.env)
        code, output = _systemctl("disable", "--now", UNIT_NAME)
        if code != 0 and _user_bus_missing(code, output):
            echo("systemctl --user is not available here: nothing was stopped; removing the unit file.", err=True)
    if not path.exists():
        echo(f"No clawbot service is installed ({path} does not exist).")
        return
    path.unlink()
    if _platform() == "linux":
        _systemctl("daemon-reload")
    echo(f"Removed {path}; the gateway no longer runs as a service.")


@gateway.command()
@click.pass_obj
def status(state: CliState) -> None:
    """Whether the service is installed and running, and whether a gateway answers."""
    if _platform() == "macos":
        path = launchd_plist_path(state.env)
        code, output = _run_manager(["launchctl", "print", f"gui/{os.getuid()}/{LAUNCHD_LABEL}"])
        manager = "loaded" if code == 0 else "not loaded"
    else:
        path = systemd_unit_path(state.env)
        code, output = _systemctl("is-active", UNIT_NAME)
        manager = "systemctl --user is not available here" if _user_bus_missing(code, output) else (output.splitlines() or ["unknown"])[0]
    echo(f"Service file: {path}" + ("" if path.exists() else " (not installed: `clawbot gateway install`)"))
    echo(f"Service manager: {manager}")
    found = live_endpoint(state.paths().root)
    if found is None:
        echo("Gateway: not running")
    else:
        echo(f"Gateway: running (pid {found.get('pid')}), control API on {found.get('host')}:{found.get('port')}")
