"""The agent loop end to end: real provider plugins, the official SDKs, the fake LLM server.

Each test runs once per wire API (Anthropic Messages, OpenAI Chat Completions, OpenAI
Responses) and asserts what the model provider actually received, request by request.
"""

from __future__ import annotations

import pytest
from clawbot.agent.system_prompt import IDENTITY_LINE
from clawbot.testing.fake_llm import ToolCallSpec

from .e2etools import (
    CALL_PREFIX,
    KEY,
    KINDS,
    MODEL,
    PROVIDER_NAME,
    call,
    result,
    said,
    start,
    transcript_lines,
    transcript_path,
    user,
    wire_history,
)

# The user asks for a script; the model reads the skill, lists the directory,
# writes the file and answers.
ASK = "帮我写一个 Python 脚本,功能是遍历当前目录所有文件"
SKILL_PATH = "skills/create-python-script/SKILL.md"
SKILL = (
    "# create-python-script\n\n当用户请求创建 Python 脚本时使用本 Skill。\n\n## 步骤\n"
    "1. 用 `ls` 查看当前目录结构。\n2. 用 `write` 创建 `.py` 文件。\n"
    "3. 文件内容应包含 shebang 和清晰的注释。\n4. 创建后给用户一个简要说明。"
)
SCRIPT = (
    '#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n"""\n遍历当前目录下所有文件并打印相对路径。\n"""\n\nimport os\n\n\n'
    "def main():\n    for root, dirs, files in os.walk('.'):\n        # 跳过 .git 目录\n"
    "        dirs[:] = [d for d in dirs if d != '.git']\n        for file in files:\n"
    "            print(os.path.join(root, file))\n\n\nif __name__ == '__main__':\n    main()\n"
)
FINAL = (
    "已经帮你创建了 `list_files.py`。\n\n功能:遍历当前目录下所有文件,自动跳过 `.git` 目录,并打印每个文件的相对路径。"
    "\n\n运行方式:\n```bash\npython list_files.py\n```"
)
CALL_IDS = {
    "anthropic": ["toolu_01ABCDEFGHIJKLMNOPQRSTUV", "toolu_02BCDEFGHIJKLMNOPQRSTUVW", "toolu_03CDEFGHIJKLMNOPQRSTUVWX"],
    "openai-chat": ["call_01ABCDEFGHIJKLMNOPQRSTUV", "call_02BCDEFGHIJKLMNOPQRSTUVW", "call_03CDEFGHIJKLMNOPQRSTUVWX"],
    "openai-responses": ["call_01ABCDEFGHIJKLMNOPQRSTUV", "call_02BCDEFGHIJKLMNOPQRSTUVW", "call_03CDEFGHIJKLMNOPQRSTUVWX"],
}


def _system_text(request) -> str:
    system = request.system
    return "".join(block["text"] for block in system) if isinstance(system, list) else system


@pytest.mark.parametrize("kind", KINDS)
async def test_read_ls_write_then_answer_sends_the_growing_history(make_kernel, fake_llm, workspace, kind) -> None:
    (workspace / SKILL_PATH).parent.mkdir(parents=True)
    (workspace / SKILL_PATH).write_text(SKILL, encoding="utf-8")
    (workspace / "README.md").write_text("# demo\n")
    (workspace / "requirements.txt").write_text("")
    (workspace / "scripts").mkdir()
    (workspace / "tests").mkdir()
    read_id, ls_id, write_id = CALL_IDS[kind]
    fake_llm.reply(tool_calls=[ToolCallSpec("read", {"path": SKILL_PATH}, id=read_id)])
    fake_llm.reply(tool_calls=[ToolCallSpec("ls", {"path": "."}, id=ls_id)])
    fake_llm.reply(tool_calls=[ToolCallSpec("write", {"path": "list_files.py", "content": SCRIPT}, id=write_id)])
    fake_llm.reply(FINAL)
    kernel, conversation, _ = await start(make_kernel, kind, fake_llm, workspace)

    turn = await conversation.send(KEY, ASK)

    assert turn.text == FINAL
    assert (turn.iterations, turn.tool_calls, turn.model) == (4, 3, f"{PROVIDER_NAME[kind]}/{MODEL[kind]}")
    assert (workspace / "list_files.py").read_text(encoding="utf-8") == SCRIPT  # really written
    written = len(SCRIPT.encode("utf-8"))
    listing = "README.md\nrequirements.txt\nscripts/\nskills/\ntests/\n"
    history = [
        user(ASK),
        call(read_id, "read", {"path": SKILL_PATH}),
        result(read_id, SKILL),
        call(ls_id, "ls", {"path": "."}),
        result(ls_id, listing),
        call(write_id, "write", {"path": "list_files.py", "content": SCRIPT}),
        result(write_id, f"Wrote list_files.py ({written} bytes)"),
    ]
    assert len(fake_llm.requests) == 4
    for number, request in enumerate(fake_llm.requests):
        assert (request.api, request.model, request.stream) == (kind, MODEL[kind], True)
        assert {"read", "ls", "write", "wait", "sleepy"} == set(request.tools)
        assert _system_text(request).startswith(IDENTITY_LINE)
        # exactly the history so far: nothing lost, nothing repeated, in order
        assert wire_history(request) == history[: 1 + 2 * number], f"request {number + 1}"

    lines = transcript_lines(transcript_path(kernel))
    assert lines[0]["type"] == "session" and lines[0]["key"] == KEY
    entries = lines[1:]
    assert [e["type"] for e in entries] == ["message"] * 8
    assert [e["parent_id"] for e in entries] == [None, *(e["id"] for e in entries[:-1])]
    messages = [e["message"] for e in entries]
    assert [m["role"] for m in messages] == ["user", *["assistant", "tool_result"] * 3, "assistant"]
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool_result"] == [read_id, ls_id, write_id]
    calls = [b for m in messages for b in m["content"] if b["type"] == "tool_call"]
    assert [(c["id"], c["name"]) for c in calls] == [(read_id, "read"), (ls_id, "ls"), (write_id, "write")]
    assert messages[-1]["content"] == [{"type": "text", "text": FINAL}]
    assert kernel.sessions.get(KEY).turns == 1


@pytest.mark.parametrize("kind", KINDS)
async def test_parallel_tool_calls_run_together_and_results_come_back_in_call_order(make_kernel, fake_llm, workspace, kind) -> None:
    (workspace / "notes.txt").write_text("remember the milk")
    fake_llm.reply(
        "Let me check three things.",
        tool_calls=[
            ToolCallSpec("wait", {"seconds": 0.3}),
            ToolCallSpec("ls", {"path": "."}),
            ToolCallSpec("read", {"path": "notes.txt"}),
        ],
    )
    fake_llm.reply("All three done.")
    finished: list[str] = []
    _, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, finished=finished)

    turn = await conversation.send(KEY, "check everything")
    assert turn.text == "All three done." and turn.tool_calls == 3

    second = wire_history(fake_llm.requests[1])
    calls = [step for step in second if step[0] == "call"]
    ids = [c[1] for c in calls]
    assert [c[2] for c in calls] == ["wait", "ls", "read"]
    assert len(set(ids)) == 3 and all(i.startswith(CALL_PREFIX[kind]) for i in ids)  # the fake's own ids, echoed
    assert finished[-1] == ids[0]  # the slow first call finished last: the calls ran concurrently
    assert second == [
        user("check everything"),
        said("Let me check three things."),
        *calls,
        result(ids[0], "waited 0.3 s"),
        result(ids[1], "notes.txt\n"),
        result(ids[2], "remember the milk"),
    ]


LONG = "流式输出:第一段。\nThe quick brown fox jumps over the lazy dog — 🦊 and then some more text to stream."


@pytest.mark.parametrize("kind", KINDS)
async def test_streamed_text_deltas_join_to_the_reply(make_kernel, fake_llm, workspace, kind) -> None:
    (workspace / "notes.txt").write_text("remember the milk")
    deltas: list[str] = []

    async def on_text(delta: str) -> None:
        deltas.append(delta)

    fake_llm.reply(LONG)
    _, conversation, _ = await start(make_kernel, kind, fake_llm, workspace)
    turn = await conversation.send(KEY, "stream please", on_text=on_text)
    assert turn.text == LONG
    assert len(deltas) > 5 and "".join(deltas) == LONG
    assert fake_llm.requests[0].stream

    # Text said before a tool call is streamed too, ahead of the final answer.
    deltas.clear()
    fake_llm.reply("Let me look.", tool_calls=[ToolCallSpec("read", {"path": "notes.txt"})])
    fake_llm.reply("It says: remember the milk.")
    turn = await conversation.send(KEY, "what is in notes.txt?", on_text=on_text)
    assert turn.text == "It says: remember the milk."
    assert "".join(deltas) == "Let me look." + "It says: remember the milk."


@pytest.mark.parametrize("kind", KINDS)
async def test_malformed_tool_arguments_become_an_error_result_and_the_model_recovers(make_kernel, fake_llm, workspace, kind) -> None:
    (workspace / "notes.txt").write_text("remember the milk")
    fake_llm.tool_call("read", '{"path": ')
    fake_llm.tool_call("read", {"path": "notes.txt"})
    fake_llm.reply("The note says: remember the milk.")
    kernel, conversation, _ = await start(make_kernel, kind, fake_llm, workspace)

    turn = await conversation.send(KEY, "what does notes.txt say?")

    assert turn.text == "The note says: remember the milk." and turn.tool_calls == 2
    second = wire_history(fake_llm.requests[1])
    assert [s[0] for s in second] == ["user", "call", "result"]
    _, bad_id, name, arguments = second[1]
    assert name == "read"
    # Anthropic needs an object for tool_use.input; the OpenAI APIs get the model's own text back.
    assert arguments == ({} if kind == "anthropic" else '{"path": ')
    _, result_id, text, is_error = second[2]
    assert result_id == bad_id and is_error
    assert "The arguments for read were not valid JSON" in text
    third = wire_history(fake_llm.requests[2])
    assert third[:3] == second
    assert third[3][2:] == ("read", {"path": "notes.txt"})
    assert third[4] == result(third[3][1], "remember the milk")
    saved = [line["message"] for line in transcript_lines(transcript_path(kernel))[1:]]
    assert saved[2]["is_error"] is True and saved[4].get("is_error", False) is False


@pytest.mark.parametrize("kind", KINDS)
async def test_a_tool_that_times_out_reports_the_timeout_to_the_model(make_kernel, fake_llm, workspace, kind) -> None:
    fake_llm.tool_call("sleepy", {})
    fake_llm.reply("Sorry, that took too long.")
    _, conversation, _ = await start(make_kernel, kind, fake_llm, workspace)

    turn = await conversation.send(KEY, "do the slow thing")
    assert turn.text == "Sorry, that took too long."
    _, call_id, name, _ = wire_history(fake_llm.requests[1])[1]
    _, result_id, text, is_error = wire_history(fake_llm.requests[1])[2]
    assert name == "sleepy" and result_id == call_id and is_error
    assert "sleepy timed out after 0.1 s" in text


async def test_anthropic_thinking_is_replayed_with_its_signature_before_the_tool_call(make_kernel, fake_llm, workspace) -> None:
    (workspace / "notes.txt").write_text("remember the milk")
    fake_llm.reply(thinking="The user wants the note; read it.", tool_calls=[ToolCallSpec("read", {"path": "notes.txt"}, id="toolu_01T")])
    fake_llm.reply("It says: remember the milk.", thinking="Now answer.")
    kernel, conversation, _ = await start(make_kernel, "anthropic", fake_llm, workspace, config='thinking = "low"\n')

    turn = await conversation.send(KEY, "what is in notes.txt?")

    assert turn.text == "It says: remember the milk."
    assert fake_llm.requests[1].body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    saved = transcript_lines(transcript_path(kernel))[2]["message"]["content"][0]
    assert saved["type"] == "thinking" and saved["signature"]
    # With thinking on, Anthropic requires the signed thinking block ahead of the tool_use it led to.
    assert wire_history(fake_llm.requests[1]) == [
        user("what is in notes.txt?"),
        ("thinking", "The user wants the note; read it.", saved["signature"]),
        call("toolu_01T", "read", {"path": "notes.txt"}),
        result("toolu_01T", "remember the milk"),
    ]
