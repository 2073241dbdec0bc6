"""Which files a command line binds an approval to: a table over the shapes of a line.

Real files in a tmp world (``ws`` the workspace, ``extra`` a ``sandbox_write`` path, ``home``
and ``outside`` beside them); no process runs. The end-to-end behaviour (asking again)
is in test_exec_remembered_files.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from clawbot_tools.runtime.bound_files import bind

from .exec_support import SYSTEM_PATH

# line -> the files it binds (relative to the world), and whether it is unsure
BINDS: dict[str, tuple[set[str], bool]] = {
    "python3 build.py": ({"ws/build.py", "ws/helper.py"}, False),  # and the modules beside it
    "python3 -u build.py": ({"ws/build.py", "ws/helper.py"}, False),
    "python3 < build.py": ({"ws/build.py"}, False),  # code read from its input
    "cat notes.txt > out.txt": ({"ws/notes.txt"}, False),  # what > writes runs nothing
    "grep --file=notes.txt x": ({"ws/notes.txt"}, False),
    "sh -c 'cat notes.txt'": ({"ws/notes.txt"}, False),
    "make": ({"ws/Makefile"}, False),
    "ws-tool": ({"ws/bin/ws-tool"}, False),  # found on PATH inside the workspace
    "./bin/ws-tool notes.txt": ({"ws/bin/ws-tool", "ws/notes.txt"}, False),
    ". ./bin/ws-tool": ({"ws/bin/ws-tool"}, False),
    "python3 {extra}/tool.py": ({"extra/tool.py"}, False),
    "cat ~/secret ../outside/x.txt": (set(), False),  # nothing the agent can rewrite
    "cat linked.txt": ({"ws/linked.txt"}, False),
    "python3 -c 'import helper'": (set(), True),
    "git log": (set(), True),
    "cat $F notes.txt": ({"ws/notes.txt"}, True),  # unsure, and what it names is still bound
    "cd sub && python3 build.py": (set(), True),
    "eval 'python3 build.py'": (set(), True),
    "xargs python3 < notes.txt": ({"ws/notes.txt"}, True),
}


@pytest.fixture
def world(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "bin").mkdir(parents=True)
    (ws / "sub").mkdir()
    for name in ("build.py", "helper.py", "notes.txt", "out.txt", "Makefile"):
        (ws / name).write_text(name)
    (ws / "bin" / "ws-tool").write_text("#!/bin/sh\necho hi\n")
    (ws / "bin" / "ws-tool").chmod(0o755)
    (ws / "linked.txt").symlink_to("notes.txt")
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "tool.py").write_text("print(1)\n")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "secret").write_text("key")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.txt").write_text("x")
    return tmp_path


@pytest.mark.parametrize("line", BINDS)
def test_a_line_binds_the_files_it_runs_or_names_that_the_agent_can_rewrite(world: Path, line: str) -> None:
    ws = os.path.realpath(world / "ws")
    found = bind(
        line.replace("{extra}", str(world / "extra")),
        cwd=ws,
        roots=(ws, os.path.realpath(world / "extra")),
        path_value=f"{ws}/bin{os.pathsep}{SYSTEM_PATH}",
        home=str(world / "home"),
    )
    files, unsure = BINDS[line]
    assert {os.path.relpath(path, os.path.realpath(world)) for path in found.files} == files, found
    assert (found.unsure is not None) is unsure, found


def test_what_a_file_is_now_tells_content_links_and_absence_apart(world: Path) -> None:
    ws = os.path.realpath(world / "ws")

    def state() -> str | None:
        return bind("cat notes.txt", cwd=ws, roots=(ws,), path_value=SYSTEM_PATH, home=None).files.get(f"{ws}/notes.txt")

    first = state()
    assert first is not None and first.startswith("sha256:")
    (world / "ws" / "notes.txt").write_text("other")
    edited = state()
    (world / "ws" / "notes.txt").write_text("notes.txt")
    assert edited != first and state() == first  # the content, not the file's identity
    (world / "ws" / "real.txt").write_text("notes.txt")
    (world / "ws" / "notes.txt").unlink()
    assert state() is None
    (world / "ws" / "notes.txt").symlink_to("real.txt")
    linked = state()
    assert linked is not None and linked.startswith("symlink to ") and linked != first
    (world / "ws" / "notes.txt").unlink()
    os.mkfifo(world / "ws" / "notes.txt")
    assert state() == "special file"  # never opened for reading: it would block
