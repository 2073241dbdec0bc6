"""apply_patch on real files under tmp_path: the format, the matching, and all-or-nothing writes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from clawbot import TextBlock, ToolCall, ToolResult
from clawbot.testing import schema_problem
from clawbot_tools.config import ToolsSettings
from clawbot_tools.fs import tools
from clawbot_tools.fs import transaction as transaction_module


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


def patch(ws: Path, *body: str, settings: ToolsSettings | None = None) -> ToolResult:
    by_name = {tool.name: tool for tool in tools(settings or ToolsSettings())}
    text = "\n".join(("*** Begin Patch", *body, "*** End Patch"))
    result = by_name["apply_patch"].handler(ToolCall("c1", "apply_patch", {"input": text}, "main", "agent:main:test", ws))
    assert isinstance(result, ToolResult)
    return result


def raw_patch(ws: Path, text: str) -> ToolResult:
    by_name = {tool.name: tool for tool in tools(ToolsSettings())}
    return by_name["apply_patch"].handler(ToolCall("c1", "apply_patch", {"input": text}, "main", "agent:main:test", ws))


def text_of(result: ToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextBlock))


def files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def test_declared_like_the_other_file_tools() -> None:
    tool = next(t for t in tools(ToolsSettings()) if t.name == "apply_patch")
    assert tool.group == "fs" and tool.summary and "\n" not in tool.summary
    assert tool.parameters["required"] == ["input"] and schema_problem(tool.parameters) is None
    assert "*** Begin Patch" in tool.description and "*** End Patch" in tool.description


# --- the four operations ----------------------------------------------------------------------


def test_add_update_move_delete_in_one_patch(ws: Path) -> None:
    (ws / "path").mkdir()
    (ws / "path" / "old.py").write_text("def foo():\n    return 1\n")
    (ws / "path" / "gone.py").write_text("bye\n")
    (ws / "path" / "edit.py").write_text("a\nb\nc\n")
    result = patch(
        ws,
        "*** Add File: path/new/deep.py",
        "+line one",
        "+line two",
        "*** Update File: path/old.py",
        "*** Move to: path/renamed.py",
        "@@ def foo():",
        "-    return 1",
        "+    return 2",
        "*** Update File: path/edit.py",
        " a",
        "-b",
        "+B",
        " c",
        "*** Delete File: path/gone.py",
    )
    assert not result.is_error, text_of(result)
    assert text_of(result) == ("Applied patch: A path/new/deep.py, M path/old.py -> path/renamed.py, M path/edit.py, D path/gone.py")
    assert files(ws) == {
        "path/new/deep.py": "line one\nline two\n",
        "path/renamed.py": "def foo():\n    return 2\n",
        "path/edit.py": "a\nB\nc\n",
    }
    assert result.details["files"][1] == {"op": "update", "path": "path/old.py", "moved_to": "path/renamed.py"}


def test_move_keeps_the_mode_and_a_pure_rename_works(ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    result = patch(ws, "*** Update File: run.sh", "*** Move to: bin/run.sh")
    assert not result.is_error, text_of(result)
    assert files(ws) == {"bin/run.sh": "#!/bin/sh\n"}
    assert (ws / "bin" / "run.sh").stat().st_mode & 0o777 == 0o755


def test_update_keeps_mode_and_leaves_no_temp_or_backup(ws: Path) -> None:
    (ws / "a.txt").write_text("x\n")
    (ws / "a.txt").chmod(0o600)
    (ws / "b.txt").write_text("y\n")
    assert not patch(ws, "*** Update File: a.txt", "-x", "+z", "*** Delete File: b.txt").is_error
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt"]
    assert (ws / "a.txt").stat().st_mode & 0o777 == 0o600


# --- locating hunks ---------------------------------------------------------------------------


CODE = """\
class A:
    def run(self):
        x = 1
        return x

class B:
    def run(self):
        x = 1
        return x
"""


def test_multiple_hunks_apply_in_order(ws: Path) -> None:
    (ws / "n.txt").write_text("".join(f"{i}\n" for i in range(1, 21)))
    result = patch(ws, "*** Update File: n.txt", "@@", " 2", "-3", "+three", " 4", "@@", " 17", "-18", "+eighteen", " 19")
    assert not result.is_error, text_of(result)
    lines = (ws / "n.txt").read_text().splitlines()
    assert lines[2] == "three" and lines[17] == "eighteen" and len(lines) == 20


def test_ambiguous_hunk_is_an_error_and_anchor_disambiguates(ws: Path) -> None:
    (ws / "m.py").write_text(CODE)
    result = patch(ws, "*** Update File: m.py", "     def run(self):", "-        x = 1", "+        x = 2")
    assert result.is_error
    assert "matches 2 places (lines 2, 7)" in text_of(result) and "m.py" in text_of(result)
    assert (ws / "m.py").read_text() == CODE
    result = patch(ws, "*** Update File: m.py", "@@ class B:", "     def run(self):", "-        x = 1", "+        x = 2")
    assert not result.is_error, text_of(result)
    assert (ws / "m.py").read_text() == CODE.replace("class B:\n    def run(self):\n        x = 1", "class B:\n    def run(self):\n        x = 2")


def test_stacked_anchors_and_an_unindented_anchor(ws: Path) -> None:
    (ws / "m.py").write_text(CODE)
    result = patch(ws, "*** Update File: m.py", "@@ class B:", "@@ def run(self):", "-        return x", "+        return -x")
    assert not result.is_error, text_of(result)
    assert (ws / "m.py").read_text().endswith("        return -x\n") and "        return x\n" in (ws / "m.py").read_text()


def test_a_hunk_that_does_not_match_names_the_file_and_shows_its_lines(ws: Path) -> None:
    (ws / "m.py").write_text(CODE)
    result = patch(ws, "*** Update File: m.py", "@@", " class C:", "-    pass", "+    x = 1")
    text = text_of(result)
    assert result.is_error and "hunk 1 of m.py (patch line 3)" in text and "not found" in text
    assert "     class C:" in text and "    -    pass" in text
    assert "nothing was changed" in text


def test_trailing_whitespace_differences_are_tolerated(ws: Path) -> None:
    (ws / "w.txt").write_text("keep   \nold\t\nend\n")
    result = patch(ws, "*** Update File: w.txt", " keep", "-old", "+new", " end")
    assert not result.is_error, text_of(result)
    assert (ws / "w.txt").read_text() == "keep   \nnew\nend\n"  # context keeps the file's own spacing


def test_end_of_file_marker_pins_the_hunk(ws: Path) -> None:
    (ws / "e.txt").write_text("x\ny\nx\ny\n")
    result = patch(ws, "*** Update File: e.txt", " x", "-y", "+z", "*** End of File")
    assert not result.is_error, text_of(result)
    assert (ws / "e.txt").read_text() == "x\ny\nx\nz\n"


def test_crlf_files_stay_crlf(ws: Path) -> None:
    (ws / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    assert not patch(ws, "*** Update File: win.txt", " one", "-two", "+2").is_error
    assert (ws / "win.txt").read_bytes() == b"one\r\n2\r\n"


# --- all or nothing ----------------------------------------------------------------------------


def test_a_bad_third_file_leaves_the_first_two_untouched(ws: Path) -> None:
    (ws / "one.txt").write_text("1\n")
    (ws / "two.txt").write_text("2\n")
    (ws / "three.txt").write_text("3\n")
    result = patch(
        ws,
        "*** Update File: one.txt",
        "-1",
        "+one",
        "*** Add File: two_b.txt",
        "+2b",
        "*** Update File: three.txt",
        "-not there",
        "+x",
    )
    assert result.is_error and "three.txt" in text_of(result)
    assert files(ws) == {"one.txt": "1\n", "two.txt": "2\n", "three.txt": "3\n"}


def test_a_failing_write_rolls_back_the_writes_before_it(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "one.txt").write_text("1\n")
    (ws / "gone.txt").write_text("g\n")
    (ws / "three.txt").write_text("3\n")
    real_write = transaction_module.atomic_write

    def failing_on_three(path: Path, data: bytes, **kwargs: Any) -> list[str]:
        if path.name == "three.txt" and data != b"3\n":  # the rollback's own restore must work
            raise OSError(28, "No space left on device")
        return real_write(path, data, **kwargs)

    monkeypatch.setattr(transaction_module, "atomic_write", failing_on_three)
    result = patch(
        ws,
        "*** Update File: one.txt",
        "-1",
        "+one",
        "*** Add File: sub/dir/new.txt",
        "+new",
        "*** Delete File: gone.txt",
        "*** Update File: three.txt",
        "-3",
        "+three",
    )
    text = text_of(result)
    assert result.is_error and "cannot write three.txt: No space left on device; nothing was changed" in text
    assert files(ws) == {"one.txt": "1\n", "gone.txt": "g\n", "three.txt": "3\n"}
    assert sorted(p.name for p in ws.iterdir()) == ["gone.txt", "one.txt", "three.txt"]  # no backups, no sub/


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (["*** Add File: a.txt", "+x"], "cannot add a.txt: it already exists"),
        (["*** Update File: missing.txt", "-x", "+y"], "cannot update missing.txt: not found"),
        (["*** Delete File: missing.txt"], "cannot delete missing.txt: not found"),
        (["*** Update File: a.txt", "*** Move to: b.txt"], "cannot move a.txt to b.txt: it already exists"),
        (["*** Update File: a.txt", "-a", "+b", "*** Delete File: a.txt"], "a.txt is already changed at line 2"),
        (["*** Delete File: d"], "cannot delete d: it is a directory"),
        (["*** Add File: new/", "+x"], "names a directory"),
    ],
)
def test_impossible_changes_are_errors(ws: Path, body: list[str], expected: str) -> None:
    (ws / "a.txt").write_text("a\n")
    (ws / "b.txt").write_text("b\n")
    (ws / "d").mkdir()
    result = patch(ws, *body)
    assert result.is_error and expected in text_of(result)
    assert files(ws) == {"a.txt": "a\n", "b.txt": "b\n"}


# --- confinement --------------------------------------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text("SECRET\n")
    return out


@pytest.mark.parametrize(
    "body",
    [
        ["*** Add File: ../outside/new.txt", "+pwned"],
        ["*** Update File: ../outside/secret.txt", "-SECRET", "+pwned"],
        ["*** Delete File: ../outside/secret.txt"],
        ["*** Add File: {outside}/new.txt", "+pwned"],
        ["*** Update File: link/secret.txt", "-SECRET", "+pwned"],
        ["*** Add File: link/new.txt", "+pwned"],
        ["*** Update File: inside.txt", "*** Move to: ../outside/moved.txt"],
        ["*** Update File: inside.txt", "*** Move to: link/moved.txt"],
        ["*** Delete File: file_link"],
        ["*** Add File: ~/new.txt", "+pwned"],
    ],
    ids=[
        "add-dotdot",
        "update-dotdot",
        "delete-dotdot",
        "add-absolute",
        "update-symlink-dir",
        "add-symlink-dir",
        "move-dotdot",
        "move-symlink-dir",
        "delete-symlink-out",
        "add-tilde",
    ],
)
def test_escapes_are_refused_and_change_nothing(ws: Path, outside: Path, body: list[str]) -> None:
    (ws / "inside.txt").write_text("in\n")
    (ws / "link").symlink_to(outside)
    (ws / "file_link").symlink_to(outside / "secret.txt")
    result = patch(ws, "*** Add File: fine.txt", "+ok", *[line.format(outside=outside) for line in body])
    text = text_of(result)
    line = 5 if any(part.startswith("*** Move to:") for part in body) else 4  # after Begin and the fine.txt section
    assert result.is_error and "outside the workspace" in text and f"line {line}:" in text
    assert "SECRET" not in text
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"] and (outside / "secret.txt").read_text() == "SECRET\n"
    assert sorted(p.name for p in ws.iterdir()) == ["file_link", "inside.txt", "link"]  # fine.txt was not added


def test_deleting_an_inside_symlink_is_refused_not_followed(ws: Path) -> None:
    (ws / "real.txt").write_text("r\n")
    (ws / "alias.txt").symlink_to("real.txt")
    result = patch(ws, "*** Delete File: alias.txt")
    assert result.is_error and "symbolic link" in text_of(result)
    assert (ws / "real.txt").read_text() == "r\n" and (ws / "alias.txt").is_symlink()


def test_hard_linked_files_are_not_patched(ws: Path, outside: Path) -> None:
    os.link(outside / "secret.txt", ws / "hard.txt")
    result = patch(ws, "*** Update File: hard.txt", "-SECRET", "+pwned")
    assert result.is_error and "hard links" in text_of(result)
    assert (outside / "secret.txt").read_text() == "SECRET\n"


# --- malformed patches ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("*** Add File: a.txt\n+x\n*** End Patch", "line 1: the patch must start with '*** Begin Patch'"),
        ("*** Begin Patch\n*** Add File: a.txt\n+x", "line 3: the patch must end with '*** End Patch'"),
        ("*** Begin Patch\n*** Rename File: a.txt\n*** End Patch", "line 2: expected '*** Add File: '"),
        ("*** Begin Patch\n*** Add File: a.txt\n+x\nno prefix\n*** End Patch", "line 4: every line of an Add File must start with '+'"),
        ("*** Begin Patch\n*** Update File: a.txt\n@@\n x\n?y\n*** End Patch", "line 5: expected a hunk line"),
        ("*** Begin Patch\n*** Update File: a.txt\n*** End Patch", "line 2: Update File a.txt has no hunks"),
        ("*** Begin Patch\n*** Add File: \n*** End Patch", "line 2: *** Add File: needs a path"),
        ("*** Begin Patch\n*** End Patch", "line 1: the patch changes no file"),
        ("", "line 1: the patch is empty"),
    ],
    ids=[
        "no-begin",
        "no-end",
        "unknown-header",
        "add-line-without-plus",
        "hunk-line-without-prefix",
        "update-without-hunks",
        "header-without-path",
        "no-files",
        "empty",
    ],
)
def test_malformed_patches_name_the_line(ws: Path, text: str, expected: str) -> None:
    result = raw_patch(ws, text)
    assert result.is_error and expected in text_of(result), text_of(result)
    assert list(ws.iterdir()) == []


def test_input_must_be_a_string(ws: Path) -> None:
    by_name = {tool.name: tool for tool in tools(ToolsSettings())}
    result = by_name["apply_patch"].handler(ToolCall("c1", "apply_patch", {"input": 5}, "main", "s", ws))
    assert result.is_error and "input must be a string" in text_of(result)


def test_blank_lines_and_surrounding_whitespace_are_tolerated(ws: Path) -> None:
    (ws / "a.txt").write_text("a\n\nb\n")
    text = "\n\n*** Begin Patch\n*** Update File: a.txt\n a\n\n-b\n+c\n\n*** Add File: n.txt\n+n\n*** End Patch\n\n"
    result = raw_patch(ws, text)
    assert not result.is_error, text_of(result)
    assert files(ws) == {"a.txt": "a\n\nc\n", "n.txt": "n\n"}
