"""The default bootstrap-file loader of the workspace plugin, through a real kernel."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import clawbot_workspace.plugin
import pytest
from clawbot import BootstrapContext
from clawbot.agent.bootstrap import Excerpt, load_injected_files
from clawbot_workspace.bootstrap import load_bootstrap_files
from clawbot_workspace.init import seed_workspace

ALL_BUT_MEMORY = ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md"]


def fill(workspace: Path, names: list[str]) -> None:
    for name in names:
        (workspace / name).write_text(f"{name} text\n", encoding="utf-8")


async def kernel_for(make_kernel, config: str | None = None):
    return await make_kernel(plugins={"workspace": clawbot_workspace.plugin}, config=config)


async def test_the_main_session_gets_every_standard_file_in_order(make_kernel, workspace: Path) -> None:
    fill(workspace, [*ALL_BUT_MEMORY, "MEMORY.md"])
    kernel = await kernel_for(make_kernel)
    files = load_injected_files(kernel, kernel.bootstrap_context("main", workspace, "main"))
    assert [f.name for f in files] == [*ALL_BUT_MEMORY, "MEMORY.md"]
    assert all(f.content == f"{f.name} text\n" and f.path == workspace / f.name for f in files)
    assert not any(f.truncated for f in files) and kernel.plugins.failures == []


@pytest.mark.parametrize("kind", ["direct", "group", "cron"])
async def test_memory_stays_out_of_every_session_but_main(make_kernel, workspace: Path, kind: str) -> None:
    fill(workspace, [*ALL_BUT_MEMORY, "MEMORY.md"])
    kernel = await kernel_for(make_kernel)
    names = [f.name for f in load_injected_files(kernel, kernel.bootstrap_context("main", workspace, kind))]
    assert names == ALL_BUT_MEMORY


def test_lower_case_memory_md_is_read_when_the_upper_case_one_is_absent(workspace: Path) -> None:
    (workspace / "memory.md").write_text("lower\n")
    files = load_bootstrap_files(BootstrapContext("main", workspace, "main"))
    assert [(f.name, f.content) for f in files if f.name.lower() == "memory.md"] == [("memory.md", "lower\n")]


def test_sub_agents_get_agents_and_tools_only(workspace: Path) -> None:
    fill(workspace, [*ALL_BUT_MEMORY, "MEMORY.md"])
    files = load_bootstrap_files(BootstrapContext("main", workspace, "subagent"))
    assert [f.name for f in files] == ["AGENTS.md", "TOOLS.md"]
    (workspace / "TOOLS.md").unlink()
    files = load_bootstrap_files(BootstrapContext("main", workspace, "subagent"))
    assert [(f.name, f.missing) for f in files] == [("AGENTS.md", False), ("TOOLS.md", True)]


def test_missing_files_are_listed_except_bootstrap_md_and_empty_ones_left_out(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("rules\n")
    (workspace / "USER.md").write_text("  \n\n")
    files = load_bootstrap_files(BootstrapContext("main", workspace, "main"))
    missing = [f.name for f in files if f.missing]
    assert missing == ["SOUL.md", "TOOLS.md", "IDENTITY.md", "HEARTBEAT.md", "MEMORY.md"]
    assert "USER.md" not in [f.name for f in files]
    assert "BOOTSTRAP.md" not in [f.name for f in files]  # deleted after the first run, on purpose
    (workspace / "BOOTSTRAP.md").write_text("first run\n")
    assert "BOOTSTRAP.md" in [f.name for f in load_bootstrap_files(BootstrapContext("main", workspace, "main"))]


async def test_a_huge_memory_file_is_never_read_whole_and_reports_its_real_size(make_kernel, workspace: Path) -> None:
    path = workspace / "MEMORY.md"
    size = 256 * 1024 * 1024
    with path.open("wb") as handle:
        handle.write(b"# Long-term memory\n" + b"a" * 5000)
        tail = b"z" * 5000 + b"\nlast line\n"
        handle.seek(size - len(tail))
        handle.write(tail)
    kernel = await kernel_for(make_kernel, "[agents.defaults]\nbootstrap_max_chars = 2000\n")
    ctx = kernel.bootstrap_context("main", workspace, "main")
    (raw,) = [f for f in load_bootstrap_files(ctx) if f.name == "MEMORY.md"]
    assert isinstance(raw.content, Excerpt) and len(raw.content) <= 4 * 2000 + 2 * 2000
    (memory,) = [f for f in load_injected_files(kernel, ctx) if f.name == "MEMORY.md"]
    assert memory.raw_chars == size and memory.truncated
    assert memory.content.startswith("# Long-term memory\n") and memory.content.endswith("z\nlast line\n")
    assert f"{size - 1400 - 400} characters cut" in memory.content


def test_what_cannot_be_read_is_left_out_with_a_warning(workspace: Path, caplog: pytest.LogCaptureFixture) -> None:
    (workspace / "SOUL.md").mkdir()
    os.mkfifo(workspace / "TOOLS.md")  # opening must not block, reading must not happen
    (workspace / "AGENTS.md").write_bytes(b"rules \xff\xfe\n")
    with caplog.at_level(logging.WARNING):
        files = load_bootstrap_files(BootstrapContext("main", workspace, "main"))
    names = [f.name for f in files]
    assert "SOUL.md" not in names and "TOOLS.md" not in names
    assert files[0].name == "AGENTS.md" and files[0].content == "rules \ufffd\ufffd\n"
    assert "SOUL.md" in caplog.text and "TOOLS.md" in caplog.text


async def test_a_fresh_workspace_fits_the_default_caps_untouched(make_kernel, workspace: Path) -> None:
    seed_workspace(workspace)
    kernel = await kernel_for(make_kernel)
    files = load_injected_files(kernel, kernel.bootstrap_context("main", workspace, "main"))
    assert [f.name for f in files] == [*ALL_BUT_MEMORY, "MEMORY.md"]
    assert not any(f.missing or f.truncated for f in files)
    assert sum(len(f.content) for f in files) < 10_000  # starter files stay cheap in every prompt
