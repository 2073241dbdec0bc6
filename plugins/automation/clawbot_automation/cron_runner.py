"""One run of a cron job: a turn of its agent with its message, and the reply delivered.

The turn runs in the job's own session (``agent:<id>:cron:<name>``) or the agent's main
session (``session = "main"``), as a ``cron`` turn (``clawbot_agent_end`` says so). Its
reply goes to ``deliver`` (``<channel>:<target>``) through the running gateway; a reply that
is only ``HEARTBEAT_OK`` or a silent token is not delivered (nothing needed saying). A run
whose turn or delivery failed is a failed run, with the reason recorded: a job that reports
success but delivered nothing is what users must never get.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from clawbot.types import CronJob, CronRun, OutboundMessage
from clawbot.types.session_keys import main_key

from clawbot_automation.clock import Clock, utc_now
from clawbot_automation.cron_store import iso
from clawbot_automation.scheduler import new_run_id

if TYPE_CHECKING:
    from clawbot.agent.conversation import Conversation
    from clawbot.agent.services import GatewayPort

log = logging.getLogger(__name__)


class CronHost(Protocol):
    """What a run needs: the kernel, the agents' conversations and the running gateway
    (an AgentRuntime, or the SharedServices a tool sees)."""

    @property
    def kernel(self) -> Any: ...

    @property
    def port(self) -> GatewayPort | None: ...

    def conversation(self, agent_id: str) -> Awaitable[Conversation]: ...


def job_agent(job: CronJob, default_agent: str) -> str:
    return job.agent_id or default_agent


def job_session(job: CronJob, agent_id: str) -> str:
    return main_key(agent_id) if job.session == "main" else f"agent:{agent_id}:cron:{job.name}"


def check_deliver(deliver: str) -> str:
    """``<channel>:<target>`` (or empty); a ValueError naming the option otherwise."""
    if deliver:
        channel, sep, target = deliver.partition(":")
        if not sep or not channel.strip() or not target.strip():
            raise ValueError(f"deliver: {deliver!r} is not <channel>:<target>, e.g. telegram:123456")
    return deliver


async def run_cron_job(runtime: CronHost, job: CronJob, due: datetime, reason: str, *, clock: Clock = utc_now) -> CronRun:
    """Run ``job`` once (it was due at ``due``); the finished run, failed or not (never raises)."""
    from clawbot.agent.turn_options import TurnOptions
    from clawbot.gateway.reply_protocol import parse_reply

    agent_id = job_agent(job, runtime.kernel.config.default_agent_id())
    session_key = job_session(job, agent_id)
    run_id, started = new_run_id(), clock()
    delivers = bool(job.deliver)

    def finished(status: str, delivered: bool | None, error: str = "") -> CronRun:
        return CronRun(job.name, run_id, iso(due), iso(started), iso(clock()), status, delivered, error, session_key, reason)  # type: ignore[arg-type]

    try:
        conversation = await runtime.conversation(agent_id)
        result = await conversation.send(session_key, job.message, options=TurnOptions(kind="cron"))
    except Exception as exc:  # a model or tool failure: recorded, never raised into the scheduler
        log.warning("cron job %s: the turn failed: %s", job.name, exc)
        return finished("failed", False if delivers else None, f"the turn failed: {getattr(exc, 'user_message', None) or exc}")
    if result.stopped == "aborted":
        return finished("failed", False if delivers else None, "the turn was stopped")
    if not delivers:
        return finished("ok", None)
    # a job's reply is its report: only a reply that is nothing but a silent token or
    # HEARTBEAT_OK says nothing; beside other text the token is dropped and the rest sent
    reply = parse_reply(result.text, ack_max_chars=0)
    if not reply.delivered or not (reply.text or reply.media):
        return finished("ok", False)
    channel, _, target = job.deliver.partition(":")
    port = runtime.port
    if port is None:
        return finished("failed", False, f"delivery to {job.deliver} failed: no gateway is running (start `clawbot run`)")
    text, media = await asyncio.to_thread(_with_attachments, runtime, agent_id, reply.text, reply.media)  # files: off the event loop
    try:
        sent = await port.deliver(OutboundMessage(channel=channel, peer_id=target, text=text, media=media), session_key)
    except Exception as exc:
        log.warning("cron job %s: delivery to %s failed: %s", job.name, job.deliver, exc)
        return finished("failed", False, f"delivery to {job.deliver} failed: {exc}")
    if sent is False:
        return finished("failed", False, f"delivery to {job.deliver} failed: a plugin's message_sending hook cancelled it")
    return finished("ok", True)


def _with_attachments(runtime: CronHost, agent_id: str, text: str, refs: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The reply's ``MEDIA:`` files, confined to the agent's workspace and copied as a chat's
    reply's are (:mod:`clawbot.gateway.reply_media`); a refused one becomes a note."""
    if not refs:
        return text, ()
    from clawbot.gateway.reply_media import attachment
    from clawbot.paths import expand_user_path

    kernel = runtime.kernel
    workspace = expand_user_path(kernel.config.agent_workspace(agent_id), kernel.env)
    media, notes = [], []
    for ref in refs:
        attached, refused = attachment(ref, workspace, kernel.paths.root / "media" / "outbound")
        if attached is None:
            notes.append(f"({ref[:80]} was not attached: {refused})")
        else:
            media.append(attached)
    return "\n".join(part for part in (text, *notes) if part), tuple(media)
