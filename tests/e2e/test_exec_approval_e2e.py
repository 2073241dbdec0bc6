"""Tool policy and exec approval through the real SDKs and the real gateway.

The model (the fake LLM server, spoken to by the official SDKs) asks ``exec`` for a command
outside the allowlist; the chat gets the approval request; ``/approve <id>`` typed in the
chat runs it exactly once and the model reports the result in a system-event turn. The same
command asked for again needs a fresh approval. A denied tool never reaches the request.
"""

from __future__ import annotations

import asyncio
import json
import os
import re

import clawbot_tools.plugin
import pytest
from clawbot.agent.models import ModelChoice
from clawbot.agent.runtime import AgentRuntime
from clawbot.gateway.runner import Gateway
from clawbot.testing.fake_llm import ToolCallSpec

from .e2etools import KINDS, MODEL, make_provider

COMMAND = "touch approved.txt && echo ran >> runs.log"


def _tool_result_texts(request) -> list[str]:
    return [json.dumps(r["content"]) if not isinstance(r["content"], str) else r["content"] for r in request.tool_results]


async def _until(predicate, timeout: float = 30.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


@pytest.mark.parametrize("kind", KINDS)
async def test_approve_runs_the_command_once_and_denied_tools_never_reach_the_model(make_kernel, fake_llm, fake_channel, workspace, kind) -> None:
    fake_llm.reply(tool_calls=[ToolCallSpec("exec", {"command": COMMAND})])
    fake_llm.reply("That needs your approval; send the /approve command shown.")
    fake_llm.reply("Done: approved.txt exists now.")
    fake_llm.reply(tool_calls=[ToolCallSpec("exec", {"command": COMMAND})])
    fake_llm.reply("It needs a fresh approval.")
    kernel = await make_kernel(
        plugins={"tools": clawbot_tools.plugin, "fake": fake_channel.as_plugin()},
        config=f'[agents.defaults]\nworkspace = "{workspace}"\n\n[tools]\ndeny = ["process", "group:web"]\n',
        env={"PATH": os.environ.get("PATH", os.defpath)},
    )
    provider = make_provider(kind, fake_llm)
    runtime = AgentRuntime(kernel)
    await runtime.conversation("main", chain=[ModelChoice(provider, MODEL[kind])])
    gateway = Gateway(kernel, runtime.respond, "main", runtime=runtime)
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()

    await fake_channel.inject("make approved.txt", peer_id="alice", from_owner=True)
    offered = set(fake_llm.requests[0].tools)
    assert "exec" in offered and "read" in offered
    assert not offered & {"process", "web_fetch", "web_search"}
    (pending,) = _tool_result_texts(fake_llm.requests[1])
    approval_id = re.search(r"/approve (\w+) allow-once", pending).group(1)
    assert "touch approved.txt && echo ran >> runs.log" in pending.replace("\\u0026", "&").replace('\\"', '"')
    assert not (workspace / "approved.txt").exists()
    notice, relay = fake_channel.texts()
    assert notice.startswith(f"Approval needed ({approval_id}): exec wants to run the command below\nWhy: ")  # by the kernel
    assert f"\n\u2502 {COMMAND}\nReply /approve {approval_id}" in notice
    assert relay == "That needs your approval; send the /approve command shown."

    await fake_channel.inject(f"/approve {approval_id}", peer_id="alice", from_owner=True)
    await _until(lambda: fake_channel.texts()[-1] == "Done: approved.txt exists now.")
    assert (workspace / "approved.txt").exists() and (workspace / "runs.log").read_text() == "ran\n"
    assert fake_channel.texts()[-2] == f"Approved (once); exec is running:\n\u2502 {COMMAND}"
    event = fake_llm.requests[2].messages[-1]
    assert "System event from clawbot" in json.dumps(event) and "exit code 0" in json.dumps(event)

    await fake_channel.inject("do it again", peer_id="alice", from_owner=True)
    again = _tool_result_texts(fake_llm.requests[4])[-1]  # the history holds the first result too
    second_id = re.search(r"/approve (\w+) allow-once", again).group(1)
    assert second_id != approval_id
    assert (workspace / "runs.log").read_text() == "ran\n"  # allow-once covered one run only
    gateway.stop()
    await task
    await runtime.aclose()
    await provider.aclose()
    await kernel.aclose()
