"""Shared pieces of the end-to-end tests: real providers on the fake LLM, simple real tools.

* :func:`make_provider` builds the real Anthropic / OpenAI provider (the official SDKs)
  talking to a :class:`~clawbot.testing.fake_llm.FakeLLM` in process.
* :func:`workspace_tools` offers ``read`` / ``ls`` / ``write`` on real files, confined to the
  agent's workspace (simpler than the core tools, so these tests test the loop), plus ``wait`` and
  ``sleepy`` for concurrency and timeout tests.
* :func:`wire_history` reads a recorded request back as neutral steps, checking on the way
  that every item has exactly the shape its wire API defines.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from clawbot import Tool, ToolResult
from clawbot.testing import plugin_from_hooks
from clawbot.testing.fake_llm import IN_PROCESS_URL, FakeLLM, RecordedRequest

KINDS = ("anthropic", "openai-chat", "openai-responses")
MODEL = {"anthropic": "claude-test", "openai-chat": "gpt-test", "openai-responses": "gpt-test"}
PROVIDER_NAME = {"anthropic": "anthropic", "openai-chat": "openai", "openai-responses": "openai"}
CALL_PREFIX = {"anthropic": "toolu_01", "openai-chat": "call_", "openai-responses": "call_"}
PRIMARY_KEY = "sk-primary"


def make_provider(kind: str, fake: FakeLLM, api_key: str = PRIMARY_KEY, *, base_url: str | None = None, **settings: Any) -> Any:
    """The real provider of ``kind`` whose SDK client talks to ``fake`` in process (to
    ``base_url`` over the network when given); ``settings`` are more fields of its config."""
    http_client = fake.http_client() if base_url is None else None
    if kind == "anthropic":
        from clawbot_anthropic.config import AnthropicConfig
        from clawbot_anthropic.provider import AnthropicProvider

        config = AnthropicConfig(api_key=api_key, base_url=base_url or IN_PROCESS_URL, **settings)
        return AnthropicProvider(config, http_client=http_client)
    from clawbot_openai.config import OpenAIConfig
    from clawbot_openai.provider import OpenAIProvider

    api = "chat" if kind == "openai-chat" else "responses"
    config = OpenAIConfig(api_key=api_key, base_url=(base_url or IN_PROCESS_URL) + "/v1", api=api, **settings)
    return OpenAIProvider(config, http_client=http_client)


def providers_plugin(*providers: Any) -> object:
    return plugin_from_hooks(clawbot_llm_providers=lambda ctx: list(providers))


# ---------------------------------------------------------------------------- tools


def _inside(workspace: Path, relative: str) -> Path:
    root = workspace.resolve()
    path = (root / relative).resolve()
    if path != root and root not in path.parents:
        raise PermissionError(f"{relative!r} is outside the workspace")
    return path


PATH_ONLY = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": False}
WRITE_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
    "additionalProperties": False,
}


def workspace_tools(finished: list[str] | None = None) -> list[Tool]:
    """``read``, ``ls``, ``write`` on real files under the call's workspace; ``wait``; ``sleepy``.

    ``finished`` (when given) collects the call ids in the order the calls completed.
    """

    def done(call_id: str) -> None:
        if finished is not None:
            finished.append(call_id)

    async def read(call):
        text = _inside(call.workspace, call.arguments["path"]).read_text(encoding="utf-8")
        done(call.call_id)
        return ToolResult.text(text)

    async def ls(call):
        directory = _inside(call.workspace, call.arguments.get("path", "."))
        names = sorted(p.name + ("/" if p.is_dir() else "") for p in directory.iterdir())
        done(call.call_id)
        return ToolResult.text("".join(f"{n}\n" for n in names), entries=names)

    async def write(call):
        path = _inside(call.workspace, call.arguments["path"])
        path.parent.mkdir(parents=True, exist_ok=True)
        data = call.arguments["content"].encode("utf-8")
        path.write_bytes(data)
        done(call.call_id)
        return ToolResult.text(f"Wrote {call.arguments['path']} ({len(data)} bytes)", bytesWritten=len(data))

    async def wait(call):
        await asyncio.sleep(float(call.arguments["seconds"]))
        done(call.call_id)
        return ToolResult.text(f"waited {call.arguments['seconds']} s")

    async def sleepy(call):
        await asyncio.sleep(3600)  # only its timeout ends it
        return ToolResult.text("woke up")  # never reached: the timeout is 0.1 s

    return [
        Tool("read", "Read a text file of the workspace.", PATH_ONLY, read, concurrent=True),
        Tool("ls", "List a directory of the workspace.", {"type": "object", "properties": {"path": {"type": "string"}}}, ls, concurrent=True),
        Tool("write", "Create or overwrite a file of the workspace.", WRITE_SCHEMA, write),
        Tool("wait", "Wait some seconds.", {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]}, wait, concurrent=True),
        Tool("sleepy", "Takes far too long.", {"type": "object"}, sleepy, timeout_s=0.1),
    ]


def tools_plugin(finished: list[str] | None = None) -> object:
    tools = workspace_tools(finished)
    return plugin_from_hooks(clawbot_tools=lambda ctx: tools)


def workspace_config(workspace: Path, extra: str = "") -> str:
    return f'[agents.defaults]\nworkspace = "{workspace.as_posix()}"\n{extra}'


# ---------------------------------------------------------------------------- wire history

Step = tuple[Any, ...]


def user(text: str) -> Step:
    return ("user", text)


def said(text: str) -> Step:
    return ("text", text)


def call(call_id: str, name: str, arguments: Any) -> Step:
    return ("call", call_id, name, arguments)


def result(call_id: str, text: str, is_error: bool = False) -> Step:
    return ("result", call_id, text, is_error)


def _arguments(raw: Any) -> Any:
    assert isinstance(raw, str), f"function arguments must be a JSON string, got {raw!r}"
    try:
        return json.loads(raw)
    except ValueError:
        return raw  # malformed arguments are replayed verbatim


def _openai_result(text: Any) -> tuple[str, bool]:
    assert isinstance(text, str), f"a tool output must be a string, got {text!r}"
    if text.startswith("Error: "):
        return text[len("Error: ") :], True
    return text, text.lower().startswith("error")


def _anthropic_history(messages: list[dict[str, Any]]) -> list[Step]:
    steps: list[Step] = []
    previous = None
    for message in messages:
        assert set(message) == {"role", "content"}, message
        role = message["role"]
        assert role in ("user", "assistant") and role != previous, f"roles must alternate: {[m['role'] for m in messages]}"
        previous = role
        blocks = message["content"]
        assert isinstance(blocks, list) and blocks, message
        seen_text = False
        for block in blocks:
            kind = block["type"]
            if role == "user" and kind == "text":
                assert set(block) == {"type", "text"}, block
                steps.append(user(block["text"]))
                seen_text = True
            elif role == "user" and kind == "tool_result":
                assert not seen_text, "tool_result blocks must come first in a user message"
                assert set(block) <= {"type", "tool_use_id", "content", "is_error"}, block
                content = block.get("content", [])
                if isinstance(content, list):
                    assert all(set(c) == {"type", "text"} and c["type"] == "text" for c in content), content
                    content = "".join(c["text"] for c in content)
                steps.append(result(block["tool_use_id"], content, block.get("is_error", False)))
            elif role == "assistant" and kind == "text":
                assert set(block) == {"type", "text"}, block
                steps.append(said(block["text"]))
            elif role == "assistant" and kind == "thinking":
                assert set(block) == {"type", "thinking", "signature"} and block["signature"], block
                steps.append(("thinking", block["thinking"], block["signature"]))
            elif role == "assistant" and kind == "tool_use":
                assert set(block) == {"type", "id", "name", "input"} and isinstance(block["input"], dict), block
                steps.append(call(block["id"], block["name"], block["input"]))
            else:
                raise AssertionError(f"unexpected {kind} block in a {role} message: {block}")
    return steps


def _chat_history(messages: list[dict[str, Any]]) -> list[Step]:
    assert messages and messages[0]["role"] == "system", "the system prompt comes first"
    steps: list[Step] = []
    for message in messages[1:]:
        role = message["role"]
        if role == "user":
            assert set(message) == {"role", "content"} and isinstance(message["content"], str), message
            steps.append(user(message["content"]))
        elif role == "assistant":
            assert set(message) <= {"role", "content", "tool_calls"}, message
            if message.get("content"):
                steps.append(said(message["content"]))
            for item in message.get("tool_calls") or []:
                assert set(item) == {"id", "type", "function"} and item["type"] == "function", item
                assert set(item["function"]) == {"name", "arguments"}, item
                steps.append(call(item["id"], item["function"]["name"], _arguments(item["function"]["arguments"])))
        elif role == "tool":
            assert set(message) == {"role", "tool_call_id", "content"}, message
            steps.append(result(message["tool_call_id"], *_openai_result(message["content"])))
        else:
            raise AssertionError(f"unexpected message {message}")
    return steps


def _responses_history(items: list[dict[str, Any]]) -> list[Step]:
    steps: list[Step] = []
    for item in items:
        kind = item.get("type")
        if kind == "function_call":
            assert set(item) == {"type", "call_id", "name", "arguments"}, item
            steps.append(call(item["call_id"], item["name"], _arguments(item["arguments"])))
        elif kind == "function_call_output":
            assert set(item) == {"type", "call_id", "output"}, item
            steps.append(result(item["call_id"], *_openai_result(item["output"])))
        elif item.get("role") == "user":
            parts = item["content"]
            assert all(set(p) == {"type", "text"} and p["type"] == "input_text" for p in parts), item
            steps.append(user("".join(p["text"] for p in parts)))
        elif item.get("role") == "assistant":
            assert isinstance(item["content"], str), item
            steps.append(said(item["content"]))
        else:
            raise AssertionError(f"unexpected input item {item}")
    return steps


def check_tool_pairs(steps: list[Step]) -> None:
    """What every API demands: each tool call is answered before anything else is said, each
    result answers a call of the assistant turn just before it, and the history ends with
    the user's side."""
    pending: list[str] = []
    answered = False
    for step in steps:
        if step[0] == "call":
            if answered:  # a new assistant turn: the previous one must be fully answered
                assert not pending, f"tool calls {pending} left without results before {step[1]}"
                answered = False
            pending.append(step[1])
        elif step[0] == "result":
            assert step[1] in pending, f"tool result {step[1]} answers no call of the preceding assistant turn"
            pending.remove(step[1])
            answered = True
        else:
            assert not pending, f"tool calls {pending} left without results before {step[:2]}"
            answered = False
    assert not pending, f"tool calls {pending} left without results at the end"
    assert steps and steps[-1][0] in ("user", "result"), "a request must end with the user's side"


def wire_history(request: RecordedRequest) -> list[Step]:
    """The conversation a recorded request carries, as neutral steps, its wire shape checked
    (and its tool calls and results correctly paired)."""
    if request.api == "anthropic":
        steps = _anthropic_history(request.body["messages"])
    elif request.api == "openai-chat":
        steps = _chat_history(request.body["messages"])
    else:
        steps = _responses_history(request.body["input"])
    check_tool_pairs(steps)
    return steps


def auth_keys(requests: Iterable[RecordedRequest]) -> list[str]:
    """The API key each request was sent with (both SDKs send ``authorization: Bearer <key>``)."""
    keys = []
    for request in requests:
        header = request.headers.get("authorization") or ""
        keys.append(header.removeprefix("Bearer ") if header else request.headers.get("x-api-key", ""))
    return keys


def thinking_of(request: RecordedRequest) -> Any:
    """The thinking / reasoning parameter a request carries (``None``: none)."""
    body = request.body
    if request.api == "anthropic":
        thinking = body.get("thinking")
        return thinking["budget_tokens"] if thinking else None
    if request.api == "openai-chat":
        return body.get("reasoning_effort")
    reasoning = body.get("reasoning")
    return reasoning["effort"] if reasoning else None


def transcript_lines(path: Path, *, turns: bool = False) -> list[dict[str, Any]]:
    """The transcript's lines; without the ``turn`` lines (each turn's totals) unless ``turns``."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return lines if turns else [line for line in lines if line.get("type") != "turn"]


# ---------------------------------------------------------------------------- kernels

KEY = "agent:main:main"


async def start(
    make_kernel,
    kind: str,
    fake: FakeLLM,
    workspace: Path,
    *,
    finished: list[str] | None = None,
    config: str = "",
    plugins: dict[str, object] | None = None,
    fallback_models: Iterable[str] = (),
    caller_sleep: Any = None,
    provider: Any = None,
) -> tuple[Any, Any, Any]:
    """(kernel, conversation, provider): the real provider of ``kind`` on ``fake`` (or the
    ``provider`` given), the test tools."""
    from clawbot.agent.conversation import Conversation
    from clawbot.agent.models import ModelChoice

    provider = provider or make_provider(kind, fake)
    kernel = await make_kernel(
        plugins={"llm": providers_plugin(provider), "tools": tools_plugin(finished), **(plugins or {})},
        config=workspace_config(workspace, config),
    )
    conversation = Conversation(
        kernel,
        ModelChoice(provider, MODEL[kind]),
        "main",
        fallbacks=[ModelChoice(provider, m) for m in fallback_models],
        caller_sleep=caller_sleep,
        services=None,
    )
    return kernel, conversation, provider


def transcript_path(kernel: Any, key: str = KEY) -> Path:
    return kernel.sessions.path_of(kernel.sessions.get(key), "main")
