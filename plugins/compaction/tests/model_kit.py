"""The summarising model for the compaction tests: the real openai SDK talking to the fake
LLM server, failures turned into the ProviderErrors the kernel's summary call raises."""

from __future__ import annotations

import openai
from clawbot.types import ProviderError, SummaryCall


def summarizer(client: openai.AsyncOpenAI) -> SummaryCall:
    """What the kernel supplies: one model call without tools; failures are ProviderErrors."""

    async def summarize(system: str, prompt: str) -> str:
        try:
            reply = await client.chat.completions.create(
                model="gpt-test", messages=[{"role": "system", "content": system}, {"role": "user", "content": prompt}]
            )
        except openai.APIStatusError as error:
            raise ProviderError("server" if error.status_code >= 500 else "rate_limit", str(error), status=error.status_code) from None
        return reply.choices[0].message.content or ""

    return summarize
