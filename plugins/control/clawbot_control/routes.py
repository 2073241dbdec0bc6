"""The ``/v1/`` HTTP endpoints (the token was checked by the server's middleware)."""

from __future__ import annotations

import json
import os
import time
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as dist_version
from typing import Any

from aiohttp import web
from clawbot.types import WebPage

from clawbot_control.request_context import channel_of, json_error
from clawbot_control.turns import answer_approval, turn_events

NDJSON = "application/x-ndjson"
STARTED_KEY: web.AppKey[float] = web.AppKey("started", float)


def add_routes(app: web.Application) -> None:
    app[STARTED_KEY] = time.monotonic()
    app.router.add_get("/v1/health", health)
    app.router.add_get("/v1/sessions", sessions)
    app.router.add_post("/v1/turns", turns)
    app.router.add_get("/v1/approvals", approvals)
    app.router.add_post("/v1/approvals/{id}", approve)
    app.router.add_post("/v1/cron/{name}/run", cron_run)


def version() -> str:
    try:
        return dist_version("clawbot-kernel")
    except PackageNotFoundError:
        return "unknown"


async def health(request: web.Request) -> web.Response:
    channel = channel_of(request)
    return web.json_response(
        {
            "version": version(),
            "pid": os.getpid(),
            "uptime_s": round(time.monotonic() - request.app[STARTED_KEY], 3),
            **channel.control.health(),
            # the plugins' pages a person opens (the web chat's /chat/), by the plugin offering them
            "pages": [
                {"path": route.path, "plugin": plugin}
                for plugin, route in sorted(channel.routes, key=lambda pair: pair[1].path)
                if isinstance(route, WebPage) and route.path.endswith("/")
            ],
        }
    )


async def sessions(request: web.Request) -> web.Response:
    agent = request.query.get("agent") or None
    return web.json_response(channel_of(request).control.sessions(agent))


async def _json_body(request: web.Request) -> dict[str, Any] | None:
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None


async def turns(request: web.Request) -> web.StreamResponse:
    body = await _json_body(request)
    if body is None:
        return json_error(400, 'the body must be a JSON object: {"text": ..., "session": ..., "agent": ...}')
    response = web.StreamResponse(headers={"Content-Type": NDJSON, "Cache-Control": "no-store"})
    await response.prepare(request)
    async for event in turn_events(channel_of(request), body):
        await response.write((json.dumps(event, ensure_ascii=True) + "\n").encode("ascii"))
    await response.write_eof()
    return response


async def approvals(request: web.Request) -> web.Response:
    rows = [
        {
            "id": waiting.offer.id,
            "session": waiting.session_key,
            "summary": waiting.offer.summary,
            "choices": list(waiting.offer.choices),
            "expires_at": waiting.expires_at.isoformat(),
        }
        for waiting in channel_of(request).control.waiting_approvals()
    ]
    return web.json_response(rows)


async def approve(request: web.Request) -> web.Response:
    body = await _json_body(request)
    if body is None:
        return json_error(400, 'the body must be a JSON object: {"choice": "allow-once" | "allow-always" | "deny"}')
    status, answer = await answer_approval(channel_of(request), request.match_info["id"], body.get("choice"))
    return web.json_response(answer, status=status)


async def cron_run(request: web.Request) -> web.Response:
    """Run a cron job now, in this gateway (its channels deliver); answers the finished run.

    The jobs are the automation plugin's: its service named ``cron`` answers through
    ``run_job_now(name) -> (status, body)`` (until plugins can add API endpoints of their own)."""
    service = channel_of(request).control.service("cron")
    run_job_now = getattr(service, "run_job_now", None)
    if run_job_now is None:
        return json_error(
            503, "cron jobs do not run in this gateway: cron.enabled = false, or no installed plugin runs them (clawbot-automation is blocked or not installed)"
        )
    status, body = await run_job_now(request.match_info["name"])
    return web.json_response(body, status=status)
