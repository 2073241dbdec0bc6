"""Local fixtures for the fake LLM tests (the pytest plugin's ``fake_llm`` is the lead's)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anthropic
import openai
import pytest
from clawbot.testing.fake_llm import IN_PROCESS_URL, FakeLLM


@pytest.fixture
def fake() -> FakeLLM:
    return FakeLLM()


@pytest.fixture
async def anthropic_client(fake: FakeLLM) -> AsyncIterator[anthropic.AsyncAnthropic]:
    client = anthropic.AsyncAnthropic(api_key="test", base_url=IN_PROCESS_URL, http_client=fake.http_client(), max_retries=0)
    yield client
    await client.close()


@pytest.fixture
async def openai_client(fake: FakeLLM) -> AsyncIterator[openai.AsyncOpenAI]:
    client = openai.AsyncOpenAI(api_key="test", base_url=IN_PROCESS_URL + "/v1", http_client=fake.http_client(), max_retries=0)
    yield client
    await client.close()
