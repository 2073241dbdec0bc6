"""The offline embedder runs the real all-MiniLM-L6-v2 int8 model (a few texts: loading is ~0.3 s)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from clawbot_memory.embedders import EmbedderError, EmbedderSettings, build_embedder
from clawbot_memory.embedders.local import VOCAB, WINDOW_TOKENS, LocalEmbedder


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    embedder = build_embedder(EmbedderSettings(kind="local"), {})
    assert isinstance(embedder, LocalEmbedder)
    return embedder


async def test_similar_sentences_score_higher_than_unrelated_ones() -> None:
    local = LocalEmbedder()
    assert local.load_seconds is None  # nothing loads before the first use
    texts = ["A man is eating food.", "A man is eating a piece of bread.", "A man is riding a horse.", "The new movie is awesome."]
    vectors = await local.embed_documents(texts)
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors @ vectors.T
    # fp32 all-MiniLM-L6-v2 gives about 0.76 for the first pair and under 0.3 for the others
    assert similarity[0, 1] > 0.65
    assert similarity[0, 1] > similarity[0, 2] + 0.3
    assert abs(similarity[0, 3]) < 0.2
    assert local.load_seconds is not None  # loaded by the first use, once (bench/ measures how long)
    await local.close()


async def test_a_query_finds_the_memory_that_answers_it(local: LocalEmbedder) -> None:
    notes = [
        "- Priya: I joined the climbing gym yesterday and my arms are done for.",
        "- Tomas: We took the kids kayaking on the river last weekend.",
        "- Priya: My new job at the bakery starts on Monday.",
    ]
    documents = await local.embed_documents(notes)
    query = await local.embed_query("When did Priya go to the climbing gym?")
    assert query.shape == (384,)
    assert int(np.argmax(documents @ query)) == 0


async def test_batches_and_windows_do_not_change_a_text_s_vector(local: LocalEmbedder) -> None:
    long_chunk = "# 2023-05-08\n" + "\n".join(f"- line {i}: we talked about gardening, tomatoes and the weather" for i in range(40))
    texts = ["short", long_chunk, "", "another short note"]
    together = await local.embed_documents(texts)
    alone = np.stack([await local.embed_query(text) for text in texts])
    assert np.allclose(together, alone, atol=1e-4)
    assert np.isfinite(together).all()  # the empty text too
    assert (await local.embed_documents([])).shape == (0, 384)
    # one line longer than a window is cut into several windows, not dropped
    giant_line = "tomato " * (WINDOW_TOKENS * 3)
    assert np.isfinite(await local.embed_query(giant_line)).all()


async def test_embeddings_run_off_the_event_loop(local: LocalEmbedder) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.001)

    task = asyncio.create_task(ticker())
    await local.embed_documents(["a note about the garden " * 20] * 8)
    task.cancel()
    assert ticks > 3


def test_identity_and_the_shipped_vocabulary() -> None:
    embedder = LocalEmbedder()
    assert embedder.cache_key == f"local/all-MiniLM-L6-v2-int8/w{WINDOW_TOKENS}"
    assert embedder.describe() == "local all-MiniLM-L6-v2 (384 dims)"
    lines = VOCAB.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 30522 and lines[101] == "[CLS]" and lines[102] == "[SEP]"
    with pytest.raises(EmbedderError, match=r"\[plugins.memory\] model = 'bge-small'"):
        build_embedder(EmbedderSettings(kind="local", model="bge-small"), {})
