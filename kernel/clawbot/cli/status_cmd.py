"""``clawbot status``: whether a gateway runs here, where, and how its channels are doing.

Asks the running gateway's control API (``GET /v1/health``) with the stdlib client: nothing
is booted, so it answers in a blink even while the gateway is busy.
"""

from __future__ import annotations

import sys
import time
from typing import Any, NoReturn

import click

from clawbot.cli.output import echo, echo_json
from clawbot.cli.state import CliState

START_HINT = "Start it with `clawbot run` (or as a service: `clawbot gateway install`)."


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the gateway's health as JSON.")
@click.pass_obj
def status(state: CliState, as_json: bool) -> None:
    """Is a gateway running? Its address, pid, uptime, channels' and services' health, running turns."""
    from clawbot.control.client import ApiUnavailable, find_gateway
    from clawbot.control.endpoint import live_endpoint
    from clawbot.control.token import token_path
    from clawbot.gateway.instance import gateway_holder

    root = state.paths().root
    client = find_gateway(root)
    if client is None:
        endpoint = live_endpoint(root)
        if endpoint is not None:
            message = f"A gateway runs (pid {endpoint['pid']}), but its token {token_path(root)} cannot be read by this user."
        elif (pid := gateway_holder(root)) is not None:
            message = (
                f"A gateway runs (pid {pid}) but has no control API (clawbot-control is blocked or not installed,"
                " or gateway.control_api = false): status cannot ask it."
            )
        else:
            message = f"No gateway is running on {root}. {START_HINT}"
        _say_not_running(message, as_json)
    try:
        code, health = client.call("GET", "/v1/health")
    except ApiUnavailable as exc:
        _say_not_running(f"The gateway (pid {client.pid}) does not answer: {exc}", as_json)
    if code != 200 or not isinstance(health, dict):
        _say_not_running(f"The gateway (pid {client.pid}) answered {code}: {(health or {}).get('error', '')}", as_json)
    if as_json:
        echo_json({"running": True, "address": client.address, **health}, ensure_ascii=True)
        return
    echo(f"gateway: running, pid {health.get('pid')}, {client.address}, up {_duration(health.get('uptime_s', 0))}, version {health.get('version')}")
    echo("channels:")
    rows = health.get("channels", [])
    width = max((len(str(row.get("name"))) for row in rows), default=0)
    for row in rows:
        echo("  " + _channel_line(row, width))
    # a service whose job is done (a one-shot announcement at start) is listed after the work still running
    services = sorted(health.get("services") or [], key=lambda row: row.get("state") in ("stopped", "done"))
    if services:
        echo("services:")
        width = max(len(str(row.get("name"))) for row in services)
        for row in services:
            echo("  " + _service_line(row, width))
    for page in health.get("pages") or []:
        echo(f"page: {client.address}{page.get('path')} ({page.get('plugin')}; log in with the token in {token_path(root)})")
    turns = health.get("running_turns") or []
    echo(f"running turns: {', '.join(turns) if turns else 'none'}")
    for row in health.get("heartbeats") or []:
        echo(f"heartbeats ({row.get('agent')}): {_heartbeat_line(row)}")
    for row in health.get("undelivered") or []:
        when = row.get("at")
        ago = f"{_duration(time.time() - when)} ago" if isinstance(when, int | float) else "?"
        echo(f"went nowhere ({ago}): {row.get('what', '')}")


def _heartbeat_line(row: dict[str, Any]) -> str:
    every = row.get("every_minutes") or 0
    cadence = f"every {every} min" if every else "off"
    if row.get("not_running"):
        cadence = f"not running: {row['not_running']}"
    tokens = row.get("tokens") or 0
    shown = f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)
    return f"{cadence}; {row.get('runs') or 0} runs, {shown} tokens"


def _say_not_running(message: str, as_json: bool) -> NoReturn:
    if as_json:
        echo_json({"running": False, "message": message}, ensure_ascii=True)
    else:
        echo(message)
    sys.exit(1)


def _channel_line(row: dict[str, Any], width: int = 0) -> str:
    parts = [str(row.get("name")).ljust(width)]
    if row.get("state"):
        parts.append(str(row["state"]).ljust(10))
    since = row.get("since")
    if isinstance(since, int | float):
        parts.append(f"for {_duration(time.time() - since)}")
    if row.get("restarts"):
        parts.append(f"restarted {row['restarts']}x")
    if row.get("last_error"):
        parts.append(f"last error: {row['last_error']}")
    return "  ".join(parts)


def _service_line(row: dict[str, Any], width: int) -> str:
    """A channel's line for the supervision, then what the service says of itself and whose it is."""
    line = _channel_line(row, width)
    said = str(row.get("health") or "ok")
    if said != "ok" or row.get("detail"):
        line += f"  {said}" + (f": {row['detail']}" if row.get("detail") else "")
    if row.get("plugin"):
        line += f"  (plugin {row['plugin']})"
    return line


def _duration(seconds: float) -> str:
    seconds = int(seconds or 0)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m {secs}s" if minutes else f"{secs}s"
