"""Every workspace file clawbot reads on its own behalf is opened one safe way.

The agent can write its workspace, so HEARTBEAT.md, AGENTS.md or a SKILL.md may be a FIFO, a
socket, a link to a device or out of the workspace, a file of gigabytes, a folder or not
UTF-8 at all. For each reader and each of those, the reader refuses or skips the file: it
never blocks, never reads outside the workspace and never holds more than its cap. Each
reader runs in a thread of its own with a timeout, so a reader that blocks fails its row
instead of hanging the suite. The memory plugin and the bootstrap-extra-files plugin have
the same table in their own tests.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import clawbot_workspace.plugin
import pytest
from clawbot import BootstrapContext
from clawbot.agent.bootstrap import NotLoaded, load_injected_files
from clawbot.agent.prompt_report import agent_prompt
from clawbot.gateway.reply_media import attachment
from clawbot.testing import HOSTILE_KINDS, HOSTILE_SECRET, ResponderHost, call_in_thread, plant_hostile, secret_outside
from clawbot.testing.hostile_files import HUGE_BYTES
from clawbot.testing.kernels import boot_kernel
from clawbot.workspacefiles import FileRefused, LeadsOutside, NotRegular, TooLarge, Unreadable, read_text
from clawbot_automation.heartbeat import HeartbeatService
from clawbot_automation.heartbeat_plan import read_checklist
from clawbot_workspace.bootstrap import load_bootstrap_files

START = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
TASK = "- check the inbox\n"
CAP = 1024 * 1024


class World:
    """A clawbot home, a workspace in it and a secret outside it."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.ws = tmp_path / "ws"
        self.ws.mkdir()
        self.secret = secret_outside(tmp_path / "private")

    def config(self) -> str:
        return f'[agents.defaults]\nworkspace = "{self.ws}"\n[agents.defaults.heartbeat]\nevery_minutes = 30\n'

    async def kernel(self, *, workspace_plugin: bool = False):
        plugins = {"workspace": clawbot_workspace.plugin} if workspace_plugin else {}
        return await boot_kernel(self.home, plugins=plugins, config=self.config())


# --------------------------------------------------------------------------- the readers
# Each returns what got through: the text a model or a user would be shown.


async def heartbeat(world: World) -> str:
    asked: list[str] = []

    async def respond(message, session_key, *, kind="chat", model=None):
        asked.append(message.text)
        return "HEARTBEAT_OK"

    kernel = await world.kernel()
    beats = await HeartbeatService().tick(ResponderHost(kernel, respond), START)
    for beat in beats:
        if beat.answered is not None:
            await beat.answered
    return "; ".join(f"{b.status}: {b.reason}" for b in beats) + (" (asked the model)" if asked else "")


async def bootstrap(world: World) -> str:
    kernel = await world.kernel(workspace_plugin=True)
    files = load_injected_files(kernel, kernel.bootstrap_context("main", world.ws, "main"))
    agents = next((f for f in files if f.name == "AGENTS.md"), None)
    if agents is None or agents.content is None:
        return "left out"
    return f"not loaded: {agents.content.reason}" if isinstance(agents.content, NotLoaded) else agents.content


async def context_report(world: World) -> str:
    kernel = await world.kernel(workspace_plugin=True)
    built = await agent_prompt(kernel, "main")  # what `clawbot context` and /context show
    return built.system.stable + built.system.volatile


async def skills(world: World) -> str:
    kernel = await world.kernel()
    snapshot = kernel.skill_catalog.snapshot("main")
    return "\n".join([*(f"skill {e.name}: {e.description}" for e in snapshot.entries), *(f"problem {p}" for p in snapshot.problems)])


async def attachment_of_a_reply(world: World) -> str:
    attached, refused = attachment("report.md", world.ws, world.home / "media" / "outbound")  # a reply's MEDIA: line
    return f"refused: {refused}" if attached is None else f"attached: {Path(attached).read_text(errors='replace')}"


READERS: dict[str, tuple[Callable[[World], Awaitable[str]], str]] = {
    "heartbeat": (heartbeat, "HEARTBEAT.md"),
    "bootstrap files": (bootstrap, "AGENTS.md"),
    "clawbot context": (context_report, "AGENTS.md"),
    "skills": (skills, "skills/demo/SKILL.md"),
    "reply attachments": (attachment_of_a_reply, "report.md"),
}

NOT_LISTED_AS_SKILLS = ("fifo", "socket", "folder", "link-to-dev-null", "link-to-dev-zero")
"""A skill folder counts only when its SKILL.md is a regular file: these are not even listed."""

SKILL = "---\nname: demo\ndescription: A demo skill.\n---\nUse it.\n"


def _content(name: str) -> str:
    return SKILL if name.endswith("SKILL.md") else TASK


def run_reader(reader: Callable[[World], Awaitable[str]], world: World, target: Path) -> str:
    return call_in_thread(lambda: asyncio.run(reader(world)), fifos=(target,))


# --------------------------------------------------------------------------- the table


@pytest.mark.parametrize("kind", HOSTILE_KINDS)
@pytest.mark.parametrize("reader_name", list(READERS))
def test_each_reader_refuses_what_is_not_a_plain_file_of_the_workspace_without_blocking(tmp_path: Path, reader_name: str, kind: str) -> None:
    world = World(tmp_path)
    reader, name = READERS[reader_name]
    target = world.ws / name
    plant_hostile(kind, target, world.secret)

    got = run_reader(reader, world, target)

    assert HOSTILE_SECRET not in got
    assert len(got) < 200_000, f"{len(got)} characters: the reader did not keep to its cap"
    if reader_name == "heartbeat":
        assert got.startswith("skipped: HEARTBEAT.md is not read: it "), got
        assert "asked the model" not in got
    elif reader_name == "bootstrap files":
        if kind == "not-utf8":  # shown as text with the bad bytes replaced, as documented
            assert got == "- check \ufffd\ufffd the \ufffd inbox\n"
        elif kind == "huge":  # both ends only, cut to the cap by the prompt
            assert f"cut from the middle of AGENTS.md ({HUGE_BYTES} in all)" in got
        else:
            assert got == "left out" or got.startswith("not loaded: it "), got
    elif reader_name == "skills":
        assert "skill demo" not in got
        assert f"problem {target}" in got or kind in NOT_LISTED_AS_SKILLS, got
    elif reader_name == "reply attachments":
        if kind == "not-utf8":  # any bytes may be attached
            assert got.startswith("attached: - check"), got
        else:
            assert got.startswith("refused: "), got
    else:
        assert "- check the inbox" not in got


@pytest.mark.parametrize("reader_name", list(READERS))
def test_a_link_to_a_file_inside_the_workspace_is_read(tmp_path: Path, reader_name: str) -> None:
    world = World(tmp_path)
    reader, name = READERS[reader_name]
    target = world.ws / name
    real = world.ws / "kept" / ("SKILL.md" if name.endswith("SKILL.md") else "notes.md")
    real.parent.mkdir()
    real.write_text(_content(name))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(os.path.relpath(real, target.parent))

    got = run_reader(reader, world, target)

    expected = {
        "heartbeat": "ran: ",
        "bootstrap files": TASK,
        "clawbot context": "- check the inbox",
        "skills": "skill demo: A demo skill.",
        "reply attachments": f"attached: {TASK}",
    }[reader_name]
    assert expected in got


OPENER_REFUSALS: dict[str, type[FileRefused]] = {
    "fifo": NotRegular,
    "socket": NotRegular,
    "link-to-dev-null": LeadsOutside,
    "link-to-dev-zero": LeadsOutside,
    "link-out": LeadsOutside,
    "huge": TooLarge,
    "folder": NotRegular,
    "not-utf8": Unreadable,
}


@pytest.mark.parametrize("kind", HOSTILE_KINDS)
def test_the_opener_says_why_it_refuses_each_kind(tmp_path: Path, kind: str) -> None:
    world = World(tmp_path)
    target = world.ws / "notes.md"
    plant_hostile(kind, target, world.secret)
    with pytest.raises(OPENER_REFUSALS[kind]) as refused:
        call_in_thread(lambda: read_text(target, world.ws, max_bytes=CAP), fifos=(target,))
    assert refused.value.reason.startswith("it ")
    assert str(target) in str(refused.value)


def test_the_opener_reads_a_file_inside_and_says_none_for_a_missing_one(tmp_path: Path) -> None:
    world = World(tmp_path)
    (world.ws / "notes.md").write_text(TASK)
    assert read_text(world.ws / "notes.md", world.ws, max_bytes=CAP) == TASK
    assert read_text(world.ws / "missing.md", world.ws, max_bytes=CAP) is None


# --------------------------------------------------------------------------- a file swapped while it is read


def swapping(target: Path, secret: Path, stop: threading.Event) -> threading.Thread:
    """A thread that keeps replacing ``target``: a plain file, a link out, a FIFO, again."""

    def run() -> None:
        spare = target.with_name(".spare")
        while not stop.is_set():
            for make in (lambda p: p.write_text(TASK), lambda p: p.symlink_to(secret), os.mkfifo):
                make(spare)
                os.replace(spare, target)

    thread = threading.Thread(target=run, name="swapper", daemon=True)
    thread.start()
    return thread


SWAP_READERS: dict[str, Callable[[Path], object]] = {
    "opener": lambda ws: read_text(ws / "HEARTBEAT.md", ws, max_bytes=CAP),
    "heartbeat checklist": read_checklist,
    "bootstrap files": lambda ws: load_bootstrap_files(BootstrapContext("main", ws, "main")),
}


@pytest.mark.parametrize("reader_name", list(SWAP_READERS))
def test_a_file_swapped_for_a_link_or_a_fifo_while_it_is_read_never_blocks_nor_leaks(tmp_path: Path, reader_name: str) -> None:
    world = World(tmp_path)
    target = world.ws / "HEARTBEAT.md"
    (world.ws / "AGENTS.md").symlink_to("HEARTBEAT.md")  # the bootstrap loader reads the same file
    target.write_text(TASK)
    read = SWAP_READERS[reader_name]

    def read_many() -> list[str]:
        seen = []
        for _ in range(300):
            try:
                seen.append(repr(read(world.ws)))
            except FileRefused as exc:
                seen.append(exc.reason)
            except FileNotFoundError:
                seen.append("missing")  # caught between the two renames
        return seen

    stop = threading.Event()
    swapper = swapping(target, world.secret, stop)
    try:
        seen = call_in_thread(read_many, fifos=(target,))
    finally:
        stop.set()
        swapper.join(30)
    assert not any(HOSTILE_SECRET in text for text in seen)
