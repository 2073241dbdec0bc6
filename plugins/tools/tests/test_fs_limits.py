"""Every file tool bounds its own time and memory: a worker thread cannot be killed on timeout."""

from __future__ import annotations

import os
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from clawbot import TextBlock, ToolCall, ToolResult
from clawbot_tools.config import ToolsSettings
from clawbot_tools.fs import grep as grep_module
from clawbot_tools.fs import read as read_module
from clawbot_tools.fs import search as search_module
from clawbot_tools.fs import tools


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


def run(ws: Path, name: str, **arguments: Any) -> ToolResult:
    by_name = {tool.name: tool for tool in tools(ToolsSettings())}
    result = by_name[name].handler(ToolCall("c1", name, arguments, "main", "agent:main:test", ws))
    assert isinstance(result, ToolResult)
    return result


#: What the timed cases assert: each guarded input would run for minutes or forever without its
#: guard (exponential backtracking, a huge compile), so only a hang fails: speed is a matter
#: for bench/ (bench/tools.py times grep), never for a test on a busy machine.
HANG = 60.0


def timed(ws: Path, name: str, **arguments: Any) -> tuple[ToolResult, float]:
    start = time.monotonic()
    result = run(ws, name, **arguments)
    return result, time.monotonic() - start


def text_of(result: ToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextBlock))


# --- grep: catastrophic patterns -----------------------------------------------------------


def test_grep_nested_quantifier_on_a_near_miss_line_is_fast(ws: Path) -> None:
    (ws / "a.txt").write_text("a" * 30 + "b\n")
    result, _ = timed(ws, "grep", pattern="(a+)+$")
    assert not result.is_error and result.details["matches"] == 0  # answered, not stopped by the pattern timeout


def test_grep_catastrophic_pattern_stops_with_an_error_and_keeps_earlier_matches(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "PATTERN_TIMEOUT_S", 0.3)
    (ws / "a_first.txt").write_text("aaaa\n")  # searched first: matches quickly
    (ws / "b_slow.txt").write_text("x\n" + "a" * 60 + "b\n")
    result, seconds = timed(ws, "grep", pattern="(a|aa)+$")
    text = text_of(result)
    assert seconds < HANG
    assert result.is_error and "the pattern took too long" in text and "simplify it" in text
    assert "b_slow.txt:2" in text  # says where
    assert "a_first.txt:1: aaaa" in text and result.details["matches"] == 1


def test_grep_whole_call_has_a_time_budget(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grep_module, "TIME_BUDGET_S", 0.0)
    (ws / "a.txt").write_text("hit\n")
    result = run(ws, "grep", pattern="hit")
    assert not result.is_error and "stopped after 0 s" in text_of(result) and result.details["truncated"] is True


def test_grep_refuses_huge_counted_repeats_before_compiling(ws: Path) -> None:
    (ws / "a.txt").write_text("x\n")
    result, seconds = timed(ws, "grep", pattern="(?:(?:a{1000}){1000}){1000}")
    assert seconds < HANG and result.is_error and "repeats too much" in text_of(result)
    assert not run(ws, "grep", pattern=r"\w{0,200}x").is_error  # ordinary counts still work


def test_grep_searches_only_the_start_of_a_giant_line_and_says_so(ws: Path) -> None:
    (ws / "min.js").write_text("(.)" + "x" * (search_module.MAX_SEARCH_CHARS + 10) + "needle\n")
    result, seconds = timed(ws, "grep", pattern="(.)*needle")
    assert seconds < HANG and not result.is_error
    assert "searched only that far" in text_of(result) and result.details["matches"] == 0


# --- globs ----------------------------------------------------------------------------------


def test_find_many_star_glob_is_fast(ws: Path) -> None:
    (ws / ("a" * 60)).write_text("")
    result, seconds = timed(ws, "find", pattern="*a*a*a*a*a*a*a*a*a*b")
    assert seconds < HANG and not result.is_error and "No paths match" in text_of(result)


def test_find_repeated_double_star_glob_is_fast(ws: Path) -> None:
    deep = ws.joinpath(*["d"] * 60)
    deep.mkdir(parents=True)
    (deep / "x").write_text("")
    (deep / "y").write_text("")
    result, seconds = timed(ws, "find", pattern="**/**/**/**/**/**/**/**/x")
    assert seconds < HANG
    assert text_of(result).splitlines() == ["d/" * 60 + "x"]


def test_grep_glob_with_many_stars_is_fast(ws: Path) -> None:
    (ws / ("a" * 60)).write_text("hit\n")
    result, seconds = timed(ws, "grep", pattern="hit", glob="*a*a*a*a*a*a*a*a*a*b")
    assert seconds < HANG and result.details["matches"] == 0


@pytest.mark.parametrize("tool", ["find", "grep"])
def test_bad_glob_range_is_a_clean_error(ws: Path, tool: str) -> None:
    arguments = {"pattern": "[z-a]"} if tool == "find" else {"pattern": "x", "glob": "[z-a].py"}
    result = run(ws, tool, **arguments)
    assert result.is_error and "bad character range [z-a]" in text_of(result)


# --- read: bounded memory -------------------------------------------------------------------


def test_read_of_a_huge_single_line_stays_small(ws: Path) -> None:
    size = 50 * 1024 * 1024
    with open(ws / "one.txt", "wb") as handle:
        handle.write(b"z" * size)
    tracemalloc.start()
    try:
        start = time.monotonic()
        result = run(ws, "read", path="one.txt")
        seconds = time.monotonic() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    text = text_of(result)
    assert not result.is_error and seconds < HANG
    assert peak < 5 * 1024 * 1024  # a tenth of the file, and far above the ~1 MB actually used
    assert len(text) < read_module.MAX_CHARS + 200 and text.startswith("z" * 1000)
    assert "output capped at 50000 characters" in text and result.details["total_lines"] == 1
    assert "more lines" not in text  # one line: nothing to continue with


def test_read_counts_lines_only_so_far_and_says_at_least(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read_module, "MAX_SCAN_BYTES", 64 * 1024)
    (ws / "many.txt").write_text("".join(f"{i:07d}\n" for i in range(100_000)))  # 800 kB
    result = run(ws, "read", path="many.txt", limit=10)
    text = text_of(result)
    assert text.startswith("0000000\n") and "at least" in text and "call read with offset=11" in text
    assert result.details["total_exact"] is False and result.details["total_lines"] < 100_000
    far = run(ws, "read", path="many.txt", offset=90_000)
    assert far.is_error and "as far as read looks" in text_of(far)


def test_read_slices_a_long_file_exactly(ws: Path) -> None:
    (ws / "f.txt").write_text("".join(f"{i}\n" for i in range(1, 200_001)))
    result = run(ws, "read", path="f.txt", offset=150_000, limit=2)
    assert text_of(result) == "150000\n150001\n[... 49999 more lines: call read with offset=150002]"
    assert result.details["total_lines"] == 200_000 and result.details["total_exact"] is True


def test_read_cut_line_does_not_end_in_a_broken_character(ws: Path) -> None:
    (ws / "zh.txt").write_text("你" * 60_000, encoding="utf-8")
    text = text_of(run(ws, "read", path="zh.txt"))
    assert text.startswith("你" * 100) and "\ufffd" not in text


# --- write ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["newdir/", "newdir/.", "a/b/"])
def test_write_to_a_directory_spelling_is_refused(ws: Path, path: str) -> None:
    result = run(ws, "write", path=path, content="x")
    assert result.is_error and "names a directory" in text_of(result)
    assert list(ws.iterdir()) == []


@pytest.mark.parametrize(("before", "after"), [(0o4755, 0o755), (0o2775, 0o775), (0o6711, 0o711)])
def test_write_drops_setuid_and_setgid(ws: Path, before: int, after: int) -> None:
    target = ws / "tool"
    target.write_text("old")
    os.chmod(target, before)
    assert (target.stat().st_mode & 0o7777) == before
    for tool, arguments in (("write", {"content": "new"}), ("edit", {"old_text": "new", "new_text": "newer"})):
        os.chmod(target, before)
        assert not run(ws, tool, path="tool", **arguments).is_error
        assert (target.stat().st_mode & 0o7777) == after


def test_write_does_not_touch_the_process_umask(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # tools run in worker threads: os.umask(0) would briefly loosen every other thread's files
    mask = os.umask(0o022)
    os.umask(mask)

    def no_umask(mask: int) -> int:
        raise AssertionError("os.umask called")

    monkeypatch.setattr(os, "umask", no_umask)
    result = run(ws, "write", path="sub/new.txt", content="x")
    assert not result.is_error and (ws / "sub/new.txt").read_text() == "x"
    assert (ws / "sub/new.txt").stat().st_mode & 0o777 == 0o644 & ~mask  # the umask still applies


def test_edit_refuses_files_too_large_to_hold(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from clawbot_tools.fs import edit as edit_module

    monkeypatch.setattr(edit_module, "MAX_EDIT_BYTES", 1000)
    (ws / "big.txt").write_text("a" * 2000)
    result = run(ws, "edit", path="big.txt", old_text="a", new_text="b")
    assert result.is_error and "too large to edit" in text_of(result)
