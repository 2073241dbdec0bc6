"""The Anthropic provider: the Messages API, streamed, through the official SDK.

The SDK is imported on the first model call (``LLMProvider`` contract), the client is made
then and reused. The SDK's own retries are off (``max_retries=0``): the kernel retries,
rotates keys and falls back, based on the :class:`~clawbot.types.ProviderError` kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawbot.providerkit import ClientsByKey, located, sdk_timeout, stream_events
from clawbot.types import LLMProvider, Message, ModelInfo, ModelRequest, ProviderError, TextSink

from clawbot_anthropic.config import AnthropicConfig

DEFAULT_MODEL = "claude-opus-4-5"
DEFAULT_BASE_URL = "https://api.anthropic.com"

# (model id prefix, context window, max output tokens); first match wins.
_FAMILIES: tuple[tuple[str, int, int], ...] = (
    ("claude-opus-4-5", 200_000, 64_000),
    ("claude-opus-4", 200_000, 32_000),
    ("claude-sonnet-4", 200_000, 64_000),
    ("claude-haiku-4", 200_000, 64_000),
    ("claude-3-7-sonnet", 200_000, 64_000),
    ("claude-3-5", 200_000, 8_192),
    ("claude-3", 200_000, 4_096),
    ("claude-", 200_000, 8_192),
)


class AnthropicProvider(LLMProvider):
    name = "anthropic"
    detect_priority = 10

    def __init__(
        self,
        config: AnthropicConfig | None = None,
        env: Mapping[str, str] | None = None,
        *,
        http_client: Any = None,
    ) -> None:
        self.config = config or AnthropicConfig()
        self.env = dict(env or {})
        self._http_client = http_client
        self._clients = ClientsByKey()

    # ------------------------------------------------------------------ setup

    def api_key(self) -> str:
        return self.config.api_key or self.env.get("ANTHROPIC_API_KEY", "")

    def base_url(self) -> str:
        return self.config.base_url or self.env.get("ANTHROPIC_BASE_URL", "") or DEFAULT_BASE_URL

    def client(self, api_key: str | None = None) -> Any:
        """The SDK client for ``api_key`` (default: the configured or environment key), made on first use."""
        key = api_key or self.api_key()
        if not key:
            raise ProviderError("auth", "no API key: set ANTHROPIC_API_KEY or [providers.anthropic] api_key", provider=self.name)
        import anthropic

        timeout = sdk_timeout(self.config.timeout_s, self.config.connect_timeout_s)
        kwargs: dict[str, Any] = {"api_key": key, "max_retries": 0, "timeout": timeout}
        base_url = self.base_url()
        if base_url != DEFAULT_BASE_URL:
            kwargs["base_url"] = base_url
        if self._http_client is not None:
            kwargs["http_client"] = self._http_client
        return self._clients.get(key, lambda: anthropic.AsyncAnthropic(**kwargs))

    async def aclose(self) -> None:
        await self._clients.aclose()

    # ------------------------------------------------------------------ LLMProvider

    def model_info(self, model_id: str) -> ModelInfo:
        for prefix, context, output in _FAMILIES:
            if model_id.startswith(prefix):
                reasoning = not model_id.startswith(("claude-3-5", "claude-3-opus", "claude-3-sonnet", "claude-3-haiku"))
                return ModelInfo(id=model_id, context_window=context, max_output_tokens=output, reasoning=reasoning)
        return ModelInfo(id=model_id, context_window=200_000, max_output_tokens=8_192)

    async def detect_default_model(self) -> str | None:
        return DEFAULT_MODEL if self.api_key() else None

    async def complete(self, request: ModelRequest, on_text: TextSink | None = None) -> Message:
        from clawbot_anthropic import errors, wire

        max_tokens = request.max_output_tokens or self.model_info(request.model).max_output_tokens
        params = wire.request_params(request, max_tokens=max_tokens)
        acc = wire.StreamAccumulator()
        stream = None
        try:
            client = self.client(getattr(request, "api_key", None))
            stream = await client.messages.create(**params, stream=True)
            async with stream:
                async for event in stream_events(stream, self.config.stream_idle_timeout_s, self.name):
                    delta = acc.feed(event)
                    if delta and on_text is not None:
                        await on_text(delta)
        except Exception as exc:
            mapped = errors.to_provider_error(exc, self.name)
            if mapped is None:
                raise
            self._located(mapped, request, streaming=stream is not None)
            if mapped is exc:
                raise
            raise mapped from exc
        if not acc.complete:
            # the connection closed cleanly but early: never hand back half an answer
            where = "before any event" if not acc.started else "before message_stop"
            error = ProviderError("connection", f"stream ended {where}", provider=self.name, stream_break="dropped")
            raise self._located(error, request)
        return acc.message(provider=self.name, model=request.model)

    def _located(self, error: ProviderError, request: ModelRequest, *, streaming: bool = False) -> ProviderError:
        return located(error, request.model, self.base_url(), streaming=streaming)
