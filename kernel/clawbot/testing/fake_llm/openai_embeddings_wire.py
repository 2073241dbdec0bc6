"""OpenAI Embeddings (``POST /v1/embeddings``): deterministic vectors from the input text.

Each input becomes a hashed bag of its lower-cased words (a stable hash, the same in every
process), L2-normalised, of ``fake.embedding_dims`` dimensions (or the request's
``dimensions``). Texts sharing words point the same way, so a search over them behaves like
a crude real one; identical texts get identical vectors. ``encoding_format`` ``float`` and
``base64`` (the SDK's default) are both answered.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
import struct
from typing import Any

from clawbot.testing.fake_llm.script import rough_tokens

DEFAULT_DIMS = 64
_WORD = re.compile(r"\w+")


def embedding(text: str, dims: int) -> list[float]:
    """The fake's vector for ``text``: each word adds +-1 at a hashed position, then L2."""
    vector = [0.0] * dims
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        vector[value % dims] += 1.0 if (value >> 63) & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0:  # no word at all: still a valid unit vector
        vector[0], norm = 1.0, 1.0
    return [x / norm for x in vector]


def inputs(body: dict[str, Any]) -> list[str] | str:
    """The texts of a request, or why it is invalid (token-id inputs become their ids as words)."""
    value = body.get("input")
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        return "'input' must be a non-empty string or array"
    if all(isinstance(item, int) for item in value):
        value = [value]
    texts: list[str] = []
    for item in value:
        if isinstance(item, str):
            if not item:
                return "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."
            texts.append(item)
        elif isinstance(item, list) and all(isinstance(token, int) for token in item):
            texts.append(" ".join(f"t{token}" for token in item))
        else:
            return "'input' must be a string, an array of strings or an array of token arrays"
    return texts


def render(body: dict[str, Any], texts: list[str], dims: int) -> dict[str, Any]:
    requested = body.get("dimensions")
    if isinstance(requested, int) and requested > 0:
        dims = requested
    as_base64 = body.get("encoding_format") == "base64"
    data = []
    for index, text in enumerate(texts):
        vector = embedding(text, dims)
        value: Any = base64.b64encode(struct.pack(f"<{dims}f", *vector)).decode() if as_base64 else vector
        data.append({"object": "embedding", "index": index, "embedding": value})
    tokens = sum(rough_tokens(text) for text in texts)
    return {"object": "list", "data": data, "model": body["model"], "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}
