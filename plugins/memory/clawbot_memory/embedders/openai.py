"""Embeddings from OpenAI or any OpenAI-compatible endpoint (Ollama, vLLM, LM Studio, ...).

The official SDK with its own retries off: we batch by estimated tokens and retry ourselves,
so a rate limit during a large re-index waits as long as the server asks and no longer than
a search can bear, and every failure becomes one sentence without the key.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from clawbot.providerkit import endpoint, parse_retry_after, sdk_timeout
from clawbot.tokens import estimate_tokens

from clawbot_memory.embedders.base import DEFAULT_BASE_URLS, DEFAULT_MODELS, EmbedderError, EmbedderSettings, normalized_rows

if TYPE_CHECKING:
    import numpy

OPENAI_BASE_URL = "https://api.openai.com/v1"
#: The most inputs one request may carry (OpenAI's limit; compatible servers accept it too).
MAX_INPUTS = 2048
#: Seconds for one embedding request.
REQUEST_TIMEOUT_S = 60.0
#: A server asking to wait longer than this is reported at once instead of stalling a search.
MAX_WAIT_S = 60.0
_NO_KEY = "none"  # the SDK insists on a key; local servers ignore it


def batches(texts: Sequence[str], batch_tokens: int) -> list[range]:
    """Index ranges of ``texts`` holding at most ``batch_tokens`` estimated tokens each (a
    longer text goes alone) and at most :data:`MAX_INPUTS` texts."""
    out: list[range] = []
    start, size = 0, 0
    for index, text in enumerate(texts):
        tokens = estimate_tokens(text)
        if index > start and (size + tokens > batch_tokens or index - start >= MAX_INPUTS):
            out.append(range(start, index))
            start, size = index, 0
        size += tokens
    if start < len(texts):
        out.append(range(start, len(texts)))
    return out


class OpenAIEmbedder:
    def __init__(
        self,
        *,
        provider: str,
        model: str,
        base_url: str,
        api_key: str,
        missing_key: str | None = None,
        batch_tokens: int = 8000,
        retries: int = 3,
        backoff: tuple[float, float] = (0.5, 8.0),
        http_client: Any = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self.base_url = base_url
        self.cache_key = f"{provider}/{model}@{endpoint(base_url or OPENAI_BASE_URL)}"
        self.dims: int | None = None
        """Learnt from the first answer."""
        self._api_key = api_key
        self._missing = missing_key
        self._batch_tokens = max(1, batch_tokens)
        self._retries = max(0, retries)
        self._backoff = backoff
        self._http_client = http_client
        self._client: Any = None

    @classmethod
    def from_settings(cls, settings: EmbedderSettings, env: Mapping[str, str], **kwargs: Any) -> OpenAIEmbedder:
        kind = settings.kind
        base_url = settings.base_url or DEFAULT_BASE_URLS[kind]
        model = settings.model or DEFAULT_MODELS[kind]
        missing = None
        api_key = settings.api_key
        if kind == "openai" and not api_key:
            api_key = env.get("OPENAI_API_KEY", "")
            if not api_key:
                missing = "the openai embedder has no API key: set OPENAI_API_KEY or [plugins.memory] api_key."
        if kind == "openai-compatible" and not base_url:
            missing = 'the openai-compatible embedder needs [plugins.memory] base_url (e.g. "http://127.0.0.1:8000/v1").'
        if not model:
            missing = f'the {kind} embedder needs [plugins.memory] model (e.g. "nomic-embed-text").'
        return cls(
            provider=kind,
            model=model,
            base_url=base_url,
            api_key=api_key or _NO_KEY,
            missing_key=missing,
            batch_tokens=settings.batch_tokens,
            retries=settings.retries,
            **kwargs,
        )

    def describe(self) -> str:
        dims = f"{self.dims} dims" if self.dims else "dims known after the first call"
        return f"{self.provider} {self.model} at {endpoint(self.base_url or OPENAI_BASE_URL)} ({dims})"

    async def embed_documents(self, texts: Sequence[str]) -> numpy.ndarray:
        import numpy as np

        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dims or 0), dtype=np.float32)
        parts = [await self._embed_batch(texts[span.start : span.stop]) for span in batches(texts, self._batch_tokens)]
        return normalized_rows(np.concatenate(parts, axis=0))

    async def embed_query(self, text: str) -> numpy.ndarray:
        return (await self.embed_documents([text]))[0]

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    # -- one request, retried ---------------------------------------------------------------

    def _sdk(self) -> Any:
        if self._missing:
            raise EmbedderError(self._missing)
        if self._client is None:
            import openai

            kwargs: dict[str, Any] = {"api_key": self._api_key, "max_retries": 0, "timeout": sdk_timeout(REQUEST_TIMEOUT_S)}
            if self.base_url:
                kwargs["base_url"] = self.base_url
            if self._http_client is not None:
                kwargs["http_client"] = self._http_client
            self._client = openai.AsyncOpenAI(**kwargs)
        return self._client

    async def _embed_batch(self, texts: list[str]) -> numpy.ndarray:
        client = self._sdk()
        attempt = 0
        while True:
            try:
                response = await client.embeddings.create(model=self.model, input=texts, encoding_format="float")
                return self._vectors(response, len(texts))
            except Exception as exc:
                wait = self._retry_wait(exc, attempt)
                if wait is None:
                    raise self._error(exc) from None
            attempt += 1
            await asyncio.sleep(wait)

    def _retry_wait(self, exc: Exception, attempt: int) -> float | None:
        """Seconds to wait before trying ``exc``'s request again; None: report it now."""
        import openai

        if attempt >= self._retries:
            return None
        if isinstance(exc, openai.RateLimitError):
            if _code(exc) == "insufficient_quota":
                return None
        elif isinstance(exc, openai.APIStatusError):
            if exc.status_code < 500:
                return None
        elif not isinstance(exc, openai.APIConnectionError):
            return None
        first, longest = self._backoff
        wait = min(longest, first * 2**attempt)
        asked = parse_retry_after(_headers(exc))
        if asked is not None:
            if asked > MAX_WAIT_S:
                return None
            wait = max(wait, asked)
        return wait

    def _vectors(self, response: Any, count: int) -> numpy.ndarray:
        import numpy as np

        data = sorted(getattr(response, "data", None) or [], key=lambda item: item.index)
        if len(data) != count:
            raise EmbedderError(f"{self._where()} answered {len(data)} embeddings for {count} texts.")
        try:
            vectors = np.asarray([item.embedding for item in data], dtype=np.float32)
        except (TypeError, ValueError):
            raise EmbedderError(f"{self._where()} answered embeddings that are not lists of numbers of one length.") from None
        if vectors.ndim != 2 or vectors.shape[1] == 0 or not np.isfinite(vectors).all():
            raise EmbedderError(f"{self._where()} answered empty or non-finite embeddings.")
        if self.dims is not None and vectors.shape[1] != self.dims:
            raise EmbedderError(f"{self._where()} changed its embedding size from {self.dims} to {vectors.shape[1]} dims.")
        self.dims = int(vectors.shape[1])
        return vectors

    def _where(self) -> str:
        return f"the {self.provider} embedder ({self.model} at {endpoint(self.base_url or OPENAI_BASE_URL)})"

    def _error(self, exc: Exception) -> EmbedderError:
        import openai

        where = self._where()
        if isinstance(exc, EmbedderError):
            return exc
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            hint = "set OPENAI_API_KEY or [plugins.memory] api_key" if self.provider == "openai" else "check [plugins.memory] api_key"
            return EmbedderError(f"{where} refused the API key (HTTP {exc.status_code}): {hint}.")
        if isinstance(exc, openai.RateLimitError):
            if _code(exc) == "insufficient_quota":
                return EmbedderError(f"{where} says the account is out of quota (HTTP 429): check its billing.")
            return EmbedderError(f"{where} is rate limited (HTTP 429) after {self._retries + 1} tries: try again later.")
        if isinstance(exc, openai.NotFoundError):
            return EmbedderError(f"{where} does not know the model (HTTP 404): check [plugins.memory] model.")
        if isinstance(exc, openai.APIStatusError):
            detail = self._scrub(_message(exc))
            return EmbedderError(f"{where} failed with HTTP {exc.status_code}" + (f": {detail}" if detail else "."))
        if isinstance(exc, openai.APITimeoutError):
            return EmbedderError(f"{where} did not answer within {REQUEST_TIMEOUT_S:g} s.")
        if isinstance(exc, openai.APIConnectionError):
            return EmbedderError(f"{where} cannot be reached: is the server running?")
        return EmbedderError(f"{where} failed ({type(exc).__name__}).")

    def _scrub(self, text: str) -> str:
        if self._api_key and self._api_key != _NO_KEY:
            text = text.replace(self._api_key, "[key]")
        return text[:300]


def _headers(exc: Exception) -> Mapping[str, str] | None:
    response = getattr(exc, "response", None)
    return getattr(response, "headers", None)


def _error_body(exc: Exception) -> Mapping[str, Any]:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        return body["error"]
    return body if isinstance(body, Mapping) else {}


def _code(exc: Exception) -> str | None:
    return getattr(exc, "code", None) or _error_body(exc).get("code")


def _message(exc: Exception) -> str:
    message = _error_body(exc).get("message")
    return str(message) if message else ""
