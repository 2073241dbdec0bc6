"""The ``/v1/`` HTTP endpoints (the token was checked by the server's middleware)."""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

import attrs
from aiohttp import web

from clawbot.config.automation_schema import heartbeat_minutes
from clawbot.control.server import CHANNEL_KEY, json_error
from clawbot.sessions.keys import main_key
from clawbot.types import WebPage

if TYPE_CHECKING:
    from clawbot.control.api_channel import ApiChannel

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


def _channel(request: web.Request) -> ApiChannel:
    return request.app[CHANNEL_KEY]


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("clawbot-kernel")
    except PackageNotFoundError:
        return "unknown"


def heartbeat_report(kernel: Any) -> list[dict[str, Any]]:
    """Each agent's heartbeat for ``clawbot status``: its cadence, and the runs and tokens
    its main session spent on heartbeats (the sessions count heartbeat turns apart)."""
    rows = []
    for agent_id in kernel.config.agent_ids() or [kernel.config.default_agent_id()]:
        info = kernel.sessions.get(main_key(agent_id))
        usage = info.heartbeat_usage if info is not None else None
        rows.append(
            {
                "agent": agent_id,
                "every_minutes": heartbeat_minutes(kernel.config, agent_id),
                "runs": info.heartbeats if info is not None else 0,
                "tokens": usage.prompt_tokens + usage.output_tokens if usage is not None else 0,
            }
        )
    return rows


async def health(request: web.Request) -> web.Response:
    channel = _channel(request)
    gateway = channel.gateway
    return web.json_response(
        {
            "version": version(),
            "pid": os.getpid(),
            "uptime_s": round(time.monotonic() - request.app[STARTED_KEY], 3),
            "agent": gateway.agent_id,
            "channels": channel.health(),
            # background services (plugins' and clawbot's own): supervision state and their own word
            "services": [attrs.asdict(report) for report in gateway.service_health()],
            "running_turns": gateway.running_sessions(),
            "heartbeats": heartbeat_report(gateway.kernel),
            # replies clawbot had no chat for (a heartbeat with no chat yet), newest last
            "undelivered": list(gateway.undelivered),
            # the plugins' pages a person opens (the web chat's /chat/), by the plugin offering them
            "pages": [
                {"path": route.path, "plugin": plugin}
                for plugin, route in sorted(channel.routes, key=lambda pair: pair[1].path)
                if isinstance(route, WebPage) and route.path.endswith("/")
            ],
        }
    )


async def sessions(request: web.Request) -> web.Response:
    store = _channel(request).gateway.kernel.sessions
    agent = request.query.get("agent") or None
    return web.json_response([store.converter.unstructure(info) for info in store.list(agent)])


async def _json_body(request: web.Request) -> dict[str, Any] | None:
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None


async def turns(request: web.Request) -> web.StreamResponse:
    from clawbot.control.turns import turn_events

    body = await _json_body(request)
    if body is None:
        return json_error(400, 'the body must be a JSON object: {"text": ..., "session": ..., "agent": ...}')
    response = web.StreamResponse(headers={"Content-Type": NDJSON, "Cache-Control": "no-store"})
    await response.prepare(request)
    async for event in turn_events(_channel(request), body):
        await response.write((json.dumps(event, ensure_ascii=True) + "\n").encode("ascii"))
    await response.write_eof()
    return response


async def approvals(request: web.Request) -> web.Response:
    from clawbot.agent.approvals import offer
    from clawbot.control.turns import pending_approvals

    rows = []
    for session_key, (ticket, request_) in pending_approvals(_channel(request)):
        shown = offer(ticket, request_)
        rows.append(
            {"id": ticket.id, "session": session_key, "summary": shown.summary, "choices": list(shown.choices), "expires_at": ticket.expires_at.isoformat()}
        )
    return web.json_response(rows)


async def approve(request: web.Request) -> web.Response:
    from clawbot.control.turns import answer_approval

    body = await _json_body(request)
    if body is None:
        return json_error(400, 'the body must be a JSON object: {"choice": "allow-once" | "allow-always" | "deny"}')
    status, answer = await answer_approval(_channel(request), request.match_info["id"], body.get("choice"))
    return web.json_response(answer, status=status)


async def cron_run(request: web.Request) -> web.Response:
    """Run a cron job now, in this gateway (its channels deliver); answers the finished run.

    The jobs are the automation plugin's: its service named ``cron`` answers through
    ``run_job_now(name) -> (status, body)`` (until plugins can add API endpoints of their own)."""
    service = _channel(request).gateway.kernel.services.get("cron")
    run_job_now = getattr(service, "run_job_now", None)
    if run_job_now is None:
        return json_error(503, "cron jobs do not run in this gateway (cron.enabled = false)")
    status, body = await run_job_now(request.match_info["name"])
    return web.json_response(body, status=status)
