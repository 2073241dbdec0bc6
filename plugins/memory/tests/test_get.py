"""memory_get: lines of a memory file, and a sentence for anything that is not one."""

from __future__ import annotations

from pathlib import Path

import pytest
from clawbot.types import MemoryPathError

from .memory_support import make_provider, write


@pytest.fixture
def provider(tmp_path: Path):
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "one\ntwo\nthree\nfour\n")
    write(ws / "memory" / "2024-01-01.md", "# Day\r\nwindows line\r\nlast line without newline")
    write(ws / "memory" / "todo.txt", "not markdown\n")
    write(ws / "AGENTS.md", "workspace file, not memory\n")
    write(tmp_path / "outside.md", "secret\n")
    (ws / "memory" / "link.md").symlink_to(tmp_path / "outside.md")
    (ws / "memory" / "bad.md").write_bytes(b"\xff\xfe bad\n")
    write(tmp_path / "vault" / "extra.md", "extra one\nextra two\n")
    made = make_provider(tmp_path / "state", ws, None, extra_paths=[str(tmp_path / "vault")])
    made.root = tmp_path
    return made


@pytest.mark.parametrize(
    ("path", "start", "lines", "expected"),
    [
        ("MEMORY.md", 1, None, (1, 4, 4, "one\ntwo\nthree\nfour")),
        ("MEMORY.md", 2, 2, (2, 3, 4, "two\nthree")),
        ("MEMORY.md", 4, 10, (4, 4, 4, "four")),
        ("MEMORY.md", 9, 3, (9, 8, 4, "")),  # past the end: empty, end before start
        ("MEMORY.md", 0, 1, (1, 1, 4, "one")),  # from 0 means from the start
        ("./memory/../MEMORY.md", 1, 1, (1, 1, 4, "one")),
        ("memory/2024-01-01.md", 2, None, (2, 3, 3, "windows line\nlast line without newline")),
    ],
)
async def test_lines_of_a_memory_file(provider, path: str, start: int, lines: int | None, expected: tuple) -> None:
    got = await provider.get(path, agent_id="main", from_line=start, lines=lines)
    assert (got.start_line, got.end_line, got.total_lines, got.text) == expected
    assert got.path == ("MEMORY.md" if "MEMORY" in path else "memory/2024-01-01.md")


async def test_extra_paths_and_absolute_paths_are_memory_too(provider) -> None:
    extra = provider.root / "vault" / "extra.md"
    got = await provider.get(str(extra), agent_id="main", from_line=2)
    assert (got.path, got.text) == (str(extra), "extra two")
    inside = await provider.get(str(provider.root / "ws" / "MEMORY.md"), agent_id="main", lines=1)
    assert (inside.path, inside.text) == ("MEMORY.md", "one")


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", "no path given: name a memory file such as MEMORY.md or memory/2026-01-20.md"),
        ("AGENTS.md", "AGENTS.md is not a memory file: memory is MEMORY.md, memory/**/*.md and the configured extra paths (Markdown only)"),
        ("memory/todo.txt", "memory/todo.txt is not a memory file"),
        ("../outside.md", "../outside.md is not a memory file"),
        ("/etc/passwd", "/etc/passwd is not a memory file"),
        ("memory/missing.md", "memory/missing.md does not exist"),
        ("memory/link.md", "memory/link.md links outside the workspace and the extra paths, so it is not read"),
        ("memory/bad.md", "memory/bad.md is not UTF-8 text"),
    ],
)
async def test_what_is_not_memory_is_refused_with_a_sentence(provider, path: str, message: str) -> None:
    with pytest.raises(MemoryPathError) as raised:
        await provider.get(path, agent_id="main")
    assert str(raised.value).startswith(message)
