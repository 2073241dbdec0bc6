"""At a gateway's start: each sub-agent the last run left running is announced to its parent's
chat as interrupted (its model tells the person); one whose parent has no chat here goes
nowhere, and ``clawbot status`` lists it among the undelivered replies."""

from __future__ import annotations

import logging

import attrs
from clawbot import AgentHost, Service, ServiceUnavailable

from clawbot_subagents.runs import SubagentRegistry, cut_off_announcement, is_subagent_session

log = logging.getLogger(__name__)


@attrs.define(eq=False)
class CutOffAnnouncer(Service):
    """Runs once per gateway start, and is done."""

    registry: SubagentRegistry
    name: str = "subagents-cut-off"

    async def run(self, host: AgentHost) -> None:
        for run in self.registry.take_cut_off():
            if is_subagent_session(run.parent_session_key):  # its parent sub-agent was cut off too, and is announced
                continue
            nowhere = f"sub-agent {run.run_id} of {run.parent_session_key} was interrupted by a restart; its chat is not running"
            origin = run.parent_origin
            if origin is None or origin.channel not in host.channel_names():
                host.report_undelivered(nowhere)
                continue
            log.info("sub-agent %s was interrupted by a restart: telling %s", run.run_id, run.parent_session_key)
            try:
                await host.post_system_event(run.parent_session_key, cut_off_announcement(run), origin=origin, kind="chat")
            except ServiceUnavailable:
                host.report_undelivered(nowhere)
