"""The OpenAI / OpenAI-compatible embedder with the real ``openai`` SDK against the fake LLM."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest
from clawbot.testing.fake_llm import IN_PROCESS_URL, FakeLLM
from clawbot_memory.embedders import EmbedderError, EmbedderSettings, build_embedder
from clawbot_memory.embedders.openai import OpenAIEmbedder, batches

SECRET = "sk-test-never-show-me-0123456789"
FAST = (0.001, 0.004)  # backoff for tests: the real one is 0.5 s -> 8 s


def embedder(fake: FakeLLM, *, kind: str = "openai-compatible", env: dict[str, str] | None = None, **settings: Any) -> OpenAIEmbedder:
    settings.setdefault("base_url", IN_PROCESS_URL + "/v1")
    settings.setdefault("model", "embed-test")
    settings.setdefault("api_key", SECRET)
    return OpenAIEmbedder.from_settings(EmbedderSettings(kind=kind, **settings), env or {}, http_client=fake.http_client(), backoff=FAST)


def embedding_requests(fake: FakeLLM) -> list[Any]:
    return [r for r in fake.requests if r.path == "/v1/embeddings"]


async def test_vectors_keep_the_order_of_the_texts_and_learn_the_dimensions(fake_llm: FakeLLM) -> None:
    fake_llm.embedding_dims = 48
    emb = embedder(fake_llm)
    assert "dims known after the first call" in emb.describe()
    texts = [f"note {i} about topic {i % 3}" for i in range(7)]
    vectors = await emb.embed_documents(texts)
    assert vectors.shape == (7, 48) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # each row is the vector of its own text, whatever order the server used
    singles = np.stack([await emb.embed_query(text) for text in texts])
    assert np.allclose(vectors, singles, atol=1e-6)
    assert emb.dims == 48 and "(48 dims)" in emb.describe()
    assert embedding_requests(fake_llm)[0].body["model"] == "embed-test"
    await emb.close()


async def test_large_inputs_are_split_into_batches_of_at_most_batch_tokens(fake_llm: FakeLLM) -> None:
    emb = embedder(fake_llm, batch_tokens=100)
    texts = ["word " * 40] * 7  # 50 estimated tokens each: two a batch
    vectors = await emb.embed_documents(texts)
    assert vectors.shape[0] == 7
    sizes = [len(r.body["input"]) for r in embedding_requests(fake_llm)]
    assert sizes == [2, 2, 2, 1]
    assert [list(span) for span in batches(["a" * 1000, "b", "c"], 100)] == [[0], [1, 2]]  # a too-long text goes alone
    assert batches([], 100) == []


async def test_rate_limit_waits_as_asked_then_succeeds(fake_llm: FakeLLM) -> None:
    fake_llm.fail("rate_limit", times=2, retry_after=0.05)
    emb = embedder(fake_llm)
    started = time.monotonic()
    vectors = await emb.embed_documents(["hello"])
    assert vectors.shape[0] == 1
    assert time.monotonic() - started >= 0.1  # retry-after honoured twice, over the tiny backoff
    assert len(embedding_requests(fake_llm)) == 3


async def test_server_errors_past_the_retries_become_one_sentence(fake_llm: FakeLLM) -> None:
    fake_llm.fail("server_error", times=10)
    emb = embedder(fake_llm, retries=3)
    with pytest.raises(EmbedderError) as caught:
        await emb.embed_documents(["hello"])
    assert len(embedding_requests(fake_llm)) == 4  # one try and three retries
    message = str(caught.value)
    assert "HTTP 500" in message and "embed-test" in message and "Traceback" not in message


@pytest.mark.parametrize("kind", ["auth", "billing", "unknown_model", "context_length"])
async def test_errors_that_cannot_heal_are_not_retried_and_never_show_the_key(fake_llm: FakeLLM, kind: str) -> None:
    fake_llm.fail(kind, times=5, message=f"bad key {SECRET} given")
    emb = embedder(fake_llm)
    with pytest.raises(EmbedderError) as caught:
        await emb.embed_documents(["hello"])
    assert len(embedding_requests(fake_llm)) == 1
    assert SECRET not in str(caught.value)
    if kind == "auth":
        assert "refused the API key (HTTP 401)" in str(caught.value)


async def test_openai_takes_its_key_from_the_environment_and_says_when_there_is_none(fake_llm: FakeLLM) -> None:
    emb = embedder(fake_llm, kind="openai", api_key="", model="", env={"OPENAI_API_KEY": SECRET})
    await emb.embed_query("hello")
    request = embedding_requests(fake_llm)[0]
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert request.body["model"] == "text-embedding-3-small"

    keyless = embedder(fake_llm, kind="openai", api_key="", env={})
    with pytest.raises(EmbedderError, match="OPENAI_API_KEY"):
        await keyless.embed_query("hello")
    assert len(embedding_requests(fake_llm)) == 1  # nothing sent without a key


async def test_an_endpoint_that_is_down_is_reported_after_the_retries() -> None:
    emb = OpenAIEmbedder.from_settings(EmbedderSettings(kind="ollama", base_url="http://127.0.0.1:9/v1", retries=1), {}, backoff=FAST)
    with pytest.raises(EmbedderError, match="cannot be reached"):
        await emb.embed_query("hello")
    await emb.close()


async def test_over_loopback_as_a_user_would_run_it(fake_llm_server: FakeLLM) -> None:
    settings = EmbedderSettings(kind="ollama", base_url=fake_llm_server.base_url + "/v1")
    emb = build_embedder(settings, {})
    assert emb is not None and emb.model == "nomic-embed-text"
    vectors = await emb.embed_documents(["the cat sat", "the cat sat", "stock prices fell"])
    assert vectors[0] @ vectors[1] == pytest.approx(1.0, abs=1e-5)
    assert vectors[0] @ vectors[2] < 0.9
    await emb.close()


def test_kinds_defaults_and_cache_keys() -> None:
    env = {"OPENAI_API_KEY": SECRET}
    assert build_embedder(EmbedderSettings(kind="none"), env) is None
    openai_emb = build_embedder(EmbedderSettings(kind="openai"), env)
    ollama = build_embedder(EmbedderSettings(kind="ollama"), env)
    other = build_embedder(EmbedderSettings(kind="openai-compatible", base_url="http://u:pw@10.0.0.5:8000/v1?x=1", model="bge"), env)
    local = build_embedder(EmbedderSettings(kind="local"), env)
    assert (openai_emb.provider, openai_emb.model) == ("openai", "text-embedding-3-small")
    assert openai_emb.cache_key == "openai/text-embedding-3-small@https://api.openai.com/v1"
    assert ollama.cache_key == "ollama/nomic-embed-text@http://127.0.0.1:11434/v1"
    assert other.cache_key == "openai-compatible/bge@http://10.0.0.5:8000/v1"  # no user, password or query
    keys = {e.cache_key for e in (openai_emb, ollama, other, local)}
    assert len(keys) == 4 and not any(SECRET in key or "pw" in key for key in keys)
    # the key is not in the settings' repr either (settings end up in logs and errors)
    assert SECRET not in repr(EmbedderSettings(kind="openai", api_key=SECRET))
    with pytest.raises(EmbedderError, match="embedder = 'word2vec'"):
        build_embedder(EmbedderSettings(kind="word2vec"), env)


@pytest.mark.parametrize(
    ("settings", "needs"),
    [
        (EmbedderSettings(kind="openai-compatible", model="bge"), "base_url"),
        (EmbedderSettings(kind="openai-compatible", base_url="http://127.0.0.1:8000/v1"), "model"),
    ],
)
async def test_incomplete_settings_name_the_missing_key(settings: EmbedderSettings, needs: str) -> None:
    emb = build_embedder(settings, {})
    with pytest.raises(EmbedderError, match=rf"\[plugins.memory\] {needs}"):
        await emb.embed_query("hello")
