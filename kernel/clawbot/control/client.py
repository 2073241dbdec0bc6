"""A client of a running gateway's control API, on the stdlib alone.

``clawbot agent`` and ``clawbot status`` use it before booting anything: when
:func:`find_gateway` finds a live gateway on this state dir (its endpoint file names a
running process and the token is readable), the turn goes to that gateway and this process
imports neither aiohttp nor a provider SDK nor the plugins. The token travels only in the
``Authorization`` header.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clawbot.control.endpoint import client_host, live_endpoint
from clawbot.control.errors import ApiAnswerLost, ApiUnavailable
from clawbot.control.token import read_token


class ApiClient:
    def __init__(self, host: str, port: int, token: str, *, pid: int = 0, started_at: float = 0.0, timeout: float = 10.0) -> None:
        self.host, self.port, self.pid, self.started_at = host, port, pid, started_at
        self._token = token
        self.timeout = timeout

    def __repr__(self) -> str:  # never the token
        return f"ApiClient({self.host!r}, {self.port})"

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def _connection(self, timeout: float | None) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(client_host(self.host), self.port, timeout=timeout)

    def _headers(self, body: bytes | None) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self._token}", "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        return headers

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
        """(status, decoded JSON) of one request."""
        data = None if body is None else json.dumps(body).encode("utf-8")
        connection = self._connection(self.timeout)
        try:
            try:
                connection.request(method, path, body=data, headers=self._headers(data))
            except OSError as exc:
                raise ApiUnavailable(f"the gateway at {self.address} cannot be reached: {exc}") from None
            try:
                response = connection.getresponse()
                raw = response.read()
            except (OSError, http.client.HTTPException) as exc:
                raise ApiAnswerLost(f"the gateway at {self.address} stopped answering: {exc or type(exc).__name__}") from None
            try:
                return response.status, json.loads(raw) if raw else None
            except ValueError:
                raise ApiUnavailable(f"{self.address}{path} answered {response.status} with something that is not JSON") from None
        finally:
            connection.close()

    def stream(self, path: str, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The events of a streamed (``application/x-ndjson``) answer, one at a time."""
        data = json.dumps(body).encode("utf-8")
        connection = self._connection(None)  # a turn may take minutes
        try:
            try:
                connection.request("POST", path, body=data, headers=self._headers(data))
                response = connection.getresponse()
            except OSError as exc:
                raise ApiUnavailable(f"the gateway at {self.address} cannot be reached: {exc}") from None
            if response.status != 200:
                raw = response.read()
                try:
                    error = json.loads(raw).get("error")
                except (ValueError, AttributeError):
                    error = None
                raise ApiUnavailable(error or f"{self.address}{path} answered {response.status}")
            while True:
                try:
                    line = response.readline()
                except (OSError, http.client.HTTPException) as exc:  # a reply cut off mid-chunk: IncompleteRead
                    raise ApiUnavailable(f"the gateway at {self.address} stopped before the turn finished: {exc}") from None
                if not line:
                    return
                line = line.strip()
                if line:
                    yield json.loads(line)
        finally:
            connection.close()


def find_gateway(state_root: Path) -> ApiClient | None:
    """A client of the gateway running on ``state_root``, or ``None`` (none runs, or its
    token cannot be read by this user)."""
    endpoint = live_endpoint(state_root)
    if endpoint is None:
        return None
    token = read_token(state_root)
    if token is None:
        return None
    started = endpoint.get("started_at")
    return ApiClient(endpoint["host"], endpoint["port"], token, pid=endpoint["pid"], started_at=started if isinstance(started, int | float) else 0.0)
