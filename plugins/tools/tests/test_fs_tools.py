"""The file tools (read, write, edit, ls, find, grep) on real files under tmp_path; apply_patch has its own file."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import clawbot_tools.plugin
import pytest
from clawbot import ImageBlock, TextBlock, ToolCall, ToolResult
from clawbot.testing import schema_problem
from clawbot_tools.config import ToolsSettings
from clawbot_tools.fs import read as read_module
from clawbot_tools.fs import tools

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 20
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 20
GIF = b"GIF89a" + b"\x00" * 20
WEBP = b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"\x00" * 20


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


def run(ws: Path, name: str, settings: ToolsSettings | None = None, **arguments: Any) -> ToolResult:
    by_name = {tool.name: tool for tool in tools(settings or ToolsSettings())}
    call = ToolCall("c1", name, arguments, "main", "agent:main:test", ws)
    result = by_name[name].handler(call)
    assert isinstance(result, ToolResult)
    return result


def text_of(result: ToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextBlock))


# --- the tool declarations ---------------------------------------------------------------


def test_seven_tools_with_strict_valid_schemas() -> None:
    found = tools(ToolsSettings())
    assert [t.name for t in found] == ["read", "write", "edit", "apply_patch", "ls", "find", "grep"]
    for tool in found:
        assert tool.group == "fs"
        assert tool.summary and "\n" not in tool.summary
        assert tool.parameters["type"] == "object"
        assert tool.parameters["additionalProperties"] is False
        assert set(tool.parameters["required"]) <= set(tool.parameters["properties"])
        assert schema_problem(tool.parameters) is None
    required = {t.name: t.parameters["required"] for t in found}
    assert required == {
        "read": ["path"],
        "write": ["path", "content"],
        "edit": ["path", "old_text", "new_text"],
        "apply_patch": ["input"],
        "ls": [],
        "find": ["pattern"],
        "grep": ["pattern"],
    }


async def test_read_and_write_through_a_kernel(make_kernel: Any, ws: Path) -> None:
    kernel = await make_kernel(plugins={"tools": clawbot_tools.plugin})
    call = ToolCall("c1", "write", {"path": "notes/a.txt", "content": "hello\n"}, "main", "s", ws)
    result = kernel.tools["write"].handler(call)
    assert not result.is_error and (ws / "notes" / "a.txt").read_text() == "hello\n"
    result = kernel.tools["read"].handler(ToolCall("c2", "read", {"path": "notes/a.txt"}, "main", "s", ws))
    assert text_of(result) == "hello\n"
    assert kernel.tools["grep"].group == "fs"


# --- read --------------------------------------------------------------------------------


def test_read_whole_small_file(ws: Path) -> None:
    (ws / "a.txt").write_text("one\ntwo\nthree\n")
    result = run(ws, "read", path="a.txt")
    assert not result.is_error
    assert text_of(result) == "one\ntwo\nthree\n"
    assert result.details["path"] == "a.txt" and result.details["total_lines"] == 3
    assert result.details["truncated"] is False


def test_read_slice_says_how_to_continue(ws: Path) -> None:
    (ws / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 321)))
    result = run(ws, "read", path="big.txt", offset=101, limit=100)
    text = text_of(result)
    assert text.startswith("line 101\n") and "line 200\n" in text and "line 201" not in text.split("[...")[0]
    assert text.endswith("[... 120 more lines: call read with offset=201]")
    assert result.details["lines"] == 100 and result.details["total_lines"] == 320


def test_read_last_slice_has_no_note(ws: Path) -> None:
    (ws / "f.txt").write_text("a\nb\nc")
    result = run(ws, "read", path="f.txt", offset=2)
    assert text_of(result) == "b\nc"


def test_read_offset_past_end_and_empty_file(ws: Path) -> None:
    (ws / "f.txt").write_text("a\nb\n")
    assert run(ws, "read", path="f.txt", offset=9).is_error
    assert "past the end" in text_of(run(ws, "read", path="f.txt", offset=9))
    (ws / "empty.txt").write_text("")
    result = run(ws, "read", path="empty.txt")
    assert not result.is_error and "empty" in text_of(result)


def test_read_caps_output_at_50000_chars(ws: Path) -> None:
    (ws / "wide.txt").write_text(("x" * 999 + "\n") * 200)
    result = run(ws, "read", path="wide.txt")
    text = text_of(result)
    assert len(text) < read_module.MAX_CHARS + 200
    assert "output capped at 50000 characters" in text and "call read with offset=51" in text
    (ws / "oneline.txt").write_text("y" * 80_000)
    text = text_of(run(ws, "read", path="oneline.txt"))
    assert len(text) < read_module.MAX_CHARS + 200 and "capped" in text


@pytest.mark.parametrize(("data", "media_type"), [(PNG, "image/png"), (JPEG, "image/jpeg"), (GIF, "image/gif"), (WEBP, "image/webp")])
def test_read_image_by_magic_bytes(ws: Path, data: bytes, media_type: str) -> None:
    (ws / "picture.dat").write_bytes(data)  # the extension does not matter
    result = run(ws, "read", path="picture.dat")
    assert not result.is_error
    images = [b for b in result.content if isinstance(b, ImageBlock)]
    assert len(images) == 1 and images[0].media_type == media_type
    assert base64.b64decode(images[0].data) == data
    assert result.details["media_type"] == media_type and result.details["bytes"] == len(data)


def test_read_refuses_binary(ws: Path) -> None:
    (ws / "prog.bin").write_bytes(b"\x7fELF\x00\x01\x02" * 10)
    result = run(ws, "read", path="prog.bin")
    assert result.is_error and "binary" in text_of(result)


def test_read_errors_for_missing_and_directory(ws: Path) -> None:
    result = run(ws, "read", path="nope.txt")
    assert result.is_error and "nope.txt not found" in text_of(result)
    (ws / "d").mkdir()
    result = run(ws, "read", path="d")
    assert result.is_error and "directory" in text_of(result)


def test_read_refuses_a_fifo(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    result = run(ws, "read", path="pipe")
    assert result.is_error and "not a regular file" in text_of(result)


def test_read_invalid_utf8_is_replaced_not_fatal(ws: Path) -> None:
    (ws / "latin.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    result = run(ws, "read", path="latin.txt")
    assert not result.is_error and text_of(result).startswith("caf")


def test_read_chinese_text(ws: Path) -> None:
    (ws / "zh.md").write_text("你好，世界\n第二行\n", encoding="utf-8")
    assert text_of(run(ws, "read", path="zh.md", limit=1)).startswith("你好，世界\n[... 1 more lines")


# --- write -------------------------------------------------------------------------------


def test_write_creates_file_and_parents(ws: Path) -> None:
    content = "import os\nprint(os.listdir('.'))\n"
    result = run(ws, "write", path="scripts/tools/list_files.py", content=content)
    assert not result.is_error
    assert text_of(result) == f"Wrote scripts/tools/list_files.py ({len(content.encode())} bytes)"
    assert (ws / "scripts/tools/list_files.py").read_text() == content
    assert result.details == {"path": "scripts/tools/list_files.py", "bytes": len(content), "created": True, "mode": result.details["mode"]}


def test_write_overwrites_and_keeps_mode(ws: Path) -> None:
    target = ws / "run.sh"
    target.write_text("old")
    target.chmod(0o755)
    result = run(ws, "write", path="run.sh", content="#!/bin/sh\necho hi\n")
    assert text_of(result).startswith("Overwrote run.sh")
    assert target.read_text() == "#!/bin/sh\necho hi\n"
    assert (target.stat().st_mode & 0o777) == 0o755
    assert sorted(p.name for p in ws.iterdir()) == ["run.sh"]  # no temp file left


def test_write_utf8_byte_count(ws: Path) -> None:
    result = run(ws, "write", path="zh.txt", content="你好")
    assert result.details["bytes"] == 6 and (ws / "zh.txt").read_bytes() == "你好".encode()


def test_write_to_directory_is_error(ws: Path) -> None:
    (ws / "d").mkdir()
    result = run(ws, "write", path="d", content="x")
    assert result.is_error and "directory" in text_of(result)


def test_write_through_inside_symlink_keeps_the_link(ws: Path) -> None:
    (ws / "real.txt").write_text("a")
    (ws / "alias.txt").symlink_to("real.txt")
    assert not run(ws, "write", path="alias.txt", content="b").is_error
    assert (ws / "alias.txt").is_symlink() and (ws / "real.txt").read_text() == "b"


def test_failed_write_leaves_original_and_no_temp(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = ws / "keep.txt"
    target.write_text("original")

    def broken_replace(src: Any, dst: Any, **dir_fds: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    result = run(ws, "write", path="keep.txt", content="new content")
    assert result.is_error and "No space left on device" in text_of(result)
    assert target.read_text() == "original"
    assert sorted(p.name for p in ws.iterdir()) == ["keep.txt"]
    result = run(ws, "edit", path="keep.txt", old_text="original", new_text="changed")
    assert result.is_error and target.read_text() == "original"
    assert sorted(p.name for p in ws.iterdir()) == ["keep.txt"]


def test_failed_fsync_leaves_no_temp(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    result = run(ws, "write", path="new.txt", content="x")
    assert result.is_error
    assert list(ws.iterdir()) == []


# --- edit --------------------------------------------------------------------------------


def test_edit_replaces_unique_text(ws: Path) -> None:
    target = ws / "app.py"
    target.write_text("def f():\n    return 1\n\ndef g():\n    return 2\n")
    target.chmod(0o600)
    result = run(ws, "edit", path="app.py", old_text="    return 2", new_text="    return 3")
    assert not result.is_error
    assert target.read_text().endswith("return 3\n")
    assert result.details["matches"] == 1 and result.details["line"] == 5
    assert (target.stat().st_mode & 0o777) == 0o600


def test_edit_not_found_and_ambiguous(ws: Path) -> None:
    (ws / "x.txt").write_text("a = 1\na = 1\na = 1\n")
    result = run(ws, "edit", path="x.txt", old_text="b = 2", new_text="c")
    assert result.is_error
    assert "old_text not found in x.txt; read the file and copy the exact text" in text_of(result)
    result = run(ws, "edit", path="x.txt", old_text="a = 1", new_text="a = 2")
    assert result.is_error and "found 3 times" in text_of(result) and "include more context" in text_of(result)
    assert result.details["matches"] == 3
    assert (ws / "x.txt").read_text() == "a = 1\na = 1\na = 1\n"


def test_edit_other_errors(ws: Path) -> None:
    assert "not found" in text_of(run(ws, "edit", path="missing.txt", old_text="a", new_text="b"))
    (ws / "x.txt").write_text("abc")
    assert "empty" in text_of(run(ws, "edit", path="x.txt", old_text="", new_text="b"))
    assert "identical" in text_of(run(ws, "edit", path="x.txt", old_text="abc", new_text="abc"))
    (ws / "bin.dat").write_bytes(b"\xff\xfe\x00abc")
    assert "not UTF-8" in text_of(run(ws, "edit", path="bin.dat", old_text="abc", new_text="d"))


# --- ls ----------------------------------------------------------------------------------


def test_ls_sorted_with_dirs_and_sizes(ws: Path) -> None:
    (ws / "b.txt").write_text("12345")
    (ws / "a_dir").mkdir()
    (ws / "c.py").write_text("")
    (ws / "link").symlink_to("b.txt")
    result = run(ws, "ls")
    assert text_of(result).splitlines() == ["a_dir/", "b.txt  (5 bytes)", "c.py  (0 bytes)", "link -> b.txt"]
    assert result.details["entries"] == 4 and result.details["directories"] == 1
    sub = run(ws, "ls", path="a_dir")
    assert not sub.is_error and "empty" in text_of(sub)


def test_ls_caps_entries(ws: Path) -> None:
    for i in range(520):
        (ws / f"f{i:04d}").write_text("")
    result = run(ws, "ls", path=".")
    assert "20 more entries" in text_of(result) and result.details["truncated"] is True


def test_ls_errors(ws: Path) -> None:
    assert "not found" in text_of(run(ws, "ls", path="nope"))
    (ws / "f").write_text("")
    assert "not a directory" in text_of(run(ws, "ls", path="f"))


# --- find --------------------------------------------------------------------------------


def make_tree(ws: Path) -> None:
    for rel in ["a.py", "src/b.py", "src/pkg/c.py", "src/pkg/d.txt", "docs/readme.md", ".git/config.py"]:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(f"# {rel}\nTODO fix {rel}\n")


def test_find_recursive_glob(ws: Path) -> None:
    make_tree(ws)
    result = run(ws, "find", pattern="**/*.py")
    assert text_of(result).splitlines() == ["a.py", "src/b.py", "src/pkg/c.py"]
    assert result.details["matches"] == 3


def test_find_top_level_and_path(ws: Path) -> None:
    make_tree(ws)
    assert text_of(run(ws, "find", pattern="*.py")).splitlines() == ["a.py"]
    assert text_of(run(ws, "find", pattern="*.py", path="src/pkg")).splitlines() == ["src/pkg/c.py"]
    assert text_of(run(ws, "find", pattern="src/*")).splitlines() == ["src/b.py", "src/pkg/"]
    assert text_of(run(ws, "find", pattern="**/[cd].*")).splitlines() == ["src/pkg/c.py", "src/pkg/d.txt"]


def test_find_caps_and_no_match(ws: Path) -> None:
    for i in range(30):
        (ws / f"f{i:02d}.log").write_text("")
    result = run(ws, "find", pattern="*.log", max_results=10)
    assert len(text_of(result).splitlines()) == 11 and "20 more matches" in text_of(result)
    result = run(ws, "find", pattern="*.nothing")
    assert not result.is_error and "No paths match" in text_of(result)


# --- grep --------------------------------------------------------------------------------


def test_grep_finds_lines(ws: Path) -> None:
    make_tree(ws)
    result = run(ws, "grep", pattern=r"TODO fix src/\w+/c")
    assert text_of(result) == "src/pkg/c.py:2: TODO fix src/pkg/c.py"
    assert result.details["matches"] == 1


def test_grep_glob_case_and_path(ws: Path) -> None:
    make_tree(ws)
    lines = text_of(run(ws, "grep", pattern="todo", ignore_case=True, glob="*.py")).splitlines()
    assert lines == ["a.py:2: TODO fix a.py", "src/b.py:2: TODO fix src/b.py", "src/pkg/c.py:2: TODO fix src/pkg/c.py"]
    assert "No matches" in text_of(run(ws, "grep", pattern="todo", glob="*.py"))
    lines = text_of(run(ws, "grep", pattern="TODO", path="src/pkg/d.txt")).splitlines()
    assert lines == ["src/pkg/d.txt:2: TODO fix src/pkg/d.txt"]
    lines = text_of(run(ws, "grep", pattern="TODO", glob="pkg/*.txt", path="src")).splitlines()
    assert lines == ["src/pkg/d.txt:2: TODO fix src/pkg/d.txt"]


def test_grep_skips_binary_and_git(ws: Path) -> None:
    make_tree(ws)
    (ws / "blob.bin").write_bytes(b"TODO\x00\x01")
    result = run(ws, "grep", pattern="TODO")
    text = text_of(result)
    assert "blob.bin" not in text and ".git" not in text
    assert result.details["files_skipped"] >= 1


def test_grep_limits_and_bad_regex(ws: Path) -> None:
    (ws / "many.txt").write_text("hit\n" * 50 + "x" * 1000 + " hit\n")
    result = run(ws, "grep", pattern="hit", max_results=5)
    assert len(text_of(result).splitlines()) == 6 and "stopped at 5 matches" in text_of(result)
    long = text_of(run(ws, "grep", pattern="x+ hit"))
    assert long.endswith("...") and len(long) < 400
    result = run(ws, "grep", pattern="(unclosed")
    assert result.is_error and "invalid regular expression" in text_of(result)
