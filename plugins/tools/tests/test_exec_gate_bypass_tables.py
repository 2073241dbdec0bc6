"""Tables of lines that once got past the exec gate, by kind of bypass.

Each kind has a table of lines the gate must not let run unasked in ``allowlist`` mode.
Where running is involved, the line goes to :func:`decide`; if (wrongly) allowed, it is run
for real with ``/bin/sh`` and with ``bash`` in a tmp workspace, and the test checks that no
payload ran (no ``pwned`` file, nothing written outside the workspace) and that the secret
outside the workspace was not printed. Some rows also go through the real ``exec`` tool
(without a chat, so a line that asks cannot run). Before the fixes, every table let
something through.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from clawbot.types import ApprovalTicket
from clawbot_tools.runtime import exec_policy as policy
from clawbot_tools.runtime import safe_bins
from clawbot_tools.runtime.approval_flow import always_covers, pending
from clawbot_tools.runtime.bound_files import Binding
from clawbot_tools.runtime.context import Job
from clawbot_tools.runtime.envscrub import EnvRefused, child_env, extra_env
from clawbot_tools.runtime.exec_policy import Verdict, always_ok
from clawbot_tools.runtime.executables import Program, real_path
from clawbot_tools.runtime.shell_lexer import Op, Word, lex

from .exec_support import (
    SECRET,
    SYSTEM_PATH,
    Harness,
    assert_blocked,
    contained,
    text_of,
    verdict,
)

# --- the world ----------------------------------------------------------------------------


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """tmp/ws (the workspace), tmp/secret.txt (outside it), a home whose profile leaves a trace."""
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "big.txt").write_text("touch pwned\n" * 20000)  # run as commands if sort's compressor is sh
    (ws / "a.txt").write_text("b\na\n")
    (ws / "z.txt").write_text("ZZZ\n")
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    home = tmp_path / "home"
    home.mkdir()
    for profile in (".profile", ".bash_profile", ".bashrc"):
        (home / profile).write_text(f"touch {ws}/pwned-profile\n")
    evil = ws / "evilbin" / "ls"
    evil.parent.mkdir()
    evil.write_text("#!/bin/sh\ntouch pwned\n")
    evil.chmod(evil.stat().st_mode | stat.S_IXUSR)
    return tmp_path


# --- the tables: lines that ran (or printed the secret) before the fixes ------------------

BLOCKED = [
    # a cd skipped by && / || was still followed
    ("cd-after-and-or", "false && cd sub; head ../secret.txt"),
    ("cd-after-and-or", "true || cd sub; head ../secret.txt"),
    ("cd-after-and-or", "false && cd sub; echo x > ../outside.txt"),
    ("cd-after-and-or", "false && cd sub\nhead ../secret.txt"),
    ("cd-after-and-or", "false &&\ncd sub; head ../secret.txt"),
    ("cd-after-and-or", "ls nope && cd sub || head ../secret.txt"),
    ("cd-after-and-or", "cd sub && true & head ../secret.txt"),  # the whole list ran in the background
    # assignments that change how options are parsed
    ("assignment", "POSIXLY_CORRECT=1 head a.txt -n ../secret.txt"),
    ("assignment", "POSIXLY_CORRECT=1 grep -h TOP a.txt -e {world}/secret.txt"),
    ("assignment", "export POSIXLY_CORRECT=1; head a.txt -n ../secret.txt"),
    ("assignment", "env POSIXLY_CORRECT=1 head a.txt -n ../secret.txt"),
    # globs the shell matches differently from Python's glob (. and .., bracket negation)
    ("glob", "head ./.*/secret.txt"),
    ("glob", "head ./.?/secret.txt"),
    ("glob", "grep -r TOPSECRET ./.*"),
    ("glob", "head ./[.][.]/secret.txt"),
    # Unicode digits are no fd number
    ("unicode-digit", "grep -ve ²>/dev/stdout {world}/secret.txt"),
    # bash's $"..." (a translated string)
    ("translated-string", "bash -c 'sort -S 1k $\"--compress-program=sh\" big.txt >/dev/null'"),
    ("translated-string", "bash -c 'head $\"{world}/secret.txt\"'"),
    ("translated-string", "bash -c 'echo x > $\"{world}/outside.txt\"'"),
    # printf's format as an option
    ("printf-format", "bash -c \"X=-v; printf \\$X 'a[\\$(touch pwned)]' hi\""),
    ("printf-format", "bash -c 'printf {-v,PATH} evilbin; ls'"),
    # options of a looked-through shell
    ("shell-option", "bash -k -c 'ls PATH=evilbin'"),
    ("shell-option", "bash -o keyword -c 'ls PATH=evilbin'"),
    ("shell-option", "sh -l -c true"),
    ("shell-option", "bash -l -c true"),
    ("shell-option", "bash --login -c true"),
    ("shell-option", "bash -i -c true"),
    ("shell-option", "bash --rcfile {world}/home/.bashrc -i -c true"),
]


@pytest.mark.parametrize(("kind", "command"), BLOCKED, ids=[f"{k}:{c[:60]}" for k, c in BLOCKED])
def test_bypasses_ask_and_nothing_runs(kind: str, command: str, world: Path) -> None:
    assert_blocked(command, world)


REAL_EXEC = [
    "false && cd sub; head ../secret.txt",
    "POSIXLY_CORRECT=1 head a.txt -n ../secret.txt",
    "head ./.*/secret.txt",
    "bash -c 'sort -S 1k $\"--compress-program=sh\" big.txt >/dev/null'",
    "sh -l -c true",
]


@pytest.mark.parametrize("command", REAL_EXEC)
async def test_bypasses_through_the_exec_tool(command: str, world: Path, gate: Harness) -> None:
    await contained(command, world, gate)


# --- cd and && / || ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "sandboxed", "bare"),
    [
        ("cd sub && ls", "run", "ask"),  # inside a sandbox ls lists what it may; without one the directory is unknown
        ("cd sub && ls && cd .. && ls", "run", "ask"),
        ("cd sub; ls", "run", "ask"),
        ("true && cd sub; ls", "run", "ask"),
        ("cd sub || ls", "run", "ask"),  # whether cd ran or not, the gate does not guess
        ("true && cd sub; echo x > out.txt", "ask", "ask"),  # out.txt cannot be checked for hard links
    ],
)
def test_cd_is_not_followed(command: str, sandboxed: str, bare: str, world: Path) -> None:
    assert verdict(command, world, confined=True).action == sandboxed, command
    assert verdict(command, world).action == bare, command


# --- assignments ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "action"),
    [
        ("TZ=x date", "run"),  # a zone name: looked up under the system's zoneinfo
        ("TZ=:{world}/secret.txt date", "ask"),  # a path: read from there
        ("TZ=../../secret date", "ask"),
        ("LANGUAGE=x ls", "run"),
        ("FOO=1 ls", "ask"),
        ("X=1; echo $X", "ask"),
        ("export TZ=x; date", "run"),
        ("export TZ=/x; date", "ask"),
        ("LC_ALL=/tmp/x ls", "ask"),
        ("LANG=$X ls", "ask"),
        ("LANG=C ls", "run"),
        ("LC_ALL=C.UTF-8 LC_COLLATE=C sort a.txt", "run"),
        ("COLUMNS=80 NO_COLOR=1 TERM=dumb ls", "run"),
        ("env LANG=C ls", "run"),
        ("POSIXLY_CORRECT=1 head a.txt -n 1", "ask"),
    ],
)
def test_only_harmless_variables_may_be_set(command: str, action: str, world: Path) -> None:
    assert verdict(command.replace("{world}", str(world)), world, confined=True).action == action, command


def test_the_model_may_not_set_or_inherit_posixly_correct() -> None:
    for name in ("POSIXLY_CORRECT", "GREP_OPTIONS", "GLOBIGNORE"):
        with pytest.raises(EnvRefused):
            extra_env({name: "1"})
    assert "POSIXLY_CORRECT" not in child_env({"POSIXLY_CORRECT": "1", "PATH": "/bin"}, [], {})
    with pytest.raises(EnvRefused):
        extra_env({"PATH\n": "x"})


# --- globs ----------------------------------------------------------------------------


def test_a_glob_operand_asks_where_the_operand_count_matters(world: Path) -> None:
    before = (world / "ws" / "z.txt").read_text()
    assert_blocked("uniq ./[az].txt", world)
    assert (world / "ws" / "z.txt").read_text() == before
    assert verdict("uniq ./[az].txt", world, confined=True).action == "ask"  # in the sandbox too
    assert verdict("uniq a.txt", world, confined=True).action == "run"
    words = [Word(w, w) for w in ("xxd", "a.txt", "z.txt")]
    assert safe_bins.check("xxd", words, confined=True, cwd_known=True) is not None  # xxd IN OUT writes OUT
    assert safe_bins.check("xxd", words[:2], confined=True, cwd_known=True) is None
    glob_word = [words[0], Word("./*.txt", "./*.txt", glob=True)]
    assert safe_bins.check("xxd", glob_word, confined=True, cwd_known=True) is not None


# --- ASCII only ------------------------------------------------------------------------------


def test_only_ascii_digits_make_an_fd_number() -> None:
    tokens = lex("grep -ve ²>/dev/stdout x").tokens
    assert Word("²", "²") in tokens and Op(">", redirect=True) in tokens
    assert Op("2>", redirect=True) in lex("ls 2>/dev/null").tokens


@pytest.mark.parametrize(
    "command",
    [
        "head a.txt\x0b../secret.txt",
        "ls\x00",
        "ls\r",
        "echo \x1b[31m",
        "ls {PATH}>/dev/null",
        "nice -٣ ls",
    ],
)
def test_control_characters_and_odd_digits_ask(command: str, world: Path) -> None:
    assert verdict(command, world).action == "ask", command


# --- $ forms and printf ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "action"),
    [
        ('echo $"x"', "ask"),
        ('echo x > $"out.txt"', "ask"),
        ("echo $/", "ask"),
        ("printf $X 'a[$(touch pwned)]' hi", "ask"),
        ("printf $X PS4 '$(touch pwned)'", "ask"),
        ("printf -v X hi", "ask"),
        ("printf %s -v", "ask"),
        ("printf -- -x", "run"),
        ("printf '%s\\n' $HOME", "run"),
        ('echo $HOME ${USER} $? "a$" b$', "run"),
        ("echo {-n,x}", "run"),
    ],
)
def test_dollar_forms_and_printf_formats(command: str, action: str, world: Path) -> None:
    assert verdict(command, world).action == action, command


# --- /proc is never resolved in clawbot's own process ---------------------------------------


PROC = [
    "cd {world}; head /proc/self/cwd/secret.txt",
    "cd {world}; grep -h TOP /proc/self/cwd/secret.txt",
    "cd {world}; echo x > /proc/self/cwd/outside.txt",
    "cd {world}; head {world}/ws/plink/secret.txt",
    "cd {world}; head ./ws/p*/secret.txt",
    "cd /proc/self/cwd && head ../secret.txt",
    "/proc/self/cwd/evilbin/ls",
    "head /dev/fd/../cwd/secret.txt",
]


@pytest.mark.parametrize("command", PROC)
def test_proc_links_are_never_followed_in_clawbots_process(command: str, world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (world / "ws" / "plink").symlink_to("/proc/self/cwd")
    monkeypatch.chdir(world / "ws")  # where clawbot's /proc/self/cwd points: inside the workspace
    assert_blocked(command, world)


def test_real_path_refuses_proc_and_loops(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "fd").symlink_to("/dev/fd")
    (tmp_path / "dir").mkdir()
    (tmp_path / "up").symlink_to("dir/..")
    assert real_path("/proc/self/cwd") is None
    assert real_path("/dev/stdin") is None
    assert real_path(str(tmp_path / "loop" / "x")) is None
    assert real_path(str(tmp_path / "fd" / "0")) is None
    assert real_path(str(tmp_path / "up" / "dir")) == os.path.realpath(tmp_path / "dir")
    assert real_path(str(tmp_path / "missing" / "x")) == os.path.realpath(tmp_path) + "/missing/x"
    assert real_path(str(tmp_path / "missing" / ".." / "x")) is None


# --- allow always ---------------------------------------------------------------------------

LAUNCHERS = (
    "taskset setarch prlimit chrt ionice unshare nsenter setsid flock watch script expect sqlite3 mysql psql gcc g++ "
    "cc c++ clang clang-17 ld openssl ssh-keygen ssh-agent gpg less more man vi vim nvim emacs nano dpkg apt apt-get rpm "
    "yum dnf pacman brew systemctl service crontab at batch docker podman kubectl sudoedit strace ltrace gdb valgrind "
    "perf su"
).split()


@pytest.mark.parametrize("name", LAUNCHERS)
def test_programs_that_run_other_programs_are_never_remembered_as_programs(name: str) -> None:
    assert not always_ok(Program(f"/usr/bin/{name}", name))


def test_a_fake_launcher_is_remembered_as_its_exact_command_and_harmless_programs_as_programs(world: Path) -> None:
    fake_bin = world / "fake-bin"
    fake_bin.mkdir()
    for name in ("taskset", "shuf2"):
        (fake_bin / name).write_text("#!/bin/sh\n")
        (fake_bin / name).chmod(0o755)
    path_value = f"{fake_bin}{os.pathsep}{SYSTEM_PATH}"
    found = verdict("taskset 1 ls", world, path_value=path_value, confined=True)
    assert found.action == "ask" and found.always == "command"
    found = verdict("shuf2 a.txt", world, path_value=path_value, confined=True)
    assert found.action == "ask" and found.always == "command"  # unknown programs: the exact command only
    for name in ("shuf", "sha256sum", "touch"):
        assert always_ok(Program(f"/usr/bin/{name}", name)), name


def test_the_notice_says_allow_always_allows_any_arguments() -> None:
    ticket = ApprovalTicket("ab12cd", datetime.now(UTC) + timedelta(minutes=30), "/approve ab12cd allow-once")
    job = Job("touch x", "/ws", {}, 60.0, "agent:main:x", "main")
    verdict_ = Verdict("ask", ("/usr/bin/touch is not in the exec allowlist",), always="programs", programs=(Program("/usr/bin/touch", "touch"),))
    text = text_of(pending(ticket, job, verdict_, allow_always=True, covers=always_covers(verdict_, "bwrap", Binding())))
    assert "/approve ab12cd allow-always" in text
    assert "/usr/bin/touch with any arguments, inside the sandbox (bwrap) as above, without network run for this agent without asking" in text


# --- a budget of files per decision ----------------------------------------------------------


def test_many_globs_over_many_files_are_decided_quickly(world: Path) -> None:
    """A child process, so a slow check fails the test instead of hanging it."""
    many = world / "ws" / "many"
    many.mkdir()
    for i in range(1500):
        (many / f"f{i}").touch()
    command = "ls" + " ./many/*" * 880  # 7,922 characters
    script = textwrap.dedent(
        """
        import json, os, sys, time
        from clawbot_tools.runtime.config import ExecSettings
        from clawbot_tools.runtime.exec_policy import PolicyInput, decide
        ws, command = sys.argv[1], sys.argv[2]
        given = PolicyInput(settings=ExecSettings(), cwd=ws, workspace=ws, path_value=os.environ["PATH"], home=None)
        start = time.perf_counter()
        found = decide(command, given)
        print(json.dumps({"seconds": time.perf_counter() - start, "action": found.action, "reasons": found.reasons}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, os.path.realpath(world / "ws"), command],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["seconds"] < 3.0, report
    assert report["action"] == "ask" and "glob" in report["reasons"][0], report  # without a sandbox globs ask
    assert verdict("ls ./many/*", world, confined=True).action == "run"  # inside one the shell expands them


# --- no exception escapes decide() -----------------------------------------------------------


@pytest.mark.parametrize("command", ["echo > \ud800", "head \udcff", "ls \ud83d"])
@pytest.mark.parametrize("mode", ["allowlist", "full"])
def test_lone_surrogates_ask(command: str, mode: str, world: Path) -> None:
    found = verdict(command, world, security=mode)
    assert found.action == "ask" and "not valid Unicode" in found.reasons[0]


def test_any_error_in_the_checks_asks(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any) -> None:
        raise ValueError("boom")

    monkeypatch.setattr(policy, "_redirect_reason", broken)  # used to raise out of decide()
    found = verdict("ls > out.txt", world)
    assert found.action == "ask" and found.reasons == ("cannot be checked: the command could not be analysed",)
    monkeypatch.setattr(policy, "_allowlist_reasons", broken)
    assert verdict("ls", world).action == "ask"
