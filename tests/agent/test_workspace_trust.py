"""Who may change what feeds the owner's turns: every file of it, by every way of writing.

The workspace holds what the owner's later turns act on: the bootstrap files in the system
prompt, HEARTBEAT.md for the heartbeat, MEMORY.md and memory/ for memory search, the
workspace skills, and any file a later instruction may point to. A turn that someone other
than the owner started (a member of an allowed group, a stranger writing to the main
session) must change none of it, whichever way the model tries: the file tools, a shell
command in the real sandbox, or the memory flush beside the turn. The owner's own turn
changes each of them the same ways.

Real turns: the Anthropic provider (official SDK) on the fake LLM, the shipped core tools on
a real workspace, commands in the OS sandbox this machine has, real transcripts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import clawbot_tools.plugin
import pytest
from clawbot import CompactionResult, CompactionStrategy, InboundMessage
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.testing import plugin_from_hooks
from clawbot.testing.fake_llm import Reply, ToolCallSpec
from clawbot_memory.flush import flush_before_compaction

from ..e2e.e2etools import MODEL, make_provider, providers_plugin

BOOTSTRAP = ("AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md", "IDENTITY.md", "BOOTSTRAP.md")
NEW = "NEW.md"
#: every file that feeds an owner's turn, and one that does not exist yet
PROTECTED = (*BOOTSTRAP, "HEARTBEAT.md", "MEMORY.md", "memory/2026-01-01.md", "skills/helper/SKILL.md", NEW)
ROUTES = ("write", "edit", "apply_patch", "exec", "memory flush")

OWNER = InboundMessage(channel="fake", peer_id="alice", sender_id="alice", text="", from_owner=True)
GROUP_MEMBER = InboundMessage(channel="fake", peer_id="g1", chat_type="group", sender_id="mallory", sender_name="Mallory", text="")
STRANGER = InboundMessage(channel="fake", peer_id="stranger", sender_id="stranger", text="")
SESSION = {"owner": "agent:main:main", "group member": "agent:main:fake:group:g1", "stranger": "agent:main:main"}
ORIGIN = {"owner": OWNER, "group member": GROUP_MEMBER, "stranger": STRANGER}

FLUSH_NOTE = "The session is close to compaction. Store durable memories now."
FILLER = "The quick brown fox jumps over the lazy dog. " * 2_100  # crosses the flush line at once


def original(path: str) -> str:
    return f"original {path}\n"


def _lay_out(workspace: Path) -> None:
    for path in PROTECTED:
        if path != NEW:
            (workspace / path).parent.mkdir(parents=True, exist_ok=True)
            (workspace / path).write_text(original(path))


def _call(route: str, path: str) -> ToolCallSpec:
    """The tool call that makes ``path`` read ``x`` by ``route`` (the flush uses ``write``)."""
    if route in ("write", "memory flush"):
        return ToolCallSpec("write", {"path": path, "content": "x\n"})
    if route == "edit":
        return ToolCallSpec("edit", {"path": path, "old_text": original(path), "new_text": "x\n"})
    if route == "apply_patch":
        change = f"*** Add File: {path}\n+x" if path == NEW else f"*** Update File: {path}\n@@\n-{original(path).strip()}\n+x"
        return ToolCallSpec("apply_patch", {"input": f"*** Begin Patch\n{change}\n*** End Patch"})
    return ToolCallSpec("exec", {"command": f"sh -c 'echo x > {path}'"})


def _cases(route: str) -> list[str]:
    # edit changes a file that exists: it never creates one, for anybody
    return [p for p in PROTECTED if not (route == "edit" and p == NEW)]


class KeepLast(CompactionStrategy):
    """A compaction strategy must be installed for the flush to run; it is never reached here."""

    name = "summary"

    async def compact(self, request):
        return CompactionResult("earlier talk", first_kept_index=len(request.messages) - 1, tokens_before=40_000, tokens_after=100)


def _flush_script(path: str):
    """One model reply: inside the flush, write ``path`` (then stay silent); elsewhere, answer."""

    def respond(request) -> Reply:
        if FLUSH_NOTE not in json.dumps(request.system):
            return Reply(text="Sure.")
        if request.tool_results:
            return Reply(text="NO_REPLY")
        return Reply(tool_calls=(_call("memory flush", path),))

    return respond


async def _conversation(make_kernel, fake_llm, workspace: Path) -> tuple[object, Conversation]:
    provider = make_provider("anthropic", fake_llm)
    config = (
        f'[agents.defaults]\nworkspace = "{workspace}"\ncontext_tokens = 40000\n\n'
        "[agents.defaults.compaction]\nreserve_tokens_floor = 10000\n\n"
        "[agents.defaults.compaction.memory_flush]\nenabled = true\nsoft_threshold_tokens = 4000\n\n"
        '[plugins.tools.exec]\nsecurity = "full"\n'  # the gate lets every command run: the sandbox alone decides
    )
    plugins = {
        "llm": providers_plugin(provider),
        "tools": clawbot_tools.plugin,
        "compaction": plugin_from_hooks(clawbot_compaction_strategies=lambda ctx: [KeepLast()]),
        "memory": plugin_from_hooks(clawbot_compaction_near=flush_before_compaction),
    }
    kernel = await make_kernel(plugins=plugins, config=config, env={"PATH": os.environ.get("PATH", os.defpath)})

    async def no_sleep(_seconds: float) -> None:
        return None

    return kernel, Conversation(kernel, ModelChoice(provider, MODEL["anthropic"]), "main", services=None, caller_sleep=no_sleep)


async def _try(conversation: Conversation, fake_llm, who: str, route: str, path: str, case: int) -> None:
    """One turn of ``who`` in which the model changes ``path`` by ``route``."""
    fake_llm.reset()
    if route == "memory flush":  # a session of its own each time: the flush runs once per compaction cycle
        session = {"owner": f"agent:main:owner-{case}", "group member": f"agent:main:fake:group:g{case}", "stranger": f"agent:main:dm:stranger-{case}"}[who]
        fake_llm.queue(_flush_script(path), _flush_script(path), _flush_script(path))
        await conversation.send(session, FILLER, origin=ORIGIN[who])
        return
    fake_llm.reply(tool_calls=[_call(route, path)])
    fake_llm.reply("done")
    await conversation.send(SESSION[who], "please change it", origin=ORIGIN[who])


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("who", ["group member", "stranger"])
async def test_a_turn_someone_else_started_changes_nothing_that_feeds_the_owner(make_kernel, fake_llm, workspace, who: str, route: str) -> None:
    _lay_out(workspace)
    kernel, conversation = await _conversation(make_kernel, fake_llm, workspace)
    changed = []
    for case, path in enumerate(_cases(route)):
        await _try(conversation, fake_llm, who, route, path, case)
        now = (workspace / path).read_text() if (workspace / path).exists() else None
        if now != (None if path == NEW else original(path)):
            changed.append((path, now))
    assert changed == [], f"a {who}'s turn changed these files by {route}"
    await kernel.aclose()


@pytest.mark.parametrize("route", ROUTES)
async def test_the_owners_turn_changes_each_of_them(make_kernel, fake_llm, workspace, route: str) -> None:
    _lay_out(workspace)
    kernel, conversation = await _conversation(make_kernel, fake_llm, workspace)
    unchanged = []
    for case, path in enumerate(_cases(route)):
        await _try(conversation, fake_llm, "owner", route, path, case)
        now = (workspace / path).read_text() if (workspace / path).exists() else None
        if now != "x\n":
            unchanged.append((path, now))
    assert unchanged == [], f"the owner's turn could not change these files by {route}"
    await kernel.aclose()
