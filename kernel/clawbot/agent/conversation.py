"""A plain model conversation: the stand-in for the agent loop until stage 2 lands.

Each turn runs in the session's lane: the history is loaded from the session's JSONL
transcript, the user message and the reply are appended as they happen, and the session
index gets the turn's usage. No tools yet: stage 2 replaces this with the agent loop.
"""

from __future__ import annotations

import logging

import attrs

from clawbot.agent.models import ModelChoice
from clawbot.agent.prompt import collect_sections
from clawbot.kernel import Kernel
from clawbot.paths import expand_user_path
from clawbot.types import Message, ModelRequest, PromptContext, SessionEvent, SystemPrompt, TextSink, Usage

log = logging.getLogger(__name__)
IDENTITY_LINE = "You are a personal assistant running inside clawbot."


@attrs.frozen
class TurnResult:
    text: str
    model: str
    usage: Usage


@attrs.define
class Conversation:
    kernel: Kernel
    model: ModelChoice
    agent_id: str

    async def system_prompt(self, session_key: str, channel: str | None) -> SystemPrompt:
        ctx = PromptContext(
            agent_id=self.agent_id,
            mode="full",
            session_key=session_key,
            workspace=expand_user_path(self.kernel.config.agent_workspace(self.agent_id), self.kernel.env),
            channel=channel,
            model=self.model.ref,
            config=self.kernel.config,
        )
        sections = await collect_sections(self.kernel, ctx)
        stable = "\n\n".join([IDENTITY_LINE, *(s.text for s in sections if s.stable)])
        volatile = "\n\n".join(s.text for s in sections if not s.stable)
        return SystemPrompt(stable, volatile)

    async def send(self, session_key: str, text: str, *, channel: str | None = None, on_text: TextSink | None = None) -> TurnResult:
        store = self.kernel.sessions
        async with store.lane(session_key):
            session = store.open(session_key)
            if session.created:
                await self.kernel.plugins.notify(
                    "clawbot_session_start",
                    event=SessionEvent(self.agent_id, session_key, session.info.session_id, reason="first message"),
                )
            loaded = session.transcript.load()
            user = Message.user(text)
            session.transcript.append_message(user)
            request = ModelRequest(
                model=self.model.model,
                system=await self.system_prompt(session_key, channel),
                messages=(*loaded.messages(), user),
                thinking=self.kernel.config.agents.defaults.thinking,
            )
            reply = await self.model.provider.complete(request, on_text)
            session.transcript.append_message(reply)
            usage = reply.usage or Usage()
            store.record_turn(session_key, usage=usage, model=self.model.ref)
        return TurnResult(reply.text, self.model.ref, usage)
