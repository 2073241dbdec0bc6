"""A turn the owner did not start sees the workspace read-only, and the sandbox enforces it.

What the workspace holds feeds the owner's turns (the bootstrap files, HEARTBEAT.md,
MEMORY.md and memory/, the workspace skills), so a command of a group member's turn must
not change any of it, however it writes: the shell's analysis is not what stops it, each
sandbox mechanism mounts or grants the workspace for reading only. Where no sandbox can do
that, such a command does not run at all. The owner's commands write as before.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from clawbot import ToolCall, ToolResult, TurnTrust
from clawbot_tools.runtime.sandbox import SandboxPolicy

from .exec_support import Harness, text_of
from .sandbox_variants import CONFINING
from .sandbox_world import run_sandboxed

PROTECTED = (
    "AGENTS.md",
    "SOUL.md",
    "USER.md",
    "TOOLS.md",
    "IDENTITY.md",
    "BOOTSTRAP.md",
    "HEARTBEAT.md",
    "MEMORY.md",
    "memory/2026-01-01.md",
    "skills/helper/SKILL.md",
)
NEW = "NEW.md"
#: every way a shell line changes a file: (name, line for FILE, what FILE reads after it, None: gone)
WRITES = (
    ("overwrite", "echo x > FILE", "x\n"),
    ("append", "echo x >> FILE", "original\nx\n"),
    ("delete", "rm -f FILE", None),
    ("rename", "mv FILE FILE.moved", None),
    ("replace by a link", "ln -sf /etc/hostname FILE", "link"),
)


def _lay_out(workspace: Path) -> None:
    for path in PROTECTED:
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text("original\n")


def _state(workspace: Path) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for path in (*PROTECTED, NEW):
        target = workspace / path
        found[path] = "link" if target.is_symlink() else target.read_text() if target.exists() else None
    return found


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    workspace, temp = tmp_path / "ws", tmp_path / "tmp"
    workspace.mkdir()
    temp.mkdir(mode=0o700)
    _lay_out(workspace)
    return workspace, temp


@pytest.mark.parametrize("name", CONFINING)
def test_no_command_changes_a_read_only_workspace_in_any_sandbox(dirs, name: str) -> None:
    workspace, temp = dirs
    policy = SandboxPolicy(workspace=str(workspace), temp_dir=str(temp), workspace_writable=False)
    before = _state(workspace)
    for label, line, _after in WRITES:
        for path in (*PROTECTED, NEW):
            run_sandboxed(name, line.replace("FILE", path), policy)
        assert _state(workspace) == before, f"{name}: {label} changed the read-only workspace"
    assert list(workspace.rglob("*.moved")) == []
    # what it can still do: read the workspace, write its temp dir
    done = run_sandboxed(name, 'cat HEARTBEAT.md && echo scratch > "$TMPDIR/note" && cat "$TMPDIR/note"', policy)
    assert done.stdout == "original\nscratch\n", done.stdout


#: ways around the path a command was refused: links made in its own temp dir, the same file
#: reached by another name, and what Landlock itself does not mediate (modes, times, xattrs)
INDIRECT = {
    "hard link into the temp dir": 'ln HEARTBEAT.md "$TMPDIR/h" && echo planted >> "$TMPDIR/h"',
    "hard link of a memory file": 'ln memory/2026-01-01.md "$TMPDIR/m"; echo planted >> "$TMPDIR/m"',
    "through /proc/self/cwd": "echo planted >> /proc/self/cwd/HEARTBEAT.md",
    "through /proc/self/root": 'echo planted >> "/proc/self/root$PWD/HEARTBEAT.md"',
    "through /dev/fd of the opened folder": "exec 3<.; echo planted >> /dev/fd/3/HEARTBEAT.md",
    "moved out and written": 'mv HEARTBEAT.md "$TMPDIR/x" && echo planted > "$TMPDIR/x"',
    "truncated": "truncate -s 0 HEARTBEAT.md",
    "opened with O_TRUNC": "python3 -c \"import os; os.open('HEARTBEAT.md', os.O_WRONLY|os.O_TRUNC)\"",
    "a new skill": "mkdir -p skills/evil && echo x > skills/evil/SKILL.md",
    "mode changed": "chmod 777 HEARTBEAT.md; chmod 000 AGENTS.md",
    "times changed": "touch -d 2000-01-01 HEARTBEAT.md",
    "extended attribute set": "python3 -c \"import os; os.setxattr('HEARTBEAT.md', 'user.x', b'1')\"",
    "owner changed": 'chown "$(id -u):$(id -g)" HEARTBEAT.md && chmod 600 HEARTBEAT.md',
}


def _metadata(workspace: Path) -> dict[str, tuple[int, int, list[str]]]:
    found = {}
    for path in PROTECTED:
        info = (workspace / path).stat()
        found[path] = (info.st_mode, info.st_mtime_ns, sorted(os.listxattr(workspace / path)))
    return found


@pytest.mark.parametrize("name", CONFINING)
@pytest.mark.parametrize("label", INDIRECT)
def test_no_indirect_way_changes_a_read_only_workspace(dirs, name: str, label: str) -> None:
    workspace, temp = dirs
    policy = SandboxPolicy(workspace=str(workspace), temp_dir=str(temp), workspace_writable=False)
    before, metadata = _state(workspace), _metadata(workspace)
    done = run_sandboxed(name, INDIRECT[label], policy)
    assert _state(workspace) == before, done.stdout
    assert _metadata(workspace) == metadata, f"{name}: {label} changed a file's metadata: {done.stdout}"
    assert not (workspace / "skills" / "evil").exists(), done.stdout


@pytest.mark.parametrize("name", CONFINING)
def test_the_owners_commands_still_change_modes_and_times(dirs, name: str) -> None:
    workspace, temp = dirs
    policy = SandboxPolicy(workspace=str(workspace), temp_dir=str(temp))
    run_sandboxed(name, "chmod 600 HEARTBEAT.md && touch -d 2000-01-01 HEARTBEAT.md", policy)
    info = (workspace / "HEARTBEAT.md").stat()
    assert (info.st_mode & 0o777, info.st_mtime < 10**9) == (0o600, True)


@pytest.mark.parametrize("name", CONFINING)
def test_every_command_changes_a_writable_workspace_in_every_sandbox(dirs, name: str) -> None:
    workspace, temp = dirs
    policy = SandboxPolicy(workspace=str(workspace), temp_dir=str(temp))
    for label, line, after in WRITES:
        _lay_out(workspace)
        for path in (*PROTECTED, NEW):
            run_sandboxed(name, line.replace("FILE", path), policy)
        expected = {path: after for path in PROTECTED}
        expected[NEW] = {"overwrite": "x\n", "append": "x\n", "replace by a link": "link"}.get(label)
        assert _state(workspace) == expected, f"{name}: {label}"
        for moved in workspace.rglob("*.moved"):
            moved.unlink()
        if (workspace / NEW).is_symlink() or (workspace / NEW).exists():
            (workspace / NEW).unlink()
        for path in PROTECTED:
            if (workspace / path).is_symlink():
                (workspace / path).unlink()


# --- the exec tool: the turn's trust decides, every sandbox setting ------------------------------


def _harness(dirs, sandbox: str, **settings) -> Harness:
    workspace, _temp = dirs
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(workspace.parent / "home"), "LANG": "C.UTF-8"}
    return Harness(workspace, workspace.parent / "state", env, sandbox=sandbox, security="full", **settings)


async def _exec(harness: Harness, trust: TurnTrust, command: str, **arguments) -> ToolResult:
    call = ToolCall("c1", "exec", {"command": command, **arguments}, "main", harness.session, harness.ws, trust=trust)
    result = await harness.tools["exec"].handler(call)
    assert isinstance(result, ToolResult)
    return result


@pytest.mark.parametrize("sandbox", ["auto", "bwrap", "landlock", "off"])
async def test_a_command_of_someone_elses_turn_changes_no_protected_file(dirs, sandbox: str) -> None:
    harness = _harness(dirs, sandbox)
    workspace = dirs[0]
    before = _state(workspace)
    try:
        for path in (*PROTECTED, NEW):
            result = await _exec(harness, TurnTrust.NON_OWNER, f"sh -c 'echo x > {path}'")
            if sandbox == "off":  # nothing could keep the workspace read-only: it does not run
                assert result.is_error and result.details["status"] == "refused", text_of(result)
                assert "Nothing ran" in text_of(result) and "owner" in text_of(result)
            else:
                assert "read-only" in text_of(result), text_of(result)
        for arguments in ({"sandbox": False}, {"network": True, "sandbox": False}):
            result = await _exec(harness, TurnTrust.NON_OWNER, "echo x > HEARTBEAT.md", **arguments)
            assert result.is_error and result.details["status"] in ("refused", "approval-unavailable"), text_of(result)
        assert _state(workspace) == before
        for path in (*PROTECTED, NEW):
            result = await _exec(harness, TurnTrust.OWNER, f"sh -c 'echo x > {path}'")
            assert not result.is_error, text_of(result)
        assert set(_state(workspace).values()) == {"x\n"}
    finally:
        await harness.close()


async def test_a_sandbox_write_grant_is_read_only_to_someone_elses_turn(dirs, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "notes.md").write_text("original\n")
    harness = _harness(dirs, "auto", sandbox_write=[str(shared)])
    try:
        refused = await _exec(harness, TurnTrust.NON_OWNER, f"sh -c 'echo x > {shared}/notes.md'")
        assert (shared / "notes.md").read_text() == "original\n", text_of(refused)
        ran = await _exec(harness, TurnTrust.OWNER, f"sh -c 'echo x > {shared}/notes.md'")
        assert (shared / "notes.md").read_text() == "x\n", text_of(ran)
    finally:
        await harness.close()


async def test_someone_elses_command_gets_a_temp_dir_of_its_own(dirs) -> None:
    harness = _harness(dirs, "auto")
    try:
        await _exec(harness, TurnTrust.OWNER, 'echo "echo build" > "$TMPDIR/run.sh"')
        other = await _exec(harness, TurnTrust.NON_OWNER, 'ls "$TMPDIR"; echo "echo planted" > "$TMPDIR/run.sh"')
        assert "run.sh" not in text_of(other), text_of(other)  # the owner's file is not there
        again = await _exec(harness, TurnTrust.OWNER, 'sh "$TMPDIR/run.sh"')
        assert "build" in text_of(again) and "planted" not in text_of(again), text_of(again)
    finally:
        await harness.close()


@pytest.mark.parametrize("sandbox", ["bwrap", "landlock"])
async def test_a_command_of_someone_elses_turn_changes_no_files_mode(dirs, sandbox: str) -> None:
    harness = _harness(dirs, sandbox)
    workspace = dirs[0]
    modes = {path: (workspace / path).stat().st_mode for path in PROTECTED}
    try:
        result = await _exec(harness, TurnTrust.NON_OWNER, f"chmod 000 {' '.join(PROTECTED)}")
        assert {path: (workspace / path).stat().st_mode for path in PROTECTED} == modes, text_of(result)
    finally:
        await harness.close()
