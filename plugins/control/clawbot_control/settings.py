"""Where the control API listens, and the rule that keeps it on loopback unless asked.

Binding beyond loopback exposes the API to the network: it is refused unless
``gateway.bind`` was written in the configuration file itself, and even then every request
needs the token, as on loopback.
"""

from __future__ import annotations

import ipaddress
import tomllib
from pathlib import Path
from typing import Any

import attrs
from clawbot.control.token import ensure_token
from clawbot.types import Settings


class ControlApiError(Exception):
    """The control API cannot start as configured; the message says why and what to change."""


@attrs.frozen
class ApiSettings:
    host: str
    port: int
    state_root: Path
    token: str = attrs.field(repr=False)
    explicit_bind: bool = False


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, explicit: bool) -> None:
    if is_loopback(host) or explicit:
        return
    raise ControlApiError(
        f"gateway.bind = {host!r} is not a loopback address: the control API listens beyond this machine "
        "only when gateway.bind is set in clawbot.toml itself (every request still needs the token)"
    )


def bind_set_in_file(source: str | Path | None) -> bool:
    """Whether the configuration file itself names ``gateway.bind``."""
    if not source:
        return False
    try:
        data: Any = tomllib.loads(Path(source).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    gateway = data.get("gateway") if isinstance(data, dict) else None
    return isinstance(gateway, dict) and "bind" in gateway


def settings_for(clawbot: Settings, state_root: Path) -> ApiSettings:
    """The API's settings from ``[gateway]``; creates the token on first use."""
    return ApiSettings(clawbot.gateway_bind, clawbot.gateway_port, state_root, ensure_token(state_root), bind_set_in_file(clawbot.config_file))
