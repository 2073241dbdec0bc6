"""The OpenAI provider (Chat Completions or Responses, streamed) and the Ollama provider.

Ollama is the same code pointed at Ollama's OpenAI-compatible endpoint; its detection asks
Ollama's own ``/api/tags`` for the installed models. The SDK is imported on the first model
call, and its retries are off: the kernel handles retries and fallbacks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawbot.providerkit import ClientsByKey, located, sdk_timeout, stream_events
from clawbot.types import LLMProvider, Message, ModelInfo, ModelRequest, ProviderError, TextSink

from clawbot_openai.config import OllamaConfig, OpenAIConfig

DEFAULT_MODEL = "gpt-5"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_CONTEXT = 128_000

# (model id prefix, context window, max output tokens, reasoning); first match wins.
_FAMILIES: tuple[tuple[str, int, int, bool], ...] = (
    ("gpt-5", 400_000, 128_000, True),
    ("gpt-4.1", 1_047_576, 32_768, False),
    ("gpt-4o", 128_000, 16_384, False),
    ("gpt-4-turbo", 128_000, 4_096, False),
    ("o1", 200_000, 100_000, True),
    ("o3", 200_000, 100_000, True),
    ("o4", 200_000, 100_000, True),
    ("gpt-oss", 131_072, 32_768, True),
)


class OpenAIProvider(LLMProvider):
    name = "openai"
    detect_priority = 20
    env_key = "OPENAI_API_KEY"
    max_tokens_key = "max_completion_tokens"

    def __init__(
        self,
        config: OpenAIConfig | OllamaConfig | None = None,
        env: Mapping[str, str] | None = None,
        *,
        http_client: Any = None,
    ) -> None:
        self.config = config if config is not None else OpenAIConfig()
        self.env = dict(env or {})
        self._http_client = http_client
        self._clients = ClientsByKey()

    # ------------------------------------------------------------------ setup

    def api_key(self) -> str:
        return self.config.api_key or self.env.get(self.env_key, "")

    def base_url(self) -> str:
        return self.config.base_url or self.env.get("OPENAI_BASE_URL", "") or DEFAULT_BASE_URL

    @property
    def native_tools(self) -> bool:
        return bool(getattr(self.config, "native_tools", True))

    def client(self, api_key: str | None = None) -> Any:
        """The SDK client for ``api_key`` (default: the configured or environment key), made on first use."""
        key = api_key or self.api_key()
        if not key:
            raise ProviderError("auth", f"no API key: set {self.env_key} or [providers.{self.name}] api_key", provider=self.name)
        import openai

        timeout = sdk_timeout(self.config.timeout_s, self.config.connect_timeout_s)
        kwargs: dict[str, Any] = {"api_key": key, "max_retries": 0, "timeout": timeout}
        if self.base_url() != DEFAULT_BASE_URL:
            kwargs["base_url"] = self.base_url()
        if self._http_client is not None:
            kwargs["http_client"] = self._http_client
        return self._clients.get(key, lambda: openai.AsyncOpenAI(**kwargs))

    async def aclose(self) -> None:
        await self._clients.aclose()

    # ------------------------------------------------------------------ LLMProvider

    def model_info(self, model_id: str) -> ModelInfo:
        bare = model_id.rsplit("/", 1)[-1]
        for prefix, context, output, reasoning in _FAMILIES:
            if bare.startswith(prefix):
                return ModelInfo(model_id, context, output, self.native_tools, reasoning)
        return ModelInfo(model_id, context_window=DEFAULT_CONTEXT, native_tools=self.native_tools)

    async def detect_default_model(self) -> str | None:
        return DEFAULT_MODEL if self.api_key() else None

    async def complete(self, request: ModelRequest, on_text: TextSink | None = None) -> Message:
        from clawbot_openai import errors

        if self.config.api == "responses":
            from clawbot_openai import wire_responses as wire

            params = wire.request_params(request, native_tools=self.native_tools)
            acc: Any = wire.ResponsesAccumulator()
        else:
            from clawbot_openai import wire_chat as wire  # type: ignore[no-redef]

            params = wire.request_params(request, native_tools=self.native_tools, max_tokens_key=self.max_tokens_key)
            acc = wire.ChatAccumulator()
        stream = None
        try:
            client = self.client(getattr(request, "api_key", None))
            endpoint = client.responses if self.config.api == "responses" else client.chat.completions
            stream = await endpoint.create(**params)
            async with stream:
                async for event in stream_events(stream, self.config.stream_idle_timeout_s, self.name):
                    delta = acc.feed(event)
                    if delta and on_text is not None:
                        await on_text(delta)
        except Exception as exc:
            from clawbot_openai.wire_responses import StreamFailed

            if isinstance(exc, StreamFailed):
                raise self._located(errors.from_payload(exc.code, exc.message, self.name), request) from exc
            mapped = errors.to_provider_error(exc, self.name)
            if mapped is None:
                raise
            self._located(mapped, request, streaming=stream is not None)
            if mapped is exc:
                raise
            raise mapped from exc
        if not acc.complete:
            # the connection closed cleanly but early: never hand back half an answer
            detail = "stream ended before the response was complete"
            raise self._located(ProviderError("connection", detail, provider=self.name, stream_break="dropped"), request)
        return acc.message(provider=self.name, model=request.model)

    def _located(self, error: ProviderError, request: ModelRequest, *, streaming: bool = False) -> ProviderError:
        return located(error, request.model, self.base_url(), streaming=streaming)


LOCAL_OLLAMA_URL = "http://127.0.0.1:11434/v1"


class OllamaProvider(OpenAIProvider):
    """A local Ollama server through its OpenAI-compatible API."""

    name = "ollama"
    detect_priority = 30
    env_key = "OLLAMA_API_KEY"
    max_tokens_key = "max_tokens"
    detect_timeout_s = 0.3

    def __init__(
        self,
        config: OllamaConfig | None = None,
        env: Mapping[str, str] | None = None,
        *,
        http_client: Any = None,
    ) -> None:
        super().__init__(config if config is not None else OllamaConfig(), env, http_client=http_client)

    def api_key(self) -> str:
        return self.config.api_key or self.env.get(self.env_key, "") or "ollama"

    def base_url(self) -> str:
        return self.config.base_url or self.env.get("OLLAMA_BASE_URL") or LOCAL_OLLAMA_URL

    def tags_url(self) -> str:
        """``/api/tags`` beside the OpenAI-compatible ``/v1`` endpoint of the configured base_url."""
        root = self.base_url().rstrip("/")
        if root.endswith("/v1"):
            root = root[: -len("/v1")]
        return root + "/api/tags"

    async def detect_default_model(self) -> str | None:
        """The first model a running Ollama lists; ``None`` when nothing answers quickly."""
        import httpx2

        try:
            async with httpx2.AsyncClient(timeout=self.detect_timeout_s, trust_env=False) as http:
                response = await http.get(self.tags_url())
                if response.status_code != 200:
                    return None
                models = response.json().get("models") or []
        except Exception:
            return None
        for model in models:
            name = model.get("name") or model.get("model") if isinstance(model, dict) else None
            if name:
                return str(name)
        return None
