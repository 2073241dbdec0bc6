"""At a gateway's start: each sub-agent the last run left running is announced to its parent's
chat as interrupted (its model tells the person); one whose parent has no chat here goes
nowhere, and ``clawbot status`` says so."""

from __future__ import annotations

import logging

import attrs
from clawbot import AgentHost, Service, ServiceHealth, ServiceUnavailable

from clawbot_subagents.runs import SubagentRegistry, cut_off_announcement, is_subagent_session

log = logging.getLogger(__name__)


@attrs.define(eq=False)
class CutOffAnnouncer(Service):
    registry: SubagentRegistry
    name: str = "subagents-cut-off"
    _nowhere: list[str] = attrs.field(factory=list)

    async def run(self, host: AgentHost) -> None:
        for run in self.registry.take_cut_off():
            if is_subagent_session(run.parent_session_key):  # its parent sub-agent was cut off too, and is announced
                continue
            origin = run.parent_origin
            if origin is None or origin.channel not in host.channel_names():
                self._went_nowhere(f"sub-agent {run.run_id} of {run.parent_session_key} was interrupted by a restart; its chat is not running")
                continue
            log.info("sub-agent %s was interrupted by a restart: telling %s", run.run_id, run.parent_session_key)
            try:
                await host.post_system_event(run.parent_session_key, cut_off_announcement(run), origin=origin)
            except ServiceUnavailable as exc:
                self._went_nowhere(f"sub-agent {run.run_id} of {run.parent_session_key} was interrupted by a restart; {exc}")

    def _went_nowhere(self, what: str) -> None:
        log.warning("a reply went nowhere: %s", what)
        self._nowhere.append(what)

    def health(self) -> ServiceHealth:
        if self._nowhere:
            return ServiceHealth("degraded", f"{len(self._nowhere)} interrupted sub-agent(s) not announced: {self._nowhere[-1]}")
        return ServiceHealth("ok", "interrupted sub-agents announced")
