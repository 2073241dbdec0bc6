"""The per-file and total caps on bootstrap files (clawbot.agent.bootstrap)."""

from __future__ import annotations

import importlib
import tracemalloc
from pathlib import Path

import pytest
from clawbot import BootstrapFile, InjectedFile, hookimpl
from clawbot.agent.bootstrap import (
    MIN_KEPT_CHARS,
    Excerpt,
    inject_files,
    load_injected_files,
    read_bounded,
)
from clawbot.plugins.records import HookFailure

WS = Path("/ws")


def text(n: int, seed: int = 0) -> str:
    """``n`` characters where every position is recognisable (no two windows alike)."""
    return "".join(chr(0x41 + (i * 7 + seed) % 26) if i % 50 else "\n" for i in range(n))


def marker(name: str, cut: int, raw: int) -> str:
    return f"[... truncated: {cut} characters cut from the middle of {name} ({raw} in all); the full file can be read with the `read` tool at {WS / name} ...]"


def bf(name: str, content: str | None) -> BootstrapFile:
    return BootstrapFile(name, WS / name, content)


# ------------------------------------------------------------------ per-file cap


def test_a_file_at_or_under_the_cap_is_injected_unchanged() -> None:
    body = text(1000)
    (at_cap,) = inject_files([bf("AGENTS.md", body)], max_chars=1000, total_max_chars=60_000)
    assert at_cap == InjectedFile("AGENTS.md", WS / "AGENTS.md", body, 1000, False)
    (under,) = inject_files([bf("AGENTS.md", body[:10])], max_chars=1000, total_max_chars=60_000)
    assert under.content == body[:10] and under.raw_chars == 10 and not under.truncated


@pytest.mark.parametrize(("size", "cap", "head", "tail"), [(1001, 1000, 700, 200), (50_000, 999, 699, 199), (25, 10, 7, 2)])
def test_over_the_cap_keeps_70_percent_head_and_20_percent_tail_around_a_marker(size, cap, head, tail) -> None:
    body = text(size)
    (file,) = inject_files([bf("SOUL.md", body)], max_chars=cap, total_max_chars=10**9)
    cut = size - head - tail
    assert file.content == body[:head] + "\n" + marker("SOUL.md", cut, size) + "\n" + body[size - tail :]
    assert file.raw_chars == size and file.truncated and not file.missing


def test_the_marker_says_how_much_was_cut_and_where_to_read_the_rest() -> None:
    (file,) = inject_files([bf("MEMORY.md", "m" * 30_000)], max_chars=20_000, total_max_chars=60_000)
    line = file.content.split("\n")[1]
    assert "12000 characters cut" in line and "(30000 in all)" in line
    assert "`read` tool at /ws/MEMORY.md" in line
    assert len(file.content) <= 20_000  # 10 % of the cap is room enough for the marker


def test_empty_files_are_skipped_and_missing_ones_kept_in_order() -> None:
    files = [bf("AGENTS.md", "a"), bf("SOUL.md", " \n\t\n"), bf("TOOLS.md", None), bf("USER.md", ""), bf("IDENTITY.md", "i")]
    out = inject_files(files, max_chars=100, total_max_chars=100)
    assert [f.name for f in out] == ["AGENTS.md", "TOOLS.md", "IDENTITY.md"]
    missing = out[1]
    assert missing == InjectedFile("TOOLS.md", WS / "TOOLS.md", None, 0, False) and missing.missing


# ------------------------------------------------------------------ total cap


def test_the_total_cap_cuts_the_file_that_does_not_fit_to_the_remaining_budget() -> None:
    a, b, c = text(1000, 1), text(1000, 2), text(1000, 3)
    out = inject_files([bf("A.md", a), bf("B.md", b), bf("C.md", c)], max_chars=5000, total_max_chars=2500)
    assert [f.content for f in out[:2]] == [a, b] and not out[0].truncated and not out[1].truncated
    budget = 500
    room = budget - len(marker("C.md", 1000, 1000)) - 2
    limit = room * 10 // 9
    head, tail = limit * 7 // 10, limit // 5
    assert out[2].content == c[:head] + "\n" + marker("C.md", 1000 - head - tail, 1000) + "\n" + c[1000 - tail :]
    assert out[2].truncated and out[2].raw_chars == 1000
    assert sum(len(f.content) for f in out) <= 2500


def test_a_file_that_would_keep_too_little_is_dropped_with_a_note() -> None:
    first, second = text(900), text(5000, 5)
    out = inject_files(
        [bf("AGENTS.md", first), bf("MEMORY.md", second), bf("TOOLS.md", None), bf("USER.md", "u")],
        max_chars=10_000,
        total_max_chars=1000,
    )
    assert out[0].content == first
    dropped = out[1]
    assert dropped.truncated and dropped.raw_chars == 5000
    assert dropped.content == (
        "[... MEMORY.md (5000 characters) left out: the bootstrap files' total cap of 1000 characters "
        "is used up; read it with the `read` tool at /ws/MEMORY.md ...]"
    )
    assert out[2].missing  # missing files cost nothing and are still listed
    assert out[3].content == "u"  # a later file that still fits the budget goes in


def test_the_smallest_kept_cut_is_min_kept_chars() -> None:
    body = text(5000)
    overhead = len(marker("X.md", 5000, 5000)) + 2
    (kept,) = inject_files([bf("X.md", body)], max_chars=10_000, total_max_chars=overhead + MIN_KEPT_CHARS)
    assert "characters cut from the middle" in kept.content
    (dropped,) = inject_files([bf("X.md", body)], max_chars=10_000, total_max_chars=overhead + MIN_KEPT_CHARS - 1)
    assert "left out" in dropped.content


def test_the_per_file_cut_counts_against_the_total() -> None:
    big = text(30_000)
    out = inject_files([bf("A.md", big), bf("B.md", big), bf("C.md", big), bf("D.md", big)], max_chars=20_000, total_max_chars=60_000)
    assert all(f.truncated for f in out)
    assert [len(f.content) <= 20_000 for f in out[:3]] == [True, True, True]
    assert sum(len(f.content) for f in out[:3]) <= 60_000
    assert "left out" in out[3].content or sum(len(f.content) for f in out) <= 60_000


def test_caps_are_deterministic() -> None:
    files = [bf("A.md", text(3000)), bf("B.md", None), bf("C.md", text(9000, 4)), bf("D.md", text(700, 9))]
    runs = {inject_files(files, max_chars=2000, total_max_chars=4000) for _ in range(3)}
    assert len(runs) == 1
    reordered = inject_files(list(reversed(files)), max_chars=2000, total_max_chars=4000)
    assert [f.name for f in reordered] == ["D.md", "C.md", "B.md", "A.md"]


# ------------------------------------------------------------------ huge files


def test_an_excerpt_is_cut_only_inside_its_seam_and_reports_the_whole_size() -> None:
    excerpt = Excerpt("A" * 100, "B" * 100, 10_000)
    (file,) = inject_files([bf("MEMORY.md", excerpt)], max_chars=1000, total_max_chars=60_000)
    assert file.content == "A" * 100 + "\n" + marker("MEMORY.md", 9800, 10_000) + "\n" + "B" * 100
    assert file.raw_chars == 10_000 and file.truncated


def test_a_huge_file_is_read_in_bounded_memory_and_time(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    size = 1 << 30  # 1 GB, sparse: only both ends are written
    with path.open("wb") as handle:
        handle.write(b"HEAD of the memory\n" + b"h" * 100_000)
        suffix = b"t" * 100_000 + b"\nend of the memory\n"
        handle.seek(size - len(suffix))
        handle.write(suffix)
    assert path.stat().st_size == size
    tracemalloc.start()
    try:
        content = read_bounded(path, max_chars=20_000)
        (file,) = inject_files([BootstrapFile("MEMORY.md", path, content)], max_chars=20_000, total_max_chars=60_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000  # a few caps' worth, never the file
    assert isinstance(content, Excerpt) and content.full_chars == size
    assert file.content.startswith("HEAD of the memory\n") and file.content.endswith("t\nend of the memory\n")
    assert file.raw_chars == size and file.truncated
    assert f"{size - 14_000 - 4_000} characters cut" in file.content
    assert len(file.content) <= 20_000


def test_read_bounded_reads_small_files_whole_and_refuses_what_is_not_a_file(tmp_path: Path) -> None:
    small = tmp_path / "AGENTS.md"
    small.write_bytes("caf\u00e9 \xff".encode("utf-8") + b"\xff")
    assert read_bounded(small, max_chars=100) == "caf\u00e9 \xff\ufffd"  # bad bytes never raise
    assert read_bounded(tmp_path / "nope.md") is None
    assert read_bounded(tmp_path / "nope" / "deeper.md") is None
    with pytest.raises(OSError):
        read_bounded(tmp_path)
    edge = tmp_path / "EDGE.md"
    edge.write_text("x" * 400)
    assert read_bounded(edge, max_chars=100) == "x" * 400  # 4 bytes per character of the cap: whole
    edge.write_text("x" * 401)
    assert isinstance(read_bounded(edge, max_chars=100), Excerpt)


def test_an_excerpt_never_splits_a_character(tmp_path: Path) -> None:
    path = tmp_path / "USER.md"
    path.write_text("\u00e9" * 5000, encoding="utf-8")  # 2 bytes per character
    content = read_bounded(path, max_chars=100)
    assert isinstance(content, Excerpt) and set(content) == {"\u00e9"}
    assert content.full_chars == 10_000


# ------------------------------------------------------------------ one run, through the hook


def workspace_plugin() -> object:
    return importlib.import_module("clawbot_workspace.plugin")


CAPS = "[agents.defaults]\nbootstrap_max_chars = 1000\nbootstrap_total_max_chars = 1500\n"


async def test_load_injected_files_applies_the_configured_caps(make_kernel, workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text(text(1200))
    (workspace / "SOUL.md").write_text(text(800, 3))
    (workspace / "MEMORY.md").write_text(text(5000, 6))
    kernel = await make_kernel(plugins={"workspace": workspace_plugin()}, config=CAPS)
    files = load_injected_files(kernel, kernel.bootstrap_context("main", workspace, "main"))
    by_name = {f.name: f for f in files}
    assert by_name["AGENTS.md"].truncated and by_name["AGENTS.md"].raw_chars == 1200
    assert "300 characters cut" in by_name["AGENTS.md"].content
    assert by_name["MEMORY.md"].truncated and "left out" in by_name["MEMORY.md"].content
    assert by_name["TOOLS.md"].missing
    assert kernel.plugins.failures == []


class Garbage:
    @hookimpl(wrapper=True)
    def clawbot_bootstrap_files(self, ctx):
        files = yield
        return [*files, "NOTES.md", BootstrapFile("X.md", ctx.workspace / "X.md", b"bytes"), BootstrapFile("Y.md", str(ctx.workspace / "Y.md"), "y")]


class NotAList:
    @hookimpl(wrapper=True)
    def clawbot_bootstrap_files(self, ctx):
        yield
        return 42


async def test_garbage_from_a_plugin_is_left_out_and_recorded(make_kernel, workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("rules")
    kernel = await make_kernel(plugins={"workspace": workspace_plugin(), "garbage": Garbage()})
    files = load_injected_files(kernel, kernel.bootstrap_context("main", workspace, "main"))
    names = [f.name for f in files]
    assert "AGENTS.md" in names and "Y.md" in names and "X.md" not in names and "NOTES.md" not in names
    assert next(f for f in files if f.name == "Y.md").path == workspace / "Y.md"  # a str path becomes a Path
    (failure,) = kernel.plugins.failures
    assert failure.plugin == "garbage" and failure.hook == "clawbot_bootstrap_files"
    assert "2 item(s)" in failure.error and "'NOTES.md'" in failure.error and "content is bytes" in failure.error


async def test_a_result_that_is_not_a_list_does_not_break_the_turn(make_kernel, workspace: Path) -> None:
    kernel = await make_kernel(plugins={"workspace": workspace_plugin(), "broken": NotAList()})
    assert load_injected_files(kernel, kernel.bootstrap_context("main", workspace, "main")) == ()
    assert [(f.plugin, f.hook) for f in kernel.plugins.failures] == [("broken", "clawbot_bootstrap_files")]
    assert isinstance(kernel.plugins.failures[0], HookFailure)
