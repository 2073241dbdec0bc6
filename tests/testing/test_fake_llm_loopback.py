"""The fake over real sockets (uvicorn on 127.0.0.1), script files and ``run_server``."""

from __future__ import annotations

import json
import queue
import threading
from pathlib import Path

import anthropic
import httpx2
import openai
import pytest
from clawbot.testing.fake_llm import FakeLLM, load_script, run_server
from click.testing import CliRunner

USER = [{"role": "user", "content": "hi"}]


async def test_both_sdks_over_loopback(fake: FakeLLM) -> None:
    fake.reply("anthropic over tcp", tool_calls=[{"name": "read", "arguments": {"path": "a"}}])
    fake.reply("chat over tcp")
    fake.reply("responses over tcp")
    async with fake.serve() as url:
        assert url.startswith("http://127.0.0.1:") and fake.base_url == url
        a = anthropic.AsyncAnthropic(api_key="test", base_url=url, max_retries=0)
        o = openai.AsyncOpenAI(api_key="test", base_url=url + "/v1", max_retries=0)
        async with a.messages.stream(model="claude-test", max_tokens=64, messages=USER) as stream:
            message = await stream.get_final_message()
        chat = await o.chat.completions.create(model="gpt-test", messages=USER, stream=True)
        chat_text = "".join([c.choices[0].delta.content or "" async for c in chat if c.choices])
        async with o.responses.stream(model="gpt-test", input="hi") as rstream:
            response = await rstream.get_final_response()

        fake.fail("rate_limit", retry_after=3)
        with pytest.raises(openai.RateLimitError) as caught:
            await o.chat.completions.create(model="gpt-test", messages=USER)
        assert caught.value.response.headers["retry-after"] == "3"

        fake.fail("dropped_stream", after_events=3)
        seen: list[str] = []
        with pytest.raises((httpx2.RemoteProtocolError, anthropic.APIConnectionError)):
            async with a.messages.stream(model="claude-test", max_tokens=64, messages=USER) as stream:
                async for event in stream:
                    seen.append(event.type)
        assert seen and "message_stop" not in seen
        await a.close()
        await o.close()
    assert fake.base_url is None

    assert message.content[0].text == "anthropic over tcp" and message.content[1].input == {"path": "a"}
    assert chat_text == "chat over tcp"
    assert response.output_text == "responses over tcp"
    assert [r.api for r in fake.requests][:3] == ["anthropic", "openai-chat", "openai-responses"]
    assert fake.requests[0].headers["host"].startswith("127.0.0.1:")


def test_serve_in_thread_with_sync_clients(fake: FakeLLM) -> None:
    fake.reply("sync anthropic")
    fake.reply("sync openai")
    with fake.serve_in_thread() as url:
        a = anthropic.Anthropic(api_key="test", base_url=url, max_retries=0)
        o = openai.OpenAI(api_key="test", base_url=url + "/v1", max_retries=0)
        assert a.messages.create(model="m", max_tokens=8, messages=USER).content[0].text == "sync anthropic"
        assert o.chat.completions.create(model="m", messages=USER).choices[0].message.content == "sync openai"
        a.close()
        o.close()
    with pytest.raises(httpx2.ConnectError):
        httpx2.get(url + "/v1/models")


SCRIPT_TOML = """
default_text = "script done"

[[replies]]
text = "Reading."
[[replies.tool_calls]]
name = "read"
arguments = { path = "notes.txt" }
id = "call_script"

[[replies]]
text = "Finished."
thinking = "All good."
usage = { input_tokens = 11, output_tokens = 5, cache_read_input_tokens = 3 }

[[faults]]
kind = "rate_limit"
model = "flaky"
retry_after = 4
"""


def test_load_script_toml_and_json(tmp_path: Path) -> None:
    toml_path = tmp_path / "script.toml"
    toml_path.write_text(SCRIPT_TOML, encoding="utf-8")
    script = load_script(toml_path)
    assert script.default_text == "script done" and not script.strict
    first, second = script.replies
    assert first.tool_calls[0].name == "read" and first.tool_calls[0].arguments == {"path": "notes.txt"}
    assert first.effective_stop_reason == "tool_use"
    assert second.thinking == "All good." and second.usage.cache_read_tokens == 3
    assert second.effective_stop_reason == "end_turn"
    [fault] = script.faults
    assert (fault.kind, fault.model, fault.retry_after) == ("rate_limit", "flaky", 4)

    json_path = tmp_path / "script.json"
    json_path.write_text(
        json.dumps({"strict": True, "replies": ["plain", {"text": "cut", "stop_reason": "max_tokens"}]}),
        encoding="utf-8",
    )
    script = load_script(json_path)
    assert script.strict and [r.text for r in script.replies] == ["plain", "cut"]
    assert script.replies[1].effective_stop_reason == "max_tokens"

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"replies": [{"txt": "typo"}]}), encoding="utf-8")
    with pytest.raises(ValueError, match="bad.json"):
        load_script(bad)


async def test_fake_from_script_answers_in_order(tmp_path: Path) -> None:
    path = tmp_path / "script.toml"
    path.write_text(SCRIPT_TOML, encoding="utf-8")
    fake = FakeLLM.from_script(path)
    client = openai.AsyncOpenAI(api_key="t", base_url="http://fake.test/v1", http_client=fake.http_client(), max_retries=0)
    with pytest.raises(openai.RateLimitError):
        await client.chat.completions.create(model="flaky", messages=USER)
    first = await client.chat.completions.create(model="steady", messages=USER)
    assert first.choices[0].message.tool_calls[0].id == "call_script"
    second = await client.chat.completions.create(model="steady", messages=USER)
    assert second.choices[0].message.content == "Finished."
    assert second.usage.prompt_tokens == 14 and second.usage.prompt_tokens_details.cached_tokens == 3
    third = await client.chat.completions.create(model="steady", messages=USER)
    assert third.choices[0].message.content == "script done"


def test_run_server_blocks_until_stopped(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"replies": [{"text": "served from a script"}]}), encoding="utf-8")
    urls: queue.Queue[str] = queue.Queue()
    stop = threading.Event()
    result: list[FakeLLM] = []
    thread = threading.Thread(
        target=lambda: result.append(run_server(0, path, on_ready=urls.put, stop=stop, log_level="warning")),
        daemon=True,
    )
    thread.start()
    url = urls.get(timeout=10)
    assert url.startswith("http://127.0.0.1:")
    client = anthropic.Anthropic(api_key="test", base_url=url, max_retries=0)
    assert client.messages.create(model="m", max_tokens=8, messages=USER).content[0].text == "served from a script"
    client.close()
    stop.set()
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert len(result[0].requests) == 1


def test_dev_cli_fake_llm_help() -> None:
    from clawbot.testing.dev_cli import dev

    result = CliRunner().invoke(dev, ["fake-llm", "--help"])
    assert result.exit_code == 0, result.output
    assert "--port" in result.output and "--script" in result.output and "127.0.0.1" in result.output


async def test_plugin_fixture_serves_the_fake(fake_llm_server: FakeLLM) -> None:
    fake_llm_server.reply("via the pytest plugin fixture")
    client = anthropic.AsyncAnthropic(api_key="test", base_url=fake_llm_server.base_url, max_retries=0)
    message = await client.messages.create(model="m", max_tokens=8, messages=USER)
    await client.close()
    assert message.content[0].text == "via the pytest plugin fixture"
