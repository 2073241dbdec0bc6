"""Fixtures of the compaction tests."""

from __future__ import annotations

import openai
import pytest
from clawbot.testing.fake_llm import IN_PROCESS_URL


@pytest.fixture
async def client(fake_llm_server):
    """An openai client of the fake LLM server."""
    async with openai.AsyncOpenAI(base_url=fake_llm_server.base_url + "/v1", api_key="x", max_retries=0) as opened:
        yield opened


@pytest.fixture
async def in_process_client(fake_llm):
    """An openai client wired to the fake LLM in process: no server, for the larger tables."""
    async with openai.AsyncOpenAI(base_url=IN_PROCESS_URL + "/v1", api_key="x", max_retries=0, http_client=fake_llm.http_client()) as opened:
        yield opened
