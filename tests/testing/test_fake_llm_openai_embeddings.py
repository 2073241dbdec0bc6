"""The fake LLM answers OpenAI Embeddings to the real ``openai`` SDK: stable vectors, real faults."""

from __future__ import annotations

import base64
import math
import struct
import subprocess
import sys

import openai
import pytest
from clawbot.testing.fake_llm import FakeLLM
from clawbot.testing.fake_llm.openai_embeddings_wire import embedding


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("encoding_format", ["float", "base64", None])
async def test_vectors_are_unit_length_in_order_and_sized_as_configured(fake: FakeLLM, openai_client: openai.AsyncOpenAI, encoding_format: str | None) -> None:
    fake.embedding_dims = 32
    extra = {"encoding_format": encoding_format} if encoding_format else {}  # the SDK asks for base64 by default
    texts = ["the cat sat on the mat", "a cat on a mat", "quarterly revenue grew"]
    response = await openai_client.embeddings.create(model="embed-test", input=texts, **extra)
    vectors = [item.embedding for item in sorted(response.data, key=lambda item: item.index)]
    if encoding_format == "base64":  # asked for explicitly, the SDK hands the text over as it came
        vectors = [list(struct.unpack("<32f", base64.b64decode(v))) for v in vectors]
    assert [len(v) for v in vectors] == [32, 32, 32]
    assert all(math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, abs_tol=1e-5) for v in vectors)
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])  # shared words point the same way
    assert response.model == "embed-test" and response.usage.prompt_tokens > 0
    [request] = fake.requests
    assert (request.api, request.path, request.model) == ("openai-embeddings", "/v1/embeddings", "embed-test")
    assert fake.pending_replies == 0  # embeddings use no scripted reply


async def test_requested_dimensions_win_and_token_inputs_work(fake: FakeLLM, openai_client: openai.AsyncOpenAI) -> None:
    response = await openai_client.embeddings.create(model="m", input="hello", dimensions=8, encoding_format="float")
    assert len(response.data[0].embedding) == 8
    tokens = await openai_client.embeddings.create(model="m", input=[[1, 2, 3], [4]], encoding_format="float")
    assert len(tokens.data) == 2 and len(tokens.data[0].embedding) == 64


def test_the_same_text_gets_the_same_vector_in_every_process() -> None:
    code = "from clawbot.testing.fake_llm.openai_embeddings_wire import embedding; print(embedding('Hello, memory!', 16))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert other == str(embedding("Hello, memory!", 16))
    assert embedding("", 4) == [1.0, 0.0, 0.0, 0.0]  # no word: still a unit vector


async def test_bad_input_is_a_400(fake: FakeLLM, openai_client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError):
        await openai_client.embeddings.create(model="m", input=[""])
    with pytest.raises(openai.BadRequestError):
        await openai_client.embeddings.create(model="m", input=[])


async def test_faults_are_served_in_openai_s_error_shapes(fake: FakeLLM, openai_client: openai.AsyncOpenAI) -> None:
    fake.fail("rate_limit", retry_after=3)
    fake.fail("server_error")
    fake.fail("auth")
    fake.fail("context_length", tokens=9000, limit=8192)
    with pytest.raises(openai.RateLimitError) as limited:
        await openai_client.embeddings.create(model="m", input="x")
    assert limited.value.response.headers["retry-after"] == "3"
    with pytest.raises(openai.InternalServerError):
        await openai_client.embeddings.create(model="m", input="x")
    with pytest.raises(openai.AuthenticationError):
        await openai_client.embeddings.create(model="m", input="x")
    with pytest.raises(openai.BadRequestError, match="maximum context length is 8192 tokens"):
        await openai_client.embeddings.create(model="m", input="x")
    assert (await openai_client.embeddings.create(model="m", input="x")).data
