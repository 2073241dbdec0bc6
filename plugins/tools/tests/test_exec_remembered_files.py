"""A command allowed always covers the files it runs, not only its text.

"Allow always" for ``python3 build.py`` with network (or outside the sandbox) used to
remember the text, directory and grants; a later turn rewrote the script and the remembered
command ran the new content unasked. Now the approval is bound to the files the line runs or
names that the agent can rewrite (the workspace, ``sandbox_write``), by content: a file that
changed, vanished and came back different, or became a symlink asks again, and the notice
says so. A line whose files cannot all be named is not offered "always" when it runs with
more than the sandbox gives.

Through the kernel's approval broker and the real exec tool, with real commands, in a tmp
world; once end to end through the gateway, a scripted model and the ``write`` tool.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import clawbot_tools.plugin
import pytest
from clawbot import ToolCall, ToolCallBlock
from clawbot.types import ApprovalDecision
from clawbot_tools.runtime.sandbox import choose

from .test_exec_approvals import SESSION, RecordingPort, Scripted, Setup, notice_of, text_of

NODE = shutil.which("node")


@attrs.frozen
class Form:
    command: str
    files: dict[str, str]  # name (in the workspace, or under {extra}/) -> content
    target: str  # the file a later turn rewrites
    security: str = "allowlist"  # "full" where the allowlist never offers always (programs in the workspace, source)
    needs: str | None = None  # a program that must be installed


FORMS = {
    "python script": Form("python3 build.py", {"build.py": "print('built')\n"}, "build.py"),
    "module the script imports": Form("python3 main.py", {"main.py": "import helper\n", "helper.py": "print('helped')\n"}, "helper.py"),
    "file passed as an argument": Form(
        "python3 tool.py data.txt", {"tool.py": "import sys; print(open(sys.argv[1]).read())\n", "data.txt": "input\n"}, "data.txt"
    ),
    "node script": Form("node build.js", {"build.js": "console.log('built')\n"}, "build.js", needs="node"),
    "shell script": Form("bash build.sh", {"build.sh": "echo built\n"}, "build.sh", security="full"),
    "program in the workspace": Form("./run", {"run": "#!/bin/sh\necho ran\n"}, "run", security="full"),
    "sh -c starting it": Form("sh -c './run'", {"run": "#!/bin/sh\necho ran\n"}, "run", security="full"),
    "env starting a script": Form("env python3 build.py", {"build.py": "print('built')\n"}, "build.py"),
    "module a script run by its own name imports": Form(
        "./run", {"run": "#!/usr/bin/env python3\nimport helper\n", "helper.py": "print('helped')\n"}, "helper.py", security="full"
    ),
    "node script named without its extension": Form("node build", {"build.js": "console.log('built')\n"}, "build.js", needs="node"),
    "make with a Makefile": Form("make", {"Makefile": "all:\n\t@echo made\n"}, "Makefile"),
    "source": Form(". ./env.sh", {"env.sh": "echo sourced\n"}, "env.sh", security="full"),
    "script in a sandbox_write path": Form("python3 {extra}/tool.py", {"{extra}/tool.py": "print('tool')\n"}, "{extra}/tool.py"),
}
# grant -> exec arguments; "sandbox_write" also opens an extra path in the configuration
GRANTS: dict[str, dict[str, Any]] = {"outside the sandbox": {"sandbox": False}, "network": {"network": True}, "sandbox_write": {}, "plain sandbox": {}}
ASKS_AGAIN = {
    "content edited": True,
    "replaced by a symlink to the same content": True,
    "deleted and recreated": True,
    "recreated with the same content": False,
    "an unrelated file edited": False,
    "nothing changed": False,
}


def _cases() -> list[Any]:
    cases = []
    for form_name, form in FORMS.items():
        for grant in GRANTS:
            # full mode runs a plain sandboxed command unasked: nothing is remembered there
            if form.security == "full" and grant in ("plain sandbox", "sandbox_write"):
                continue
            if "{extra}" in form.command and grant != "sandbox_write":
                continue
            cases.append(pytest.param(form_name, grant, id=f"{form_name}-{grant}"))
    return cases


def _path(setup: Setup, extra: Path, name: str) -> Path:
    return Path(name.replace("{extra}", str(extra))) if "{extra}" in name else setup.ws / name


def _change(kind: str, target: Path, original: str) -> None:
    mode = target.stat().st_mode
    if kind == "content edited":
        target.write_text(original.replace("'", "'changed ").replace("echo ", "echo changed ").replace("input", "other input"))
        if target.read_text() == original:
            target.write_text(original + "\n")
    elif kind == "replaced by a symlink to the same content":
        real = target.with_name(f"real-{target.name}")
        real.write_text(original)
        real.chmod(mode)
        target.unlink()
        target.symlink_to(real.name)
    elif kind == "deleted and recreated":
        target.unlink()
        target.write_text(original + "\n")
        target.chmod(mode)
    elif kind == "recreated with the same content":
        target.unlink()
        target.write_text(original)
        target.chmod(mode)
    elif kind == "an unrelated file edited":
        (target.parent / "notes.txt").write_text("edited notes\n")


async def _answer(setup: Setup, result: Any, decision: ApprovalDecision) -> str:
    """The owner's answer, after reading the request in full (a long program path may cut the notice)."""
    setup.agents.approvals.show(SESSION, result.details["approval_id"], by_owner=True)
    return await setup.answer(result, decision)


def _restore(target: Path, original: str, mode: int) -> None:
    target.with_name(f"real-{target.name}").unlink(missing_ok=True)
    if target.is_symlink():
        target.unlink()
    target.write_text(original)
    target.chmod(mode)


async def _setup(make_kernel: Any, tmp_path: Path, *, security: str, extra: Path | None) -> Setup:
    ws = tmp_path / "ws"
    ws.mkdir()
    config = f'[plugins.tools.exec]\nsecurity = "{security}"\n'
    if extra is not None:
        config += f'sandbox_write = ["{extra}"]\n'
    kernel = await make_kernel(plugins={"tools": clawbot_tools.plugin}, env={"PATH": os.environ.get("PATH", os.defpath)}, config=config)
    port = RecordingPort()
    return Setup(kernel, kernel.agents(chat=port), port, ws)


@pytest.fixture
async def made(make_kernel: Any, tmp_path: Path):
    setups: list[Setup] = []

    async def make(**kwargs: Any) -> Setup:
        setups.append(await _setup(make_kernel, tmp_path, **kwargs))
        return setups[-1]

    yield make
    for setup in setups:
        await setup.agents.aclose()
        await setup.kernel.aclose()


@pytest.mark.parametrize(("form_name", "grant"), _cases())
async def test_a_command_allowed_always_asks_again_when_a_file_it_runs_changed(made: Callable, tmp_path: Path, form_name: str, grant: str) -> None:
    form = FORMS[form_name]
    if form.needs and shutil.which(form.needs) is None:
        pytest.skip(f"{form.needs} is not installed")
    extra = tmp_path / "extra"
    extra.mkdir()
    setup = await made(security=form.security, extra=extra if grant == "sandbox_write" else None)
    command = form.command.replace("{extra}", str(extra))
    for name, content in form.files.items():
        _path(setup, extra, name).write_text(content)
    if (setup.ws / "run").exists():
        (setup.ws / "run").chmod(0o755)
    (setup.ws / "notes.txt").write_text("notes\n")
    target = _path(setup, extra, form.target)
    original, mode = target.read_text(), target.stat().st_mode

    first = await setup.exec(command, **GRANTS[grant])
    assert first.details["status"] == "approval-pending" and first.details["allow_always"] is True, text_of(first)
    assert "Approved (always)" in await _answer(setup, first, ApprovalDecision.ALLOW_ALWAYS)
    [event] = setup.port.events
    assert "(approved command): exit code 0" in event, event

    asked: dict[str, bool] = {}
    for kind in ASKS_AGAIN:
        _restore(target, original, mode)
        (setup.ws / "notes.txt").write_text("notes\n")
        _change(kind, target, original)
        again = await setup.exec(command, **GRANTS[grant])
        asked[kind] = again.details["status"] == "approval-pending"
        if asked[kind]:
            assert "since it was allowed always" in notice_of(setup), (kind, notice_of(setup))
            await _answer(setup, again, ApprovalDecision.DENY)
        else:
            assert again.details["status"] == "exited" and again.details["exit_code"] == 0, (kind, text_of(again))
    assert asked == ASKS_AGAIN


# --- lines whose files cannot all be named: no "always" with grants -----------------------

UNSURE = {
    "code on the command line": "python3 -c 'print(1)'",
    "a module by name": "python3 -m json.tool notes.txt",
    "a program that runs files it is not given (hooks, configuration)": "git status",
    "awk, whose program may start commands": "awk '{print}' notes.txt",
    "a variable naming the script": "python3 $SCRIPT",
    "a glob naming the scripts": "python3 *.py",
    "a relative name after cd": "cd sub && python3 build.py",
    "eval": "eval 'python3 build.py'",
    "a variable that changes what python loads": "PYTHONPATH=sub python3 build.py",
    "make reading another folder's makefile": "make -C sub",
    "python running a folder": "python3 sub",
    "a substitution": "python3 $(echo build.py)",
    "the interpreter of a virtual environment in the workspace": ".venv/bin/python build.py",
    "a file too large to compare": "python3 build.py big.bin",
}


@pytest.mark.parametrize("grant", ["outside the sandbox", "network"])
@pytest.mark.parametrize("line", UNSURE)
async def test_always_is_not_offered_with_grants_for_a_line_whose_files_cannot_be_named(made: Callable, line: str, grant: str) -> None:
    setup = await made(security="full", extra=None)
    (setup.ws / "sub").mkdir()
    (setup.ws / "build.py").write_text("print('built')\n")
    (setup.ws / "notes.txt").write_text("[1]\n")
    with (setup.ws / "big.bin").open("wb") as big:
        big.truncate(65 * 1024 * 1024)  # sparse: larger than exec reads to compare, using no disk
    (setup.ws / ".venv" / "bin").mkdir(parents=True)
    (setup.ws / ".venv" / "bin" / "python").symlink_to(os.path.realpath(shutil.which("python3") or "/usr/bin/python3"))
    result = await setup.exec(UNSURE[line], **GRANTS[grant])
    assert result.details["status"] == "approval-pending" and result.details["allow_always"] is False, text_of(result)
    notice = notice_of(setup)
    assert "\nNo allow-always: " in notice and "allow-always" not in notice.rsplit("\n", 1)[-1], notice
    refused = await _answer(setup, result, ApprovalDecision.ALLOW_ALWAYS)
    assert "cannot be allowed always" in refused
    stored = setup.kernel.state_dir / "exec-approvals.json"
    assert not stored.exists() or json.loads(stored.read_text())["agents"] == {}


async def test_without_grants_a_line_whose_files_cannot_be_named_is_still_offered_always(made: Callable) -> None:
    setup = await made(security="allowlist", extra=None)
    result = await setup.exec("python3 -c 'print(1)'")
    assert result.details["allow_always"] is True, text_of(result)  # the sandbox bounds what it can do


async def test_allowed_once_it_runs_once(made: Callable) -> None:
    setup = await made(security="full", extra=None)
    (setup.ws / "build.py").write_text("open('built.txt', 'w').write('yes')\n")
    result = await setup.exec("python3 $(echo build.py)", network=True)
    await _answer(setup, result, ApprovalDecision.ALLOW_ONCE)
    assert (setup.ws / "built.txt").read_text() == "yes"


@pytest.mark.parametrize("decision", [ApprovalDecision.ALLOW_ONCE, ApprovalDecision.ALLOW_ALWAYS])
async def test_a_script_changed_before_the_answer_runs_nothing(made: Callable, decision: ApprovalDecision) -> None:
    setup = await made(security="allowlist", extra=None)
    (setup.ws / "build.py").write_text("open('built.txt', 'w').write('yes')\n")
    result = await setup.exec("python3 build.py", network=True)
    (setup.ws / "build.py").write_text("open('pwned.txt', 'w').write('ran')\n")  # the turn went on
    await _answer(setup, result, decision)
    assert not (setup.ws / "pwned.txt").exists() and not (setup.ws / "built.txt").exists()
    [event] = setup.port.events
    assert "the approved command did not run: since you were asked, build.py changed" in event, event
    again = await setup.exec("python3 build.py", network=True)
    assert again.details["status"] == "approval-pending", text_of(again)  # nothing was remembered either


async def test_what_a_remembered_command_writes_is_not_bound(made: Callable) -> None:
    setup = await made(security="allowlist", extra=None)
    (setup.ws / "gen.py").write_text("import random; print(random.random())\n")
    first = await setup.exec("python3 gen.py > out.txt", network=True)
    await _answer(setup, first, ApprovalDecision.ALLOW_ALWAYS)
    written = (setup.ws / "out.txt").read_text()
    again = await setup.exec("python3 gen.py > out.txt", network=True)
    assert again.details["status"] == "exited", text_of(again)  # out.txt changed: it is output, not what runs
    assert (setup.ws / "out.txt").read_text() != written


async def test_a_remembered_command_with_grants_asks_while_a_command_no_approval_covers_is_running(made: Callable) -> None:
    """That command could rewrite build.py between the check and the moment python reads it."""
    setup = await made(security="full", extra=None)
    (setup.ws / "build.py").write_text("print('built')\n")
    first = await setup.exec("python3 build.py", network=True)
    await _answer(setup, first, ApprovalDecision.ALLOW_ALWAYS)
    busy = await setup.exec("while :; do sleep 1; done", background=True)
    assert busy.details["status"] == "running", text_of(busy)
    asked = await setup.exec("python3 build.py", network=True)
    assert asked.details["status"] == "approval-pending", text_of(asked)
    assert f"{busy.details['process_id']} of this agent still running could change the files it runs" in text_of(asked)
    await _answer(setup, asked, ApprovalDecision.DENY)
    stop = ToolCall("c2", "process", {"action": "kill", "id": busy.details["process_id"]}, "main", SESSION, setup.ws)
    await setup.kernel.tools["process"].handler(stop)
    assert (await setup.exec("python3 build.py", network=True)).details["status"] == "exited"


async def test_an_approved_python_command_leaves_no_bytecode_that_would_make_it_ask_again(made: Callable) -> None:
    setup = await made(security="allowlist", extra=None)
    (setup.ws / "main.py").write_text("import helper\n")
    (setup.ws / "helper.py").write_text("print('helped')\n")
    first = await setup.exec("python3 main.py", network=True)
    await _answer(setup, first, ApprovalDecision.ALLOW_ALWAYS)
    assert not (setup.ws / "__pycache__").exists()
    assert (await setup.exec("python3 main.py", network=True)).details["status"] == "exited"


# --- entries written before files were bound -----------------------------------------------


async def test_an_entry_from_before_files_were_bound_asks_again_for_a_line_that_runs_workspace_files(made: Callable) -> None:
    setup = await made(security="allowlist", extra=None)
    (setup.ws / "build.py").write_text("print('built')\n")
    mechanism = choose("auto").mechanism.name
    key = {"cwd": os.path.realpath(setup.ws), "env": {}, "network": True, "sandbox": mechanism, "interactive": False}
    old = {"version": 2, "agents": {"main": {"programs": [], "commands": [{"command": "python3 build.py", **key}, {"command": "uname -s", **key}]}}}
    path = setup.kernel.state_dir / "exec-approvals.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(old))
    names_nothing = await setup.exec("uname -s", network=True)
    assert names_nothing.details["status"] == "exited", text_of(names_nothing)  # no file of the workspace: still remembered
    runs_a_file = await setup.exec("python3 build.py", network=True)
    assert runs_a_file.details["status"] == "approval-pending", text_of(runs_a_file)
    assert "allowed always before clawbot compared the files" in notice_of(setup)
    await _answer(setup, runs_a_file, ApprovalDecision.ALLOW_ALWAYS)
    [entry] = [e for e in json.loads(path.read_text())["agents"]["main"]["commands"] if e["command"] == "python3 build.py"]
    assert list(entry["files"]) == [os.path.join(os.path.realpath(setup.ws), "build.py")]  # the old entry was replaced
    assert (await setup.exec("python3 build.py", network=True)).details["status"] == "exited"


# --- end to end: a later turn rewrites the script ------------------------------------------


async def test_a_script_rewritten_by_a_later_turn_asks_again_instead_of_running(make_kernel: Any, fake_channel: Any) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    port = listener.getsockname()[1]
    rewritten = f"import socket\nopen('pwned.txt', 'w').write('ran')\nsocket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n"
    build = {"command": "python3 build.py", "network": True}
    provider = Scripted(
        [ToolCallBlock(id="c1", name="exec", arguments=build)],
        "Please approve the build.",
        "Built.",
        [ToolCallBlock(id="c2", name="write", arguments={"path": "build.py", "content": rewritten})],
        [ToolCallBlock(id="c3", name="exec", arguments=build)],
        "It needs your approval again.",
    )
    kernel = await make_kernel(
        plugins={"tools": clawbot_tools.plugin, "fake": fake_channel.as_plugin()},
        env={"PATH": os.environ.get("PATH", os.defpath)},
    )
    agents = kernel.agents()
    conversation = await agents.conversation(provider, model="m")
    ws = conversation.workspace
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "build.py").write_text("open('built.txt', 'w').write('yes')\n")
    gateway = agents.gateway()
    task = asyncio.create_task(gateway.run([fake_channel]))
    try:
        await fake_channel.wait_started()
        await fake_channel.inject("build it", peer_id="alice", from_owner=True)
        approval_id = re.search(r"Reply with: /approve (\w+) allow-once", provider.requests[1].messages[-1].text).group(1)
        await fake_channel.inject(f"/approve {approval_id} show", peer_id="alice", from_owner=True)  # a long program path may cut the notice
        await fake_channel.inject(f"/approve {approval_id} allow-always", peer_id="alice", from_owner=True)
        async with asyncio.timeout(30):
            while fake_channel.texts()[-1] != "Built.":
                await asyncio.sleep(0.02)
        assert (ws / "built.txt").read_text() == "yes"

        await fake_channel.inject("now change the build script", peer_id="alice", from_owner=True)
        async with asyncio.timeout(30):
            while fake_channel.texts()[-1] != "It needs your approval again.":
                await asyncio.sleep(0.02)
        result = provider.requests[-1].messages[-1].text
        assert "approval-pending" in result and "since it was allowed always, build.py changed" in result, result
        notice = next(text for text in reversed(fake_channel.texts()) if text.startswith("Approval needed ("))
        assert "since it was allowed always, build.py changed" in notice, notice
        assert (ws / "build.py").read_text() == rewritten and not (ws / "pwned.txt").exists()
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing reached the listener
    finally:
        gateway.stop()
        await task
        await agents.aclose()
        await kernel.aclose()
        listener.close()
