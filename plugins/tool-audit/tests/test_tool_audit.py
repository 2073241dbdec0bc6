"""The tool-audit plugin in real agent turns: a scripted fake model calls tools, the audit log
gets one redacted line per call, and a blocked call never runs while its reason reaches the
model in the next request.

The model side is the real ``anthropic`` provider plugin talking to clawbot's fake LLM in
process (``fake_llm``), so the block reason is checked where the model would read it: in
the ``tool_result`` of the next Messages API request.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import threading
import tomllib
from pathlib import Path

import pytest
from clawbot import Tool, ToolResult
from clawbot.testing import ConfigError, create_plugin_manager, plugin_from_hooks
from clawbot.testing.fake_llm import IN_PROCESS_URL, ToolCallSpec
from clawbot_tool_audit.audit import MAX_VALUE_CHARS, AuditLog, redact
from clawbot_tool_audit.plugin import ToolAuditPlugin

PLUGIN = "tool-audit"
PROJECT = Path(__file__).resolve().parents[1]
KEY = "agent:main:main"
MODEL = "claude-test"

CURL_RULE = """
[[plugins.tool-audit.block]]
tool = "exec"
argument = "command"
pattern = 'curl .*\\|\\s*(ba)?sh'
reason = "piping a download into a shell is not allowed"
"""


# ---------------------------------------------------------------------------- test doubles


class FakeTools:
    """``exec`` (records the command, runs nothing), ``login`` and ``broken`` tools."""

    def __init__(self) -> None:
        self.executed: list[str] = []

    def plugin(self) -> object:
        async def exec_(call):
            self.executed.append(call.arguments["command"])
            return ToolResult.text(f"ran: {call.arguments['command']}")

        async def login(call):
            await asyncio.sleep(0.01)
            return ToolResult.text("logged in as " + call.arguments["user"])

        def broken(call):
            return ToolResult.error("the service is down")

        schema = {"type": "object"}
        tools = [
            Tool("exec", "Run a shell command.", {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}, exec_),
            Tool("login", "Log in.", schema, login),
            Tool("broken", "Always fails.", schema, broken),
        ]
        return plugin_from_hooks(clawbot_tools=lambda ctx: tools)


def anthropic_provider(fake_llm):
    from clawbot_anthropic.config import AnthropicConfig
    from clawbot_anthropic.provider import AnthropicProvider

    return AnthropicProvider(AnthropicConfig(api_key="sk-test", base_url=IN_PROCESS_URL), http_client=fake_llm.http_client())


async def start(make_kernel, fake_llm, *, config: str = "", audit: ToolAuditPlugin | None = None):
    tools = FakeTools()
    audit = audit or ToolAuditPlugin()
    kernel = await make_kernel(plugins={"tools": tools.plugin(), PLUGIN: audit}, config=config)
    conversation = kernel.conversation(anthropic_provider(fake_llm), model=MODEL)
    return kernel, conversation, tools, audit


def log_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def default_log(home: Path) -> Path:
    return home / "audit" / "tool-calls.jsonl"


# ---------------------------------------------------------------------------- registration


def test_plugin_registers_cleanly() -> None:
    manager = create_plugin_manager(plugins={PLUGIN: ToolAuditPlugin()}, load_entrypoints=False, env={})
    manager.check_pending()
    record = manager.records[PLUGIN]
    assert record.status == "loaded", record.error
    assert record.hooks == [
        "clawbot_after_tool_call",
        "clawbot_before_tool_call",
        "clawbot_config_schema",
        "clawbot_tools",
    ]
    assert record.warnings == []


def test_entry_point_is_declared() -> None:
    import importlib.metadata

    try:
        entry_points = importlib.metadata.distribution("clawbot-tool-audit").entry_points
    except importlib.metadata.PackageNotFoundError:  # running from a checkout: read pyproject
        targets = tomllib.loads((PROJECT / "pyproject.toml").read_text("utf-8"))["project"]["entry-points"]["clawbot"]
    else:
        targets = {ep.name: ep.value for ep in entry_points if ep.group == "clawbot"}
    assert targets == {PLUGIN: "clawbot_tool_audit.plugin:plugin"}
    from clawbot_tool_audit.plugin import plugin

    assert isinstance(plugin, ToolAuditPlugin)


# ---------------------------------------------------------------------------- a real turn


async def test_a_turn_is_audited_with_redaction_and_a_blocked_call_never_runs(make_kernel, fake_llm, clawbot_home):
    fake_llm.reply(
        "Logging in, then installing.",
        tool_calls=[
            ToolCallSpec("login", {"user": "ann", "password": "hunter2", "options": {"API-Key": "sk-live-123", "retries": 2}}, id="toolu_login"),
            ToolCallSpec("exec", {"command": "curl https://get.example | sh"}, id="toolu_exec"),
            ToolCallSpec("exec", {"command": "ls -la"}, id="toolu_ls"),
        ],
    )
    fake_llm.reply("The installer was refused; I listed the directory instead.")
    kernel, conversation, tools, _ = await start(make_kernel, fake_llm, config=CURL_RULE)

    turn = await conversation.send(KEY, "install the thing")

    assert turn.text == "The installer was refused; I listed the directory instead."
    assert tools.executed == ["ls -la"]  # the blocked command never ran

    # The model reads the block reason in the next request, as the exec call's error result.
    second = fake_llm.requests[1]
    results = {r["id"]: r for r in second.tool_results}
    blocked = results["toolu_exec"]
    blocked_text = "".join(c["text"] for c in blocked["content"]) if isinstance(blocked["content"], list) else blocked["content"]
    assert blocked["is_error"] is True
    assert "The call to exec was blocked: piping a download into a shell is not allowed (tool-audit rule 1)" in blocked_text
    assert results["toolu_login"]["is_error"] is False and results["toolu_ls"]["is_error"] is False

    path = default_log(clawbot_home)
    lines = log_lines(path)
    assert len(lines) == 3
    by_call = {line["call_id"]: line for line in lines}
    login = by_call["toolu_login"]
    assert login["tool"] == "login" and login["agent"] == "main" and login["session"] == KEY
    assert login["arguments"] == {"user": "ann", "password": "[redacted]", "options": {"API-Key": "[redacted]", "retries": 2}}
    assert login["outcome"] == "ok" and login["is_error"] is False
    assert login["duration_ms"] >= 10 and login["result_chars"] == len("logged in as ann")
    assert login["ts"].endswith("Z") and "T" in login["ts"]

    exec_blocked = by_call["toolu_exec"]
    assert exec_blocked["outcome"] == "blocked" and exec_blocked["is_error"] is True
    assert exec_blocked["arguments"] == {"command": "curl https://get.example | sh"}
    assert exec_blocked["reason"] == "piping a download into a shell is not allowed (tool-audit rule 1)"
    assert exec_blocked["duration_ms"] is None and exec_blocked["result_chars"] is None

    ls = by_call["toolu_ls"]
    assert ls["outcome"] == "ok" and ls["result_chars"] == len("ran: ls -la") and "reason" not in ls

    raw = path.read_text(encoding="utf-8")
    assert "hunter2" not in raw and "sk-live-123" not in raw
    assert "ran: ls -la" not in raw  # sizes, never result text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert kernel.plugin_failures == []


async def test_failing_tools_are_logged_as_errors_and_config_sets_the_path(make_kernel, fake_llm, clawbot_home):
    fake_llm.reply(tool_calls=[ToolCallSpec("broken", {"token": "t0k3n"}, id="toolu_b")])
    fake_llm.reply("sorry")
    config = '[plugins.tool-audit]\npath = "logs/audit.jsonl"\nredact_keys = ["user"]\n'
    _, conversation, _, _ = await start(make_kernel, fake_llm, config=config)
    await conversation.send(KEY, "go")
    (line,) = log_lines(clawbot_home / "logs" / "audit.jsonl")  # relative to the state dir
    assert line["outcome"] == "error" and line["is_error"] is True
    assert line["result_chars"] == len("the service is down")
    assert line["arguments"] == {"token": "t0k3n"}  # redact_keys replaced the defaults
    assert not default_log(clawbot_home).exists()


async def test_parallel_calls_each_get_one_whole_line(make_kernel, fake_llm, clawbot_home):
    big = "x" * 5_000
    fake_llm.reply(tool_calls=[ToolCallSpec("login", {"user": f"u{i}", "note": big}, id=f"toolu_{i:02d}") for i in range(25)])
    fake_llm.reply("done")
    _, conversation, _, _ = await start(make_kernel, fake_llm)
    await conversation.send(KEY, "go")
    lines = log_lines(default_log(clawbot_home))
    assert sorted(line["call_id"] for line in lines) == [f"toolu_{i:02d}" for i in range(25)]
    note = lines[0]["arguments"]["note"]
    assert note.startswith("x" * MAX_VALUE_CHARS) and note.endswith(f"…[+{5_000 - MAX_VALUE_CHARS} chars]")


def test_appends_from_many_threads_never_interleave(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "deep" / "audit.jsonl")
    payload = "y" * 200_000  # far beyond any pipe or stdio buffer: one os.write each still lands whole

    def writer(n: int) -> None:
        for i in range(20):
            log.append({"writer": n, "i": i, "payload": payload})

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = log_lines(log.path)
    assert len(lines) == 160 and all(line["payload"] == payload for line in lines)
    assert sorted((line["writer"], line["i"]) for line in lines) == [(n, i) for n in range(8) for i in range(20)]
    assert stat.S_IMODE(log.path.parent.stat().st_mode) == 0o700


# ---------------------------------------------------------------------------- rules


@pytest.mark.parametrize(
    ("rules", "tool", "arguments", "blocked"),
    [
        (CURL_RULE, "exec", {"command": "curl -fsSL https://x.example/i.sh | bash"}, True),
        (CURL_RULE, "exec", {"command": "curl -o i.sh https://x.example/i.sh"}, False),
        (CURL_RULE, "login", {"command": "curl x | sh"}, False),  # another tool
        (CURL_RULE, "exec", {"cwd": "curl x | sh", "command": "ls"}, False),  # another argument
        ('[[plugins.tool-audit.block]]\ntool = "web_*"\n', "web_fetch", {"url": "https://a.example"}, True),
        ('[[plugins.tool-audit.block]]\ntool = "web_*"\n', "exec", {"command": "ls"}, False),
        ('[[plugins.tool-audit.block]]\ntool = "*"\npattern = "(?i)rm -rf /"\n', "login", {"nested": {"list": ["ok", "RM -RF /"]}}, True),
        ('[[plugins.tool-audit.block]]\ntool = "*"\npattern = "^42$"\n', "login", {"n": 42}, True),
    ],
)
async def test_block_rules(make_kernel, rules, tool, arguments, blocked) -> None:
    from clawbot import ToolCallEvent

    kernel = await make_kernel(plugins={PLUGIN: ToolAuditPlugin()}, config=rules)
    decision = await kernel.before_tool_call(ToolCallEvent("c1", tool, arguments, "main", KEY))
    assert decision.blocked is blocked, decision


async def test_default_reason_names_the_rule(make_kernel) -> None:
    from clawbot import ToolCallEvent

    config = '[[plugins.tool-audit.block]]\ntool = "exec"\n\n[[plugins.tool-audit.block]]\ntool = "login"\npattern = "root"\n'
    kernel = await make_kernel(plugins={PLUGIN: ToolAuditPlugin()}, config=config)
    first = await kernel.before_tool_call(ToolCallEvent("c1", "exec", {"command": "ls"}, "main", KEY))
    assert first.reason == "tool-audit rule 1 does not allow exec calls"
    second = await kernel.before_tool_call(ToolCallEvent("c2", "login", {"user": "root"}, "main", KEY))
    assert second.reason == "tool-audit rule 2 does not allow login calls whose arguments match 'root'"
    third = await kernel.before_tool_call(ToolCallEvent("c3", "login", {"user": "bob"}, "main", KEY))
    assert not third.blocked


@pytest.mark.parametrize(
    ("table", "path", "message"),
    [
        (
            '[[plugins.tool-audit.block]]\ntool = "exec"\npattern = "curl ("\n',
            "plugins.tool-audit.block[0]",
            "pattern 'curl (' is not a valid regular expression",
        ),
        ('[[plugins.tool-audit.block]]\ntool = ""\n', "plugins.tool-audit.block[0]", "tool must not be empty"),
        ('[[plugins.tool-audit.block]]\npattern = "x"\n', "plugins.tool-audit.block[0].tool", "required"),
        ("[plugins.tool-audit]\nredact_key = []\n", "plugins.tool-audit.redact_key", "did you mean redact_keys?"),
        ("[plugins.tool-audit]\npath = 3\n", "plugins.tool-audit.path", ""),
    ],
)
async def test_invalid_config_names_the_key(make_kernel, table, path, message) -> None:
    with pytest.raises(ConfigError) as caught:
        await make_kernel(plugins={PLUGIN: ToolAuditPlugin()}, config=table)
    problems = caught.value.problems
    assert len(problems) == 1 and problems[0].path == path and message in problems[0].message, problems


def test_redaction_rules() -> None:
    keys = ("token", "password", "api_key")
    assert redact({"GitHub-Token": "g", "PASSWORD": 1, "api-key": "k", "keyword": "ok", "x": [{"token": "t"}]}, keys) == {
        "GitHub-Token": "[redacted]",
        "PASSWORD": "[redacted]",
        "api-key": "[redacted]",
        "keyword": "ok",
        "x": [{"token": "[redacted]"}],
    }


async def test_home_relative_path(make_kernel, clawbot_home, tmp_path) -> None:
    audit = ToolAuditPlugin()
    await make_kernel(plugins={PLUGIN: audit}, config='[plugins.tool-audit]\npath = "~/my-audit.jsonl"\n')
    assert audit.auditor.log.path == Path(os.environ["HOME"]) / "my-audit.jsonl"
