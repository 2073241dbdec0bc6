"""A plain model conversation: the stand-in for the agent loop until stage 2 lands.

It keeps each session's history in memory, sends it with a short system prompt built from
the prompt-section hooks, and returns the model's text. No tools, no transcript yet.
"""

from __future__ import annotations

import logging
from collections import defaultdict

import attrs

from clawbot.agent.models import ModelChoice
from clawbot.agent.prompt import collect_sections
from clawbot.kernel import Kernel
from clawbot.paths import expand_user_path
from clawbot.types import Message, ModelRequest, PromptContext, SystemPrompt, TextSink, Usage

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
    history: dict[str, list[Message]] = attrs.field(factory=lambda: defaultdict(list))

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
        history = self.history[session_key]
        user = Message.user(text)
        request = ModelRequest(
            model=self.model.model,
            system=await self.system_prompt(session_key, channel),
            messages=(*history, user),
            thinking=self.kernel.config.agents.defaults.thinking,
        )
        reply = await self.model.provider.complete(request, on_text)
        history.extend([user, reply])
        return TurnResult(reply.text, self.model.ref, reply.usage or Usage())
