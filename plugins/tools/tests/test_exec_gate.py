"""Lines that once got past the exec gate, and what allow-always may remember.

Each kind of bypass has a table of commands the gate must not let run unasked in ``allowlist``
mode. Where running is involved, the commands go through the real ``exec`` tool with real
subprocesses (without a chat, so a command that asks cannot run) and the test checks that
the payload did not happen: no ``pwned`` file, nothing written outside the workspace, no
secret in the output. Before the fixes, every one of these tables let something through.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from clawbot_tools.runtime.config import ExecSettings
from clawbot_tools.runtime.exec_policy import (
    MAX_ANALYSED_CHARS,
    PolicyInput,
    decide,
)
from clawbot_tools.runtime.executables import Program

from .exec_support import (
    SECRET,
    SYSTEM_PATH,
    Harness,
    contained,
    text_of,
    traces,
    verdict,
)

SESSION = "agent:main:gate"


# --- the world: a workspace, a secret outside it, a fake program -------------------------


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """tmp/ws (the workspace), tmp/secret.txt and tmp/home/.ssh/id_rsa (secrets outside it)."""
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "big.txt").write_text("touch pwned\n" * 20000)  # run as commands if sort's compressor is sh
    (ws / "a.txt").write_text("b\na\n")
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    (tmp_path / "home" / ".ssh").mkdir(parents=True)
    (tmp_path / "home" / ".ssh" / "id_rsa").write_text(SECRET + "\n")
    evil = ws / "evilbin" / "ls"
    evil.parent.mkdir()
    evil.write_text("#!/bin/sh\ntouch pwned\n")
    evil.chmod(evil.stat().st_mode | stat.S_IXUSR)
    (ws / "p.txt").write_text("evilbin\n")
    return tmp_path


# --- commands that must not run unasked, run for real -------------------------------------

RUN_FOR_REAL = [
    # compound commands hid the commands inside them
    ("compound", "for x do touch pwned; done"),
    ("compound", "for x in a; do touch pwned; done"),
    ("compound", "if true; then touch pwned; fi"),
    ("compound", "{ touch pwned; }"),
    ("compound", "(touch pwned)"),
    ("compound", "case a in a) touch pwned;; esac"),
    # where ${...} ends (bash and dash: at the first "}")
    ("parameter-end", "echo ${x-{}; touch pwned}"),
    ("parameter-end", 'echo "${x-{}"; touch pwned}'),
    ("parameter-end", "echo ${x:-`touch pwned`}"),
    # safe-bin options: abbreviations, values from $X, xargs, brace expansion
    ("safe-bin-option", "sort -S 1k --co=sh big.txt"),
    ("safe-bin-option", "sort -S 1k --compress-prog=sh big.txt"),
    ("safe-bin-option", "sort -S1k --compress-program sh big.txt"),
    ("safe-bin-option", "X=--co=sh; sort -S 1k $X big.txt"),
    ("safe-bin-option", "bash -c 'sort -S 1k {--co=sh,big.txt}'"),
    ("safe-bin-option", "sort --outp=../outside.txt a.txt"),
    ("safe-bin-option", "sort -o ../outside.txt a.txt"),
    ("xargs", "echo --co=sh | xargs sort -S 1k big.txt"),
    ("xargs", "echo ../outside.txt | xargs -I{} sort -o {} a.txt"),
    # a wrapper's own options write files
    ("wrapper-option", "time -o ../outside.txt ls"),
    ("wrapper-option", "time --output=../outside.txt ls"),
    ("wrapper-option", "time -ao ../outside.txt ls"),
    # /dev/fd/.. escapes the "harmless device" names
    ("dev-fd", "echo pwned > /dev/fd/../../..{world}/outside.txt"),
    ("dev-fd", "ls >> /dev/fd/../../..{world}/outside-ls.txt"),
    ("dev-fd", "echo pwned 2> /dev/stderr/../../..{world}/outside-err.txt"),
    # where sh (dash) or bash read the line differently from the lexer
    ("sh/bash", "echo hi &> /dev/null touch pwned"),  # sh: "echo hi &" then "> /dev/null touch pwned"
    ("sh/bash", "bash -c 'echo \"$\\\n(touch pwned)\"'"),  # bash joins "$\<newline>(" into "$("
    ("sh/bash", "bash -c 'wc -l <<EOF\nEO\\\nF\ntouch pwned\nEOF\n'"),  # bash ends the here-doc at EO\<newline>F
    # builtins that change which program runs, or evaluate arithmetic (bash)
    ("builtins", "read PATH < p.txt; ls"),
    ("builtins", "bash -c 'printf -v PATH %s evilbin; ls'"),
    ("builtins", "bash -c \"[ -v 'a[\\$(touch pwned)]' ]\""),
    ("builtins", "bash -c \"X='a[\\$(touch pwned)]'; echo \\$[X]\""),
]


@pytest.mark.parametrize(("kind", "command"), RUN_FOR_REAL, ids=[f"{k}:{c[:50]}" for k, c in RUN_FOR_REAL])
async def test_bypasses_ask_and_nothing_runs(kind: str, command: str, world: Path, gate: Harness) -> None:
    result = await gate.call("exec", command=command.replace("{world}", str(world)), timeout=20)
    assert result.details.get("status") == "approval-unavailable", (kind, text_of(result))
    await asyncio.sleep(0.05)
    assert traces(world) == [], (kind, command)


SECRET_READS = [
    ("read-outside", "head ../secret.txt"),
    ("read-outside", "tail -n 1 {world}/secret.txt"),
    ("read-outside", "head ~/.ssh/id_rsa"),
    ("read-outside", "head < ../secret.txt"),
    ("read-outside", "wc -c < ~/.ssh/id_rsa; head 0<../secret.txt"),
    ("read-outside", "grep -r TOP .."),
    ("read-outside", "grep -h TOP ./../secret.txt"),
    ("read-outside", "cd .. && head secret.txt"),
    ("read-outside", "cd missing; head ../secret.txt"),
    ("read-outside", "cd sub & head ../../secret.txt"),
    ("read-outside", "sort -k1 ../secret.txt"),
    ("read-outside", "cut -c1- ../secret.txt"),
    ("read-outside", "date -f ../secret.txt"),
    ("read-outside", "ls .. && head ./../secret.txt"),
    ("read-outside", "head ../s*.txt"),
]


@pytest.mark.parametrize(("kind", "command"), SECRET_READS, ids=[c for _, c in SECRET_READS])
async def test_safe_bins_do_not_read_outside_the_workspace(kind: str, command: str, world: Path, gate: Harness) -> None:
    await contained(command.replace("{world}", str(world)), world, gate)


async def test_a_symlink_in_the_workspace_does_not_lead_a_safe_bin_out(world: Path, gate: Harness) -> None:
    (world / "ws" / "link.txt").symlink_to(world / "secret.txt")
    (world / "ws" / "up").symlink_to(world)
    for command in ("head link.txt", "head ./l*.txt", "wc < link.txt", "head up/secret.txt", "cd up && head secret.txt"):
        await contained(command, world, gate)


# --- the decision tables ------------------------------------------------------------------

ASKS = {
    "compound commands": [
        "while true; do sleep 1 & done",
        "until false; do ls; done",
        "while ls; do ls; done",
        "if ls; then ls; fi",
        "for x in a b; do echo $x; done",
        "for x do ls; done",
        "case x in x) ls;; esac",
        "select x in a; do ls; done",
        "function f { ls; }",
        "f() { ls; }",
        "{ ls; }",
        "(ls)",
        "ls | (ls)",
        "[[ -n x ]] && ls",
        "(( 1 )) && ls",
        "coproc ls",
        "! if ls; then ls; fi",
        "sh -c 'for x do ls; done'",
        "sh '' -c ls",  # crashed the analysis before
    ],
    "expansions": [
        "echo ${x-{}; ls}",
        "echo ${x:-y}",
        "echo ${#x}",
        "echo ${x[0]}",
        "echo $((1+1))",
        "echo $[1+1]",
        "echo $(ls)",
        "echo `ls`",
        "ls <(ls)",
        "ls >(ls)",
        "ls $X",
        "ls ${X}",
        'ls "$X"',
        "X=$Y ls",
        "timeout $T ls",
        "cat <<EOF\n$((X))\nEOF",
        "cat <<EOF\n${a[X]}\nEOF",
        "cat <<EOF\n$[X]\nEOF",
    ],
    "safe-bin options": [
        "sort --co=sh a.txt",
        "sort --compress=sh a.txt",
        "sort --compress-program=sh a.txt",
        "sort --outp=x a.txt",
        "sort --output=x a.txt",
        "sort -o x a.txt",
        "sort -ro x a.txt",
        "sort -T /tmp a.txt",
        "sort --files0-from=a.txt",
        "sort --random-source=../secret.txt a.txt",
        "sort {--co=sh,a.txt}",
        "sort a{.txt,.txt}",
        "sort *",
        "sort *.txt",
        "sort -k $K a.txt",
        "wc --files0-from=a.txt",
        "grep -R x .",
        "grep --exclude-from=../secret.txt x a.txt",
        "grep --fi=../secret.txt a.txt",
        "date -s 2020-01-01",
        "date --set=2020-01-01",
        "date 0101",
        "date -f a.txt",
        "uniq a.txt b.txt",
        "tr [:lower:] [:upper:]",
        "head -n * a.txt",
        "tail --foll=name a.txt",
    ],
    "xargs": [
        "ls | xargs echo",
        "ls | xargs -0 echo",
        "ls | xargs",
        "find . -exec head {} +",
    ],
    "wrapper options": [
        "time -o out.txt ls",
        "time --output=out.txt ls",
        "time --out=out.txt ls",
        "time -a -o out.txt ls",
        "nice --adj=1 ls",
        "timeout --sig=KILL 5 ls",
        "env -C /tmp ls",
        "env -S 'ls' x",
        "stdbuf --out=L ls",
        "nohup --x ls",
        "command -x ls",
        "exec ls",
    ],
    "redirect targets": [
        "ls > /dev/fd/../../../tmp/x",
        "ls > /dev/fd/3",
        "ls > /dev/stdout/../x",
        "ls > /proc/self/fd/1",
        "ls > /dev/null/..",
        "ls >",
        "ls < /dev/fd/../../../etc/passwd",
    ],
    "reads outside the workspace": [
        "cat /proc/$PPID/environ",
        "head /etc/passwd",
        "head ~/.ssh/id_rsa",
        "wc < /etc/shadow",
        "ls /",
        "ls ~",
        "cd / && ls",
        "grep -r x /etc",
        "grep -f /etc/passwd a.txt",
        "grep --file=~/.ssh/id_rsa a.txt",
        "date -r /etc/passwd",
        "head ./../x",
        "head /etc/*",
        "head sub/*/../../../x*",
        "cd -e sub && head a.txt",
        "cd nonexistent; head ../x",
    ],
    "sh/bash differences": [
        "echo hi &> /dev/null ls",
        "ls &>> out.txt",
        "echo $'\\'' ; ls ; echo '",
        "echo $'x'",
        "ls;\\\nls",
        "ls >\\\n> out.txt",
        "wc -l <<EOF\nEO\\\nF\nls\nEOF",
    ],
    "builtins": [
        "read x",
        "read PATH < a.txt",
        "unset PATH",
        "unset x",
        "export PATH=/tmp",
        "EXECIGNORE='*/ls' ls",
        "export LD_PRELOAD=/tmp/x.so",
        "export 'a[1]=x'",
        "export -f f",
        "readonly -a x",
        "declare -x PATH=/tmp",
        "declare x=1",
        "typeset x=1",
        "local x=1",
        "alias ls=rm",
        "source a.txt",
        ". a.txt",
        "eval ls",
        "exec ls",
        "trap ls EXIT",
        "hash -p /bin/rm ls",
        "hash",
        "enable -n echo",
        "builtin echo",
        "let x=1",
        "printf -v PATH %s /tmp",
        "[ -v x ]",
        "test -v 'a[$(ls)]'",
        "test -R x",
        "set -k",
        "set -o posix",
        "wait -p PATH",
        "getopts a PATH",
        "mapfile x < a.txt",
        "pushd sub",
        "shopt -s expand_aliases",
        "command exec ls",
        "command read x",
    ],
}


@pytest.mark.parametrize(
    ("kind", "command"),
    [(kind, command) for kind, rows in ASKS.items() for command in rows],
)
def test_known_bypasses_ask(kind: str, command: str, world: Path) -> None:
    (world / "ws" / "a.txt").write_text("x\n")
    found = verdict(command, world)
    assert found.action == "ask", (kind, command, found)
    assert found.reasons and not found.allow_always


STILL_RUNS = [
    "ls",
    "ls -la sub",
    "ls ./*.txt",
    "ls -- *.txt",
    "wc -l a.txt sub/../a.txt",
    "head -n 5 a.txt",
    "head -5 a.txt",
    "tail -n +2 a.txt",
    "sort -k2,2 -t, -u a.txt",
    "sort -rn a.txt | uniq -c | head -3",
    "cut -d' ' -f1 a.txt",
    "tr 'a-z' 'A-Z' < a.txt",
    "grep -rn x .",
    "grep -r x",
    "grep -e x -e y a.txt",
    "grep --include=*.py -rl x sub",
    "grep -c x < a.txt",
    "date +%Y-%m-%d",
    "date -u -d yesterday +%s",
    "echo $HOME",
    'echo "exit: $?"',
    "printf '%s\\n' $X",
    "echo {a,b} *",
    "time -p ls",
    "nice -n 5 ls",
    "timeout -s KILL 5 ls",
    "env -i LANG=C ls",
    "command -p ls",
    "! ls",
    "cd sub && ls && cd .. && ls",
    "ls > out.txt 2>/dev/null",
    "ls 2>&1 >/dev/stderr",
    "set -eu; ls",
    "set -o pipefail; ls | wc -l",
    "export LC_ALL=C; ls",
    "[ -d sub ] && ls sub",
    "which ls",
    "basename /a/b.txt .txt",
    "pwd",
]


@pytest.mark.parametrize("command", STILL_RUNS)
def test_ordinary_read_only_commands_still_run_in_the_sandbox(command: str, world: Path) -> None:
    found = verdict(command, world, confined=True)
    assert found.action == "run", (command, found)


async def test_the_allowed_commands_really_run(world: Path, gate: Harness) -> None:
    result = await gate.call("exec", command='sort -r ./*.txt | head -n 2 && grep -c a a.txt && echo "$HOME"')
    assert result.details.get("status") == "exited", text_of(result)
    assert text_of(result).startswith(f"touch pwned\ntouch pwned\n1\n{world / 'home'}\n")


def test_a_user_added_safe_bin_runs_only_without_options_and_with_one_operand(world: Path) -> None:
    safe = ["cat", "nl", "xxd"]
    assert verdict("cat a.txt", world, safe_bins=safe, confined=True).action == "run"
    assert verdict("cat a.txt", world, safe_bins=safe).action == "ask"  # without a sandbox: stdin only
    assert verdict("cat < a.txt", world, safe_bins=safe, confined=True).action == "run"
    if shutil.which("xxd"):
        assert verdict("xxd a.txt", world, safe_bins=safe, confined=True).action == "run"
        found = verdict("xxd -r a.txt b.bin", world, safe_bins=safe, confined=True)
        assert found.action == "ask" and "no list of harmless options" in found.reasons[0]


def test_a_failing_analysis_asks(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import clawbot_tools.runtime.exec_policy as policy

    def broken(*args: Any) -> None:
        raise RecursionError("deep")

    monkeypatch.setattr(policy, "analyse", broken)
    found = verdict("ls", world)
    assert found.action == "ask" and found.reasons == ("cannot be checked: the command could not be analysed",)


# --- E8: the length cap and no catastrophic backtracking ----------------------------------


def test_a_line_too_long_to_check_asks_in_every_mode(world: Path) -> None:
    command = "ls; " * (MAX_ANALYSED_CHARS // 4 + 1)
    for mode in ("allowlist", "full"):
        found = verdict(command, world, security=mode)
        assert found.action == "ask" and "too long to check" in found.reasons[0] and not found.allow_always
    assert verdict(command, world, security="deny").action == "refuse"


async def test_a_line_too_long_to_check_does_not_run_even_in_full_mode(world: Path) -> None:
    harness = Harness.in_world(world, security="full")
    try:
        result = await harness.call("exec", command="touch pwned; " + "true; " * (MAX_ANALYSED_CHARS // 6))
        assert result.details.get("status") == "approval-unavailable" and "too long to check" in text_of(result)
        assert traces(world) == []
    finally:
        await harness.close()


ADVERSARIAL_UNITS = [
    "a==== ",
    "a=a=a=a=a=a ",
    ";a=b ",
    "sudo rm ",
    "git push ",
    "chmod - ",
    "f(){ f|",
    "curl |",
    "$(",
    "${",
    "{a,b}",
    "-rrrrr",
    "x=( ",
    "do a=1 ",
    "'",
    '"',
    "\\",
    "`",
    "rm -r",
    "dd of=",
    "((",
    "<<E\n",
    "exec ",
    "[[ ",
    "*?[",
    "cd .. ;",
    "a=exec ",
    ":(){ ",
    "{-rf,/} ",
    "time nice ",
    "sh -c '",
    "xargs rm -",
]


def test_adversarial_lines_are_decided_quickly(world: Path) -> None:
    """A child process, so a catastrophic regex fails the test instead of hanging it."""
    script = textwrap.dedent(
        """
        import json, os, random, sys, time
        from clawbot_tools.runtime.config import ExecSettings
        from clawbot_tools.runtime.exec_policy import PolicyInput, decide
        ws, units = sys.argv[1], json.loads(sys.argv[2])
        lines = [(unit * (5000 // len(unit) + 1))[:5000] for unit in units]
        lines.append(";" + "a=a=a=a=a=a " * 12)  # 85 characters: 48 s with the old pattern
        rng = random.Random(7)
        lines += ["".join(rng.choice(units) for _ in range(2000))[:5000] for _ in range(20)]
        def timed(lines):
            start = time.perf_counter()
            for line in lines:
                for mode in ("allowlist", "full"):
                    given = PolicyInput(settings=ExecSettings(security=mode), cwd=ws, workspace=ws, path_value=os.environ["PATH"], home=None)
                    decide(line, given)
            return time.perf_counter() - start
        # plain lines of the same lengths, timed alike: a loaded machine slows both
        plain = ["ls -la " + "x" * (len(line) - 7) for line in lines]
        print(json.dumps({"lines": len(lines) * 2, "seconds": timed(lines), "plain_seconds": timed(plain)}))
        """
    )
    ws = os.path.realpath(world / "ws")
    done = subprocess.run(
        [sys.executable, "-c", script, ws, json.dumps(ADVERSARIAL_UNITS)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    # a catastrophic pattern costs seconds per line (48 s for one 85-character line before);
    # a linear one stays within a small factor of plain lines, however busy the machine
    assert report["lines"] >= 100 and report["seconds"] < max(2.0, 20 * report["plain_seconds"]), report


# --- E9: a session's concurrent processes are capped ---------------------------------------


async def test_a_session_cannot_start_more_than_max_processes(world: Path) -> None:
    harness = Harness.in_world(world, security="full", max_processes=3)
    try:
        started = []
        for _ in range(3):
            result = await harness.call("exec", command="sleep 30", background=True)
            assert result.details["status"] == "running"
            started.append(result.details["process_id"])
        over = await harness.call("exec", command="touch pwned", background=True)
        text = text_of(over)
        assert over.is_error and over.details["status"] == "too-many-processes"
        assert "max_processes" in text and "process kill" in text and "Nothing ran" in text
        assert all(pid in text for pid in started)
        await asyncio.sleep(0.1)
        assert not (world / "ws" / "pwned").exists()
        other = await harness.call("exec", session="agent:main:other", command="true")
        assert other.details["status"] == "exited"  # the cap is per session
        killed = await harness.call("process", action="kill", id=started[0])
        assert killed.details["status"] == "killed"
        again = await harness.call("exec", command="touch pwned")
        assert again.details["status"] == "exited" and (world / "ws" / "pwned").exists()
    finally:
        await harness.close()


async def test_finished_commands_with_live_children_count_and_the_default_is_8(world: Path) -> None:
    assert ExecSettings().max_processes == 8
    with pytest.raises(ValueError):
        ExecSettings(max_processes=0)
    # without bwrap (whose namespace ends what a command leaves behind) children can linger
    harness = Harness.in_world(world, security="full", max_processes=1, sandbox="off")
    try:
        first = await harness.call("exec", command="sleep 30 & echo started")
        assert first.details["status"] == "exited" and first.details["process_id"]  # its child still runs
        refused = await harness.call("exec", command="true")
        assert refused.details["status"] == "too-many-processes"
    finally:
        await harness.close()


def test_the_while_loop_that_spawns_forever_asks(world: Path) -> None:
    assert verdict("while true; do sleep 1 & done", world).action == "ask"


# --- allow always: programs that run what their arguments say are never remembered as such ---

NEVER_ALWAYS = [
    ("python3", "python3 -c 1"),
    ("perl", "perl -e 1"),
    ("ruby", "ruby -e 1"),
    ("node", "node -e 1"),
    ("bash", "bash script.sh"),
    ("env", "env"),
    ("find", "find ."),
    ("git", "git status"),
    ("make", "make"),
    ("awk", "awk 1 a.txt"),
    ("sed", "sed p a.txt"),
    ("ssh", "ssh host"),
    ("rsync", "rsync a b"),
    ("curl", "curl https://example.com"),
    ("wget", "wget https://example.com"),
    ("busybox", "busybox ls"),
    ("tar", "tar tf x.tar"),
    ("npm", "npm test"),
    ("xargs", "xargs"),
    ("stdbuf", "find . -exec stdbuf -oL x {} ;"),
]


@pytest.mark.parametrize(("program", "command"), NEVER_ALWAYS, ids=[p for p, _ in NEVER_ALWAYS])
def test_interpreters_and_launchers_are_remembered_only_as_the_exact_command(program: str, command: str, world: Path) -> None:
    path_value = SYSTEM_PATH
    if shutil.which(program) is None:  # not installed here: the gate only needs an executable of that name
        fake_bin = world / "fake-bin"
        fake_bin.mkdir(exist_ok=True)
        (fake_bin / program).write_text("#!/bin/sh\n")
        (fake_bin / program).chmod(0o755)
        path_value = f"{fake_bin}{os.pathsep}{SYSTEM_PATH}"
    found = verdict(command, world, path_value=path_value, allowlist=["find"] if program == "stdbuf" else [], confined=True)
    assert found.action == "ask" and found.always != "programs", found


def test_a_remembered_interpreter_no_longer_runs_unasked(world: Path) -> None:
    python = shutil.which("python3")
    assert python is not None
    ws = os.path.realpath(world / "ws")
    remembered = (Program(os.path.realpath(python), "python3"), Program(os.path.realpath("/bin/rm"), "rm"))
    given = PolicyInput(
        settings=ExecSettings(),
        cwd=ws,
        workspace=ws,
        path_value=SYSTEM_PATH,
        home=None,
        remembered=remembered,
        confined=True,
        hides_names=True,
        guards_metadata=True,
    )
    assert decide("python3 -c 1", given).action == "ask"
    assert decide("rm a.txt", given).action == "run"  # an ordinary remembered program still runs


@pytest.mark.parametrize(
    "command",
    [
        "function f { rm -rf /; }",
        "f() { rm -rf build; }",
        "for x do rm -rf build; done",
        "case x in x) rm -rf build;; esac",
        "while rm -rf build; do :; done",
        "echo ${x-{}; rm -rf build}",
        "bash -c 'rm {-rf,build}'",
        "echo $(rm -rf build)",
    ],
)
def test_destructive_commands_inside_compound_commands_still_ask_in_full_mode(command: str, world: Path) -> None:
    found = verdict(command, world, security="full")
    assert found.action == "ask" and found.destructive, found


def test_ordinary_programs_are_still_offered_allow_always(world: Path) -> None:
    found = verdict("touch x && ls", world)
    assert found.action == "ask" and found.allow_always
    assert [p.name for p in found.programs] == ["touch"]
