"""Which files a command line binds an approval to: a table over the shapes of a line.

Real files in a tmp world (``ws`` the workspace, ``extra`` a ``sandbox_write`` path, ``home``
and ``outside`` beside them); no process runs. The end-to-end behaviour (asking again)
is in test_exec_remembered_files.py.
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
import subprocess
import sys
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
    ". ws-tool": ({"ws/bin/ws-tool"}, False),  # sh looks a name without / up on PATH
    "bash ws-tool": ({"ws/bin/ws-tool"}, False),  # bash: the directory, then PATH
    "bash -c ws-tool": ({"ws/bin/ws-tool"}, False),  # run as a program found on PATH
    "env bash ws-tool": ({"ws/bin/ws-tool"}, False),
    "command . ws-tool": ({"ws/bin/ws-tool"}, False),
    "./tools/run.py": ({"ws/tools/run.py", "ws/tools/lib.py", "ws/tools/pkg/__init__.py"}, False),  # #! python: modules beside it
    "./tools/odd": ({"ws/tools/odd"}, True),  # a #! interpreter not known here
    "node build": ({"ws/build.js"}, False),  # what node tries for a name without extension
    "cat sub/../notes.txt": ({"ws/notes.txt"}, False),
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
    (ws / "build.js").write_text("console.log(1)\n")
    (ws / "tools" / "pkg").mkdir(parents=True)
    (ws / "tools" / "run.py").write_text("#!/usr/bin/env python3\nimport lib\n")
    (ws / "tools" / "lib.py").write_text("X = 1\n")
    (ws / "tools" / "pkg" / "__init__.py").write_text("")
    (ws / "tools" / "odd").write_text("#!/usr/bin/awk -f\n{ print }\n")
    for name in ("run.py", "odd"):
        (ws / "tools" / name).chmod(0o755)
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


# --- a change that really runs changes the binding -----------------------------------------
# Each case changes what a command runs, shows that the new code runs, and binds again: the
# binding must differ, or a remembered "always" with grants would run the new code unasked.

NEW_CODE = 'open("PWNED", "w").write("x")\n'


def _bound(ws: str, line: str) -> dict[str, str]:
    return dict(bind(line, cwd=ws, roots=(ws,), path_value=SYSTEM_PATH, home=None).files)


def _unchecked_pyc(source: str, target: Path, tmp: Path) -> None:
    src = tmp / "new_code.py"
    src.write_text(source)
    target.parent.mkdir(parents=True, exist_ok=True)
    py_compile.compile(str(src), cfile=str(target), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)


def _new_code_ran(ws: Path, argv: list[str]) -> bool:
    (ws / "PWNED").unlink(missing_ok=True)
    subprocess.run(argv, cwd=ws, check=False, capture_output=True, env={"PATH": os.path.dirname(sys.executable) + os.pathsep + SYSTEM_PATH})
    return (ws / "PWNED").exists()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "build.py").write_text("#!/usr/bin/env python3\nimport json, helper\nprint(json.dumps(helper.X))\n")
    (ws / "build.py").chmod(0o755)
    (ws / "helper.py").write_text("X = 1\n")
    return ws


def test_a_package_appearing_beside_a_python_script_with_only_bytecode_is_a_change(ws: Path, tmp_path: Path) -> None:
    real = os.path.realpath(ws)
    before = _bound(real, "python3 build.py")
    _unchecked_pyc(NEW_CODE, ws / "json" / "__init__.pyc", tmp_path)  # shadows the stdlib's json
    assert _new_code_ran(ws, [sys.executable, "build.py"])  # the new code runs
    assert _bound(real, "python3 build.py") != before


def test_the_cached_bytecode_of_a_module_beside_the_script_is_bound(ws: Path, tmp_path: Path) -> None:
    real = os.path.realpath(ws)
    before = _bound(real, "python3 build.py")
    _unchecked_pyc(NEW_CODE + "X = 1\n", Path(importlib.util.cache_from_source(str(ws / "helper.py"))), tmp_path)
    assert _new_code_ran(ws, [sys.executable, "build.py"])  # helper.py unchanged, its unchecked .pyc runs
    assert _bound(real, "python3 build.py") != before


def test_a_python_script_run_by_its_own_name_binds_the_modules_beside_it(ws: Path) -> None:
    real = os.path.realpath(ws)
    before = _bound(real, "./build.py")  # ./manage.py runserver is the everyday form
    (ws / "helper.py").write_text(NEW_CODE + "X = 1\n")
    assert _new_code_ran(ws, [sys.executable, "./build.py"])
    assert _bound(real, "./build.py") != before


def test_dot_dot_after_a_folder_is_resolved_as_the_kernel_does(ws: Path) -> None:
    (ws / "a").mkdir()
    (ws / "sub" / "deep").mkdir(parents=True)
    (ws / "build.sh").write_text("echo fine\n")
    (ws / "sub" / "build.sh").write_text("echo x > PWNED\n")
    real = os.path.realpath(ws)
    before = _bound(real, "bash a/../build.sh")
    (ws / "a").rmdir()
    (ws / "a").symlink_to("sub/deep")  # a/.. is now sub for the kernel; normpath still says ws
    assert _new_code_ran(ws, ["bash", "a/../build.sh"])  # sub/build.sh runs
    assert _bound(real, "bash a/../build.sh") != before


def test_a_sourced_name_without_a_slash_binds_the_file_sh_finds_on_path(tmp_path: Path) -> None:
    """/bin/sh (dash) looks up ``. lib.sh`` on PATH only (bash: PATH first, then the
    directory); a PATH folder the agent can write (``sandbox_write = ["~/bin"]``, a
    workspace ``bin``) holds the file that runs, and the binder only looks in cwd."""
    ws, tools = tmp_path / "ws", tmp_path / "home-bin"
    ws.mkdir()
    tools.mkdir()
    (tools / "lib.sh").write_text("echo fine\n")
    roots = (os.path.realpath(ws), os.path.realpath(tools))
    path = f"{tools}{os.pathsep}{SYSTEM_PATH}"

    def now() -> dict[str, str]:
        return dict(bind(". lib.sh", cwd=roots[0], roots=roots, path_value=path, home=None).files)

    before = now()
    (tools / "lib.sh").write_text("echo x > PWNED\n")
    subprocess.run(["/bin/sh", "-c", ". lib.sh"], cwd=ws, env={"PATH": path}, check=True)
    assert (ws / "PWNED").exists()  # the changed file ran
    assert now() != before


def test_node_given_a_name_without_its_extension_binds_the_file_node_runs(tmp_path: Path) -> None:
    """``node build`` runs build.js (then build.mjs/.cjs/.json/.node, build/index.js): the
    binder binds ``build``, which does not exist."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "build.js").write_text('console.log("fine")\n')
    real = os.path.realpath(ws)
    before = _bound(real, "node build")
    (ws / "build.js").write_text('require("fs").writeFileSync("PWNED", "x")\n')
    subprocess.run(["node", "build"], cwd=ws, check=True, capture_output=True)
    assert (ws / "PWNED").exists()
    assert _bound(real, "node build") != before


@pytest.mark.parametrize("line", ["python3 build.py", "./build.py"])
def test_a_python_of_a_virtual_environment_found_on_path_makes_the_line_unsure(ws: Path, line: str) -> None:
    """It loads the packages of the environment, which are not followed (``./build.py``:
    through ``#!/usr/bin/env python3``)."""
    venv = ws / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python3").symlink_to(sys.executable)
    real = os.path.realpath(ws)
    found = bind(line, cwd=real, roots=(real,), path_value=f"{venv}{os.pathsep}{SYSTEM_PATH}", home=None)
    assert found.unsure is not None and "packages" in found.unsure, found
