"""``<state dir>/gateway/endpoint.json``: where a running gateway's control API listens.

Written (0600) once the server listens, removed when it stops: ``{pid, host, port,
started_at}``. A file left by a gateway that died (its pid is gone) is ignored by clients.
Stdlib only: ``clawbot agent`` reads it before deciding whether to boot anything.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from clawbot.control.token import gateway_dir

ENDPOINT_FILE = "endpoint.json"


def endpoint_path(state_root: Path) -> Path:
    return gateway_dir(state_root) / ENDPOINT_FILE


def write_endpoint(state_root: Path, host: str, port: int) -> dict[str, Any]:
    from clawbot.statefile import atomic_write_json, make_private_dir

    make_private_dir(gateway_dir(state_root))
    data = {"pid": os.getpid(), "host": host, "port": port, "started_at": time.time()}
    atomic_write_json(endpoint_path(state_root), data)
    return data


def remove_endpoint(state_root: Path) -> None:
    """Remove the file, if it is still this process's (a newer gateway may have replaced it)."""
    path = endpoint_path(state_root)
    current = _read(path)
    if current is not None and current.get("pid") != os.getpid():
        return
    with contextlib.suppress(OSError):
        path.unlink()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    except OSError:
        return False
    return True


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def live_endpoint(state_root: Path) -> dict[str, Any] | None:
    """The endpoint of the gateway running on this state dir, or ``None`` (no file, a
    malformed one, or one whose process is gone)."""
    data = _read(endpoint_path(state_root))
    if data is None:
        return None
    pid, host, port = data.get("pid"), data.get("host"), data.get("port")
    if not isinstance(pid, int) or not isinstance(host, str) or not isinstance(port, int) or isinstance(port, bool):
        return None
    if pid <= 0 or not 0 < port < 65_536 or not pid_alive(pid):
        return None
    return data


def client_host(host: str) -> str:
    """The address a local client connects to: a wildcard bind is reached on loopback."""
    return {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
