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
from datetime import datetime

from clawbot.replykit import attachment, parse_reply
from clawbot.types import AgentHost, OutboundMessage
from clawbot.types.session_keys import main_key

from clawbot_automation.clock import Clock, utc_now
from clawbot_automation.cron_store import iso
from clawbot_automation.records import CronJob, CronRun
from clawbot_automation.scheduler import new_run_id

log = logging.getLogger(__name__)


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


async def run_cron_job(host: AgentHost, job: CronJob, due: datetime, reason: str, *, clock: Clock = utc_now) -> CronRun:
    """Run ``job`` once (it was due at ``due``); the finished run, failed or not (never raises)."""
    agent_id = job_agent(job, host.default_agent_id)
    session_key = job_session(job, agent_id)
    run_id, started = new_run_id(), clock()
    delivers = bool(job.deliver)

    def finished(status: str, delivered: bool | None, error: str = "") -> CronRun:
        return CronRun(job.name, run_id, iso(due), iso(started), iso(clock()), status, delivered, error, session_key, reason)  # type: ignore[arg-type]

    try:
        result = await host.run_turn(agent_id, session_key, job.message, kind="cron")
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
    if not host.gateway_running:
        return finished("failed", False, f"delivery to {job.deliver} failed: no gateway is running (start `clawbot run`)")
    text, media = await asyncio.to_thread(_with_attachments, host, agent_id, reply.text, reply.media)  # files: off the event loop
    try:
        sent = await host.deliver(OutboundMessage(channel=channel, peer_id=target, text=text, media=media), session_key)
    except Exception as exc:
        log.warning("cron job %s: delivery to %s failed: %s", job.name, job.deliver, exc)
        return finished("failed", False, f"delivery to {job.deliver} failed: {exc}")
    if sent is False:
        return finished("failed", False, f"delivery to {job.deliver} failed: a plugin's message_sending hook cancelled it")
    return finished("ok", True)


def _with_attachments(host: AgentHost, agent_id: str, text: str, refs: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The reply's ``MEDIA:`` files, confined to the agent's workspace and copied as a chat's
    reply's are (:func:`clawbot.replykit.attachment`); a refused one becomes a note."""
    if not refs:
        return text, ()
    workspace = host.workspace(agent_id)
    media, notes = [], []
    for ref in refs:
        attached, refused = attachment(ref, workspace, host.state_dir / "media" / "outbound")
        if attached is None:
            notes.append(f"({ref[:80]} was not attached: {refused})")
        else:
            media.append(attached)
    return "\n".join(part for part in (text, *notes) if part), tuple(media)
