"""exec with real subprocesses in a real workspace: output, exit codes, cwd, env, limits."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import clawbot_tools.runtime.sandboxing as sandboxing_module
import pytest
from clawbot import ToolCall
from clawbot.testing import schema_problem

from .exec_support import Harness, running_with, text_of
from .sandbox_world import usable

MECHANISMS = ("bwrap", "landlock", "off")

SECRET = "sk-test-0123456789abcdef"
PASSED = "ghp_passthrough_0123456789"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "sub").mkdir(parents=True)
    return workspace


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(tmp_path / "home"),
        "LANG": "C.UTF-8",
        "OPENAI_API_KEY": SECRET,
        "GH_TOKEN": PASSED,
        "PLAIN_SETTING": "visible",
    }


@pytest.fixture
async def full(ws: Path, tmp_path: Path, env: dict[str, str]):
    harness = Harness(ws, tmp_path / "state", env, security="full", env_passthrough=["GH_TOKEN"])
    yield harness
    await harness.close()


async def eventually(predicate, timeout: float = 30.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


# --- declarations ----------------------------------------------------------------------


def test_exec_and_process_are_runtime_tools_with_strict_schemas(ws: Path, tmp_path: Path, env: dict[str, str]) -> None:
    harness = Harness(ws, tmp_path, env)
    assert list(harness.tools) == ["exec", "process"]
    for tool in harness.tools.values():
        assert tool.group == "runtime" and tool.summary and "\n" not in tool.summary
        assert tool.parameters["additionalProperties"] is False and schema_problem(tool.parameters) is None
        assert tool.timeout_s and tool.timeout_s > 60
    assert harness.tools["exec"].parameters["required"] == ["command"]
    assert harness.closers, "the registry's shutdown is registered with ctx.on_close"


# --- running ---------------------------------------------------------------------------


async def test_output_and_exit_code(full: Harness) -> None:
    result = await full.exec("echo out; echo err >&2; exit 3")
    text = text_of(result)
    assert not result.is_error
    assert text.startswith("out\nerr\n") and "[exit code 3;" in text
    assert result.details["exit_code"] == 3 and result.details["status"] == "exited"
    ok = await full.exec("true")
    assert text_of(ok).startswith("(no output)") and "[exit code 0;" in text_of(ok)


async def test_allowlisted_pipelines_run_without_approval(ws: Path, tmp_path: Path, env: dict[str, str], make_harness) -> None:
    (ws / "a.txt").write_text("x\n")
    (ws / "b.txt").write_text("y\n")
    harness = make_harness(ws, tmp_path / "state", env)  # default: allowlist mode, safe bins only
    result = await harness.exec("ls | wc -l && echo done > sub/out.txt")
    assert not result.is_error and text_of(result).startswith("3\n"), text_of(result)
    assert (ws / "sub" / "out.txt").read_text() == "done\n"


async def test_cwd_is_inside_the_workspace(full: Harness, ws: Path) -> None:
    result = await full.exec("pwd", cwd="sub")
    assert text_of(result).splitlines()[0] == os.path.realpath(ws / "sub")
    assert text_of(await full.exec("pwd")).splitlines()[0] == os.path.realpath(ws)
    outside = await full.exec("pwd", cwd="..")
    assert outside.is_error and "outside the workspace" in text_of(outside)
    missing = await full.exec("pwd", cwd="nope")
    assert missing.is_error and "not an existing directory" in text_of(missing)


async def test_env_argument_adds_only_allow_listed_variables(full: Harness) -> None:
    result = await full.exec('echo "$LANG $NO_COLOR"', env={"LANG": "C", "NO_COLOR": "1"})
    assert text_of(result).startswith("C 1\n")
    names = ("GREETING", "PATH", "LD_PRELOAD", "BASH_ENV", "ENV", "IFS", "PYTHONSTARTUP", "GIT_SSH_COMMAND", "HOME", "DYLD_LIBRARY_PATH")
    for name in names:
        refused = await full.exec("true", env={name: "x"})
        assert refused.is_error and f"may not set {name}" in text_of(refused), name
    bad = await full.exec("true", env={"1BAD": "x"})
    assert bad.is_error and "not a valid variable name" in text_of(bad)


async def test_secrets_are_scrubbed_from_the_environment_and_masked_in_output(full: Harness, ws: Path) -> None:
    result = await full.exec("env")
    text = text_of(result)
    assert "OPENAI_API_KEY" not in text and SECRET not in text
    assert "PLAIN_SETTING" not in text  # only allow-listed names of clawbot's environment
    assert "GH_TOKEN=[redacted]" in text and PASSED not in text  # passed through, but never shown
    present = await full.exec('test "$GH_TOKEN" = "ghp_passthrough_0123456789" && echo present')
    assert text_of(present).startswith("present")
    (ws / "leak.txt").write_text(f"key={SECRET}\n")
    leaked = await full.exec("cat leak.txt")
    assert SECRET not in text_of(leaked) and "key=[redacted]" in text_of(leaked)


async def test_output_is_capped_in_the_middle(ws: Path, tmp_path: Path, env: dict[str, str]) -> None:
    harness = Harness(ws, tmp_path / "state", env, security="full", max_output_chars=1000)
    result = await harness.exec("seq 1 20000")
    text = text_of(result)
    assert len(text) < 1200 and text.startswith("1\n2\n") and "characters omitted" in text
    assert "\n20000\n" in text and result.details["output_bytes"] > 100_000
    huge = await harness.exec("head -c 1000000 /dev/zero | tr '\\0' a; echo; echo END")
    assert "1000005 bytes of output, the middle omitted" in text_of(huge) and "END" in text_of(huge)
    assert huge.details["output_bytes"] == 1_000_005
    await harness.close()


def in_mode(mode: str, ws: Path, tmp_path: Path, env: dict[str, str]) -> Harness:
    if mode != "off":
        usable(mode)
    return Harness(ws, tmp_path / "state", env, security="full", sandbox=mode)


@pytest.mark.parametrize("mode", MECHANISMS)
async def test_timeout_kills_the_whole_process_group(mode: str, ws: Path, tmp_path: Path, env: dict[str, str]) -> None:
    marker = f"tree-{mode}-{os.getpid()}"
    harness = in_mode(mode, ws, tmp_path, env)
    try:
        sleeper = f"sh -c 'sleep 1000' {marker}"
        result = await harness.exec(f"{sleeper} & ({sleeper} & wait) & {sleeper}", timeout=1)
        assert not result.is_error and "killed after the 1 s timeout" in text_of(result)
        assert result.details["status"] == "timed-out"
        await eventually(lambda: running_with(marker) == [])
    finally:
        await harness.close()


@pytest.mark.parametrize("mode", ("landlock", "off"))
async def test_background_children_of_a_finished_command_die_at_its_timeout(mode: str, ws: Path, tmp_path: Path, env: dict[str, str]) -> None:
    marker = f"left-{mode}-{os.getpid()}"
    harness = in_mode(mode, ws, tmp_path, env)
    try:
        result = await harness.exec(f"sh -c 'sleep 1000' {marker} & echo started", timeout=2)
        text = text_of(result)
        assert "[exit code 0;" in text and "still running" in text and result.details["process_id"]
        assert running_with(marker)
        await eventually(lambda: running_with(marker) == [], timeout=6)
    finally:
        await harness.close()


async def test_under_bwrap_background_children_end_with_the_command(ws: Path, tmp_path: Path, env: dict[str, str]) -> None:
    """bwrap's process namespace ends with the command's shell: nothing it left behind survives
    (to keep a server running, the model starts it with background: true)."""
    marker = f"left-bwrap-{os.getpid()}"
    harness = in_mode("bwrap", ws, tmp_path, env)
    try:
        result = await harness.exec(f"sh -c 'sleep 1000' {marker} & echo started", timeout=30)
        assert text_of(result).startswith("started") and "still running" not in text_of(result)
        await eventually(lambda: running_with(marker) == [])
    finally:
        await harness.close()


async def test_deny_mode_refuses_everything(ws: Path, tmp_path: Path, env: dict[str, str]) -> None:
    harness = Harness(ws, tmp_path / "state", env, security="deny")
    result = await harness.exec("echo hi > made.txt")
    assert result.is_error and 'security = "deny"' in text_of(result) and "Nothing ran" in text_of(result)
    assert not (ws / "made.txt").exists()


async def test_without_a_chat_a_command_needing_approval_is_refused_with_a_way_out(ws: Path, tmp_path: Path, env: dict[str, str]) -> None:
    (ws / "victim.txt").write_text("keep me")
    harness = Harness(ws, tmp_path / "state", env)
    result = await harness.exec("ls && rm victim.txt")
    text = text_of(result)
    assert result.is_error and "approvals are not available" in text
    assert "ls && rm victim.txt" in text and "is not in the exec allowlist" in text
    assert "[plugins.tools.exec] allowlist" in text
    assert (ws / "victim.txt").exists()


@pytest.mark.parametrize("mode", ("landlock", "off"))
async def test_a_command_that_cannot_start_is_an_error(mode: str, ws: Path, tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandboxing_module, "SHELL", "/nonexistent/sh")
    harness = in_mode(mode, ws, tmp_path, env)
    try:
        result = await harness.exec("echo hi")
        assert result.is_error and "could not start" in text_of(result) and "nothing ran" in text_of(result)
    finally:
        await harness.close()


async def test_bad_arguments_are_errors(full: Harness) -> None:
    for arguments in ({"command": ""}, {"command": 5}, {"command": "true", "timeout": 0}, {"command": "true", "env": "X=1"}):
        result = await full.call("exec", **arguments)
        assert result.is_error, arguments


async def test_a_kernel_with_the_plugin_offers_exec_and_kills_processes_on_close(make_kernel: Any, workspace: Path) -> None:
    import clawbot_tools.plugin

    kernel = await make_kernel(plugins={"tools": clawbot_tools.plugin}, config='[plugins.tools.exec]\nsecurity = "full"\n')
    exec_tool = kernel.tools["exec"]
    assert kernel.tools["process"].group == "runtime"
    marker = f"closing-{os.getpid()}"
    command = f"sh -c 'sleep 1000' {marker} & wait"
    result = await exec_tool.handler(ToolCall("c1", "exec", {"command": command, "background": True}, "main", "s", workspace))
    assert result.details["status"] == "running"
    await eventually(lambda: running_with(marker) != [])
    await kernel.aclose()
    await eventually(lambda: running_with(marker) == [])


@pytest.mark.parametrize("mode", MECHANISMS)
async def test_a_command_that_eats_memory_without_end_is_stopped_by_its_limit(mode: str, ws: Path, tmp_path: Path, env: dict[str, str]) -> None:
    """`tail /dev/zero` keeps the whole endless "line" in memory; it used to grow until the machine swapped."""
    harness = in_mode(mode, ws, tmp_path, env)
    try:
        result = await harness.exec("tail /dev/zero", timeout=120)  # unlimited, it would time out
        text = text_of(result)
        assert result.details["status"] == "exited" and result.details["exit_code"] != 0, text
        assert "memory exhausted" in text, text
    finally:
        await harness.close()
