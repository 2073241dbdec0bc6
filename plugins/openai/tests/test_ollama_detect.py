"""The ``ollama`` provider: detection through ``/api/tags``, and calls through the OpenAI-compatible API."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from clawbot.testing.fake_llm import IN_PROCESS_URL, FakeLLM
from clawbot.types import Message, ModelRequest, SystemPrompt, ToolSpec
from clawbot_openai.config import OllamaConfig
from clawbot_openai.provider import OllamaProvider


class TinyOllama:
    """A stand-in for Ollama's ``GET /api/tags`` on a free 127.0.0.1 port."""

    def __init__(self, payload: Any, status: int = 200) -> None:
        self.payload = payload
        self.status = status
        self.paths: list[str] = []

    @property
    def handler(self) -> type[BaseHTTPRequestHandler]:
        tiny = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                tiny.paths.append(self.path)
                body = json.dumps(tiny.payload).encode()
                self.send_response(tiny.status if self.path == "/api/tags" else 404)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


def serve(tiny: TinyOllama) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), tiny.handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def ollama_with_models() -> Iterator[tuple[TinyOllama, str]]:
    tiny = TinyOllama({"models": [{"name": "qwen3:8b", "model": "qwen3:8b"}, {"name": "llama3.2:latest"}]})
    for url in serve(tiny):
        yield tiny, url


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_detects_the_first_installed_model(ollama_with_models: tuple[TinyOllama, str]) -> None:
    tiny, url = ollama_with_models
    provider = OllamaProvider(OllamaConfig(base_url=url + "/v1"))
    assert await provider.detect_default_model() == "qwen3:8b"
    assert tiny.paths == ["/api/tags"]


async def test_base_url_without_v1_works_too(ollama_with_models: tuple[TinyOllama, str]) -> None:
    _, url = ollama_with_models
    assert await OllamaProvider(OllamaConfig(base_url=url + "/")).detect_default_model() == "qwen3:8b"


async def test_nothing_listening_is_none() -> None:
    provider = OllamaProvider(OllamaConfig(base_url=f"http://127.0.0.1:{free_port()}/v1"))
    assert await provider.detect_default_model() is None


@pytest.mark.parametrize(("payload", "status"), [({"models": []}, 200), ({"error": "boom"}, 500), (["not", "a", "dict"], 200)])
async def test_no_models_or_a_broken_answer_is_none(payload: Any, status: int) -> None:
    for url in serve(TinyOllama(payload, status)):
        assert await OllamaProvider(OllamaConfig(base_url=url + "/v1")).detect_default_model() is None


def test_defaults_and_priority() -> None:
    provider = OllamaProvider()
    assert provider.name == "ollama" and provider.detect_priority == 30
    assert provider.base_url() == "http://127.0.0.1:11434/v1"
    assert provider.tags_url() == "http://127.0.0.1:11434/api/tags"
    remote = OllamaProvider(env={"OLLAMA_BASE_URL": "http://10.0.0.5:11434/v1"})  # e.g. stored by onboard
    assert remote.tags_url() == "http://10.0.0.5:11434/api/tags"
    assert provider.model_info("llama3.2:latest").context_window == 128_000


async def test_ollama_calls_go_through_chat_completions(fake_llm: FakeLLM) -> None:
    fake_llm.reply("local answer")
    provider = OllamaProvider(OllamaConfig(base_url=IN_PROCESS_URL + "/v1"), http_client=fake_llm.http_client())
    request = ModelRequest("qwen3:8b", SystemPrompt("sys"), (Message.user("hi"),), max_output_tokens=99)
    message = await provider.complete(request)
    assert message.text == "local answer" and message.provider == "ollama" and message.model == "qwen3:8b"
    recorded = fake_llm.last_request
    assert recorded.api == "openai-chat"
    assert recorded.headers["authorization"] == "Bearer ollama"
    assert recorded.body["max_tokens"] == 99


async def test_native_tools_off_sends_no_tools(fake_llm: FakeLLM) -> None:
    tool = ToolSpec("read", "Read a file.", {"type": "object", "properties": {}})
    provider = OllamaProvider(OllamaConfig(base_url=IN_PROCESS_URL + "/v1", native_tools=False), http_client=fake_llm.http_client())
    assert provider.model_info("tiny:1b").native_tools is False
    await provider.complete(ModelRequest("tiny:1b", SystemPrompt("sys"), (Message.user("hi"),), tools=(tool,)))
    assert "tools" not in fake_llm.last_request.body


async def test_the_plugin_registers_openai_and_ollama(make_kernel: Any, ollama_with_models: tuple[TinyOllama, str]) -> None:
    import clawbot_openai.plugin

    _, url = ollama_with_models
    kernel = await make_kernel(
        plugins={"openai": clawbot_openai.plugin},
        config=f'[providers.ollama]\nbase_url = "{url}/v1"\n',
    )
    assert kernel.llm_providers.get("openai") is not None
    ollama = kernel.llm_providers.get("ollama")
    assert ollama is not None and ollama.config.native_tools is True
    assert await ollama.detect_default_model() == "qwen3:8b"
