"""Several calls of the real file tools in one model reply: none is lost, each sees the ones before it.

A model often sends a batch of edits to one file in a single reply. They must land one after
the other, in call order, and each result must come back in call order; a read that follows a
write in the same reply must see what was written.
"""

from __future__ import annotations

from pathlib import Path

import clawbot_tools.plugin
import pytest
from clawbot.testing.fake_llm import IN_PROCESS_URL, ToolCallSpec
from clawbot_subagents.plugin import SubagentsPlugin

KEY = "agent:main:main"


def _text(result: dict) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "".join(c["text"] for c in content)


async def _turn(make_kernel, fake_llm, workspace: Path, ask: str):
    from clawbot_anthropic.config import AnthropicConfig
    from clawbot_anthropic.provider import AnthropicProvider

    kernel = await make_kernel(
        plugins={"tools": clawbot_tools.plugin},
        config=f'[agents.defaults]\nworkspace = "{workspace.as_posix()}"\n',
    )
    provider = AnthropicProvider(AnthropicConfig(api_key="sk-test", base_url=IN_PROCESS_URL), http_client=fake_llm.http_client())
    try:
        return await kernel.run_turn(provider, ask, model="claude-test", session_key=KEY)
    finally:
        await provider.aclose()
        await kernel.aclose()


@pytest.mark.parametrize("edits", [2, 6])
async def test_edits_of_one_file_in_one_reply_all_land_and_answer_in_call_order(make_kernel, fake_llm, workspace, edits) -> None:
    lines = [f"line {i}: old" for i in range(edits)]
    (workspace / "f.txt").write_text("\n".join(lines) + "\n")
    fake_llm.reply(
        tool_calls=[
            ToolCallSpec("edit", {"path": "f.txt", "old_text": f"line {i}: old", "new_text": f"line {i}: new"}, id=f"toolu_{i:02d}") for i in range(edits)
        ]
    )
    fake_llm.reply("Edited every line.")

    turn = await _turn(make_kernel, fake_llm, workspace, "update every line")

    assert turn.text == "Edited every line."
    assert (workspace / "f.txt").read_text() == "".join(f"line {i}: new\n" for i in range(edits))
    results = fake_llm.requests[1].tool_results
    assert [r["id"] for r in results] == [f"toolu_{i:02d}" for i in range(edits)]
    assert all("Edited f.txt" in _text(r) for r in results), [_text(r) for r in results]


async def test_a_read_after_a_write_in_the_same_reply_sees_the_written_content(make_kernel, fake_llm, workspace) -> None:
    (workspace / "a.txt").write_text("before\n")
    fake_llm.reply(
        tool_calls=[
            ToolCallSpec("write", {"path": "a.txt", "content": "after\n" * 2000}, id="toolu_w"),
            ToolCallSpec("read", {"path": "a.txt"}, id="toolu_r"),
            ToolCallSpec("edit", {"path": "a.txt", "old_text": "after\nafter\n" * 1000, "new_text": "edited\n"}, id="toolu_e"),
            ToolCallSpec("read", {"path": "a.txt"}, id="toolu_r2"),
        ]
    )
    fake_llm.reply("Done.")

    await _turn(make_kernel, fake_llm, workspace, "rewrite a.txt and show it")

    results = {r["id"]: _text(r) for r in fake_llm.requests[1].tool_results}
    assert list(results) == ["toolu_w", "toolu_r", "toolu_e", "toolu_r2"]
    assert results["toolu_r"].startswith("after\nafter\n") and "before" not in results["toolu_r"], results["toolu_r"][:200]
    assert "Edited a.txt" in results["toolu_e"], results["toolu_e"]
    assert results["toolu_r2"].startswith("edited"), results["toolu_r2"][:200]
    assert (workspace / "a.txt").read_text() == "edited\n"


READ_ONLY = {
    "read",
    "ls",
    "find",
    "grep",
    "web_fetch",
    "web_search",
    "sessions_list",
    "sessions_history",
    "agents_list",
    "session_status",
    "memory_search",
    "memory_get",
}
CHANGES_STATE = {"write", "edit", "apply_patch", "exec", "process", "message", "sessions_send", "sessions_spawn"}  # cron: the automation plugin's (its tests)


async def test_every_tool_declares_whether_its_calls_may_overlap(make_kernel, workspace) -> None:
    config = f'[agents.defaults]\nworkspace = "{workspace.as_posix()}"\n'
    # a search key, so that web_search (offered only with a search provider) is registered too
    kernel = await make_kernel(plugins={"tools": clawbot_tools.plugin, "subagents": SubagentsPlugin()}, config=config, env={"BRAVE_API_KEY": "k"})
    try:
        declared = {tool.name: tool.concurrent for tool in kernel.tools}
    finally:
        await kernel.aclose()
    # a new tool must be placed in one of the two sets on purpose
    assert set(declared) == READ_ONLY | CHANGES_STATE
    assert {name for name, concurrent in declared.items() if concurrent} == READ_ONLY
