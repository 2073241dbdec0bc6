"""Lines run for real under dash and bash, compared with what the exec gate's lexer and the gate say.

A :class:`World` is a directory with ``bin/`` (probe programs ``p0`` ... that record their
argv, and ``canary``, which leaves a marker when it runs), ``ws/`` (the workspace: a few
files, ``sub/``, and copies of the canary), ``home/``, and the places the probes and the
canary write to. Two questions are asked of a line:

* :func:`lexer_mismatch`: for a line the lexer fully understood (no problems), every
  simple command's program word is replaced by a probe, the line runs under each shell,
  and the argv each shell passed must be the lexer's words (a shell running something the
  lexer did not see, or with other words, is a mismatch).
* :func:`gate_bypass`: when :func:`~clawbot_tools.runtime.exec_policy.decide` lets a line
  run unasked (allowlist mode, empty allowlist, default safe bins), running it under each
  shell must never start the canary. Only the public ``decide`` / ``PolicyInput`` /
  ``ExecSettings`` are used, so the test keeps its meaning while the analysis changes.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

import attrs
from clawbot_tools.runtime.config import ExecSettings
from clawbot_tools.runtime.exec_policy import PolicyInput, decide
from clawbot_tools.runtime.shell_lexer import Op, Word, lex

SYSTEM_PATH = os.environ.get("PATH", os.defpath)
SHELLS = {name: path for name in ("dash", "bash") if (path := shutil.which(name))}
PROBES = 64  # p0 ... p63: one per simple command of a line
RUN_TIMEOUT_S = 5.0
HOLDER_FD = 190  # kept open by everything the line starts, so the run ends when the last of them does
# Words that are not a program in the command position in dash or bash: such a line is not
# a list of simple commands, which is all the lexer claims to understand.
RESERVED = frozenset(
    {
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "case",
        "esac",
        "for",
        "select",
        "while",
        "until",
        "do",
        "done",
        "in",
        "function",
        "{",
        "}",
        "!",
        "[[",
        "]]",
        "time",
        "coproc",
    }
)
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
WORKSPACE_FILES = {
    "a.txt": "b\na\n",
    "big.txt": "x\n" * 20000,  # sort spills it to temporary files with -S 1k (and runs --compress-program)
    "sub/s.txt": "s\n",
}


@attrs.frozen
class Run:
    shell: str
    records: tuple[tuple[str, ...], ...]  # argv of every probe that ran; argv[0] is the probe's name
    canary: int  # how often the canary ran
    stderr: str
    timed_out: bool


@attrs.frozen
class Segment:
    """A simple command as the lexer sees it."""

    program: Word
    args: tuple[Word, ...]
    understood: bool  # every argument is a fixed word the shell passes as it stands


class World:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin, self.ws, self.home = root / "bin", root / "ws", root / "home"
        self.records, self.markers = root / "records", root / "markers"
        for directory in (self.bin, self.ws / "sub", self.home, self.records, self.markers):
            directory.mkdir(parents=True, exist_ok=True)
        probe = self.bin / "probe"
        _script(probe, f'printf \'%s\\0\' "$0" "$@" > {self.records}/$$\n')
        for name in ("p", *(f"p{k}" for k in range(PROBES))):  # "p": the lines' own stand-in program
            (self.bin / name).symlink_to(probe)
        for canary in (self.bin / "canary", self.ws / "canary", self.ws / "sub" / "canary"):
            _script(canary, f": > {self.markers}/$$\ncat > /dev/null\n")
        for name, text in WORKSPACE_FILES.items():
            (self.ws / name).write_text(text)
        self.kept = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in self._files() if p.is_file()}
        self.kept_dirs = {p for p in self._files() if p.is_dir()}
        self.env = {"PATH": f"{self.bin}:{SYSTEM_PATH}", "HOME": str(self.home), "LANG": "C.UTF-8", "PWD": str(self.ws)}

    def given(self, *, confined: bool = False) -> PolicyInput:
        """The gate's input: allowlist mode, an empty allowlist, the default safe bins."""
        ws = os.path.realpath(self.ws)
        extra = {"confined": True} if confined else {}
        return PolicyInput(
            settings=ExecSettings(security="allowlist", allowlist=[]),
            cwd=ws,
            workspace=ws,
            path_value=self.env["PATH"],
            home=str(self.home),
            **extra,
        )

    def run(self, shell: str, line: str) -> Run:
        """``line`` run by ``shell -c`` in the workspace; waits for everything it started (or the timeout)."""
        self._reset()
        read_end, write_end = os.pipe()
        holder = fcntl.fcntl(write_end, fcntl.F_DUPFD, HOLDER_FD)
        os.close(write_end)
        err_path = self.root / "stderr"
        try:
            try:
                with open(err_path, "wb") as err:
                    process = subprocess.Popen(
                        [SHELLS[shell], "-c", line],
                        cwd=self.ws,
                        env=self.env,
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        stderr=err,
                        pass_fds=(holder,),
                        start_new_session=True,
                    )
            finally:
                os.close(holder)  # from now on only what the line started holds it
            timed_out = not _until_closed(read_end, time.monotonic() + RUN_TIMEOUT_S)
            if timed_out:
                _kill(process.pid)
                _until_closed(read_end, time.monotonic() + 1)
            process.wait(timeout=5)
        finally:
            os.close(read_end)
        records = tuple((os.path.basename(argv[0]), *argv[1:]) for argv in (_argv(p.read_bytes()) for p in sorted(self.records.iterdir())))
        canary = len(list(self.markers.iterdir()))
        return Run(shell, records, canary, err_path.read_text("utf-8", "replace"), timed_out)

    def _files(self) -> list[Path]:
        return [p for base in (self.ws, self.home) for p in base.rglob("*")]

    def _reset(self) -> None:
        """The world as it was made: records and markers gone, the workspace and home restored."""
        for directory in (self.records, self.markers):
            for entry in directory.iterdir():
                entry.unlink()
        for entry in sorted(self._files(), key=lambda p: len(p.parts), reverse=True):
            if entry in self.kept or entry in self.kept_dirs:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        for entry in self.root.iterdir():
            if entry.name not in ("bin", "ws", "home", "records", "markers", "stderr"):
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        for path, (data, mtime) in self.kept.items():
            if not path.is_file() or path.stat().st_mtime_ns != mtime:
                path.write_bytes(data)
                os.utime(path, ns=(mtime, mtime))


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def _argv(data: bytes) -> list[str]:
    return [part.decode("utf-8", "surrogateescape") for part in data.split(b"\0")[:-1]]


def _until_closed(fd: int, deadline: float) -> bool:
    """Read ``fd`` until every writer has closed it; False if ``deadline`` came first."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        ready, _, _ = select.select([fd], [], [], left)
        if ready and not os.read(fd, 4096):
            return True


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# --- what the lexer says -------------------------------------------------------------------


def segments(tokens: tuple[Word | Op, ...]) -> list[Segment]:
    """The simple commands of a lexed line: words between control operators, without redirections."""
    found: list[Segment] = []
    words: list[Word] = []
    target_next = False

    def finish() -> None:
        nonlocal words
        start = 0
        while start < len(words) and ASSIGNMENT.match(words[start].raw):
            start += 1
        if start < len(words):
            program, args = words[start], tuple(words[start + 1 :])
            understood = all(w.literal and not w.tilde for w in args)
            found.append(Segment(program, args, understood))
        words = []

    for token in tokens:
        if target_next:
            target_next = False
            if isinstance(token, Word):
                continue
        if isinstance(token, Word):
            words.append(token)
        elif token.redirect:
            target_next = True
        else:
            finish()
    finish()
    return found


def probed(line: str, found: list[Segment], probe_dir: Path) -> str:
    """``line`` with the program word of segment k replaced by the probe ``pk``."""
    out, last = [], 0
    for k, segment in enumerate(found):
        word = segment.program
        out.append(line[last : word.start])
        out.append(str(probe_dir / f"p{k}"))
        last = word.start + len(word.raw)
    out.append(line[last:])
    return "".join(out)


def lexer_mismatch(world: World, line: str) -> str | None:
    """Why the shells disagree with the lexer about ``line``; None if they agree (or it claims nothing)."""
    lexed = lex(line)
    if lexed.problems:
        return None
    found = segments(lexed.tokens)
    if not found or len(found) > PROBES:
        return None
    if any(not s.program.quoted and s.program.value in RESERVED for s in found):
        return None  # a compound command: not a list of simple commands
    run_line = probed(line, found, world.bin)
    expected = {f"p{k}": s for k, s in enumerate(found)}
    # every command runs (the probes succeed), unless a || skips some or an error hides in a redirected stderr
    certain = not any(isinstance(t, Op) and (t.text == "||" or t.redirect and (t.text.startswith(("2", "&")) or t.text == ">&")) for t in lexed.tokens)
    runs = []
    for shell in SHELLS:
        run = world.run(shell, run_line)
        runs.append(run)
        seen: set[str] = set()
        for record in run.records:
            name, args = record[0], list(record[1:])
            segment = expected.get(name)
            if segment is None or name in seen:
                return _report(shell, line, run_line, f"ran {record!r}, which the lexer did not see", run)
            seen.add(name)
            if segment.understood and args != [w.value for w in segment.args]:
                return _report(shell, line, run_line, f"ran {name} with {args!r}; the lexer read {[w.value for w in segment.args]!r}", run)
        if run.canary:
            return _report(shell, line, run_line, "started the canary, which the lexer did not see", run)
        if certain and not run.stderr and not run.timed_out:
            missing = [f"p{k}" for k in range(len(found)) if f"p{k}" not in seen]
            if missing:
                return _report(shell, line, run_line, f"did not run {missing}, which the lexer read as commands", run)
    programs = {id(s.program) for s in found}
    if not all(t.literal and not t.tilde for t in lexed.tokens if isinstance(t, Word) and id(t) not in programs):
        return None  # a word whose value is not fixed (a glob, brace, ~, $x): the shells may differ, as the lexer said
    first, *others = runs
    for other in others:
        if _as_understood(first, expected) != _as_understood(other, expected):
            # one shell refuses what the other runs (2>&-#c: bash closes stderr, sh sees a syntax error)
            return _report(
                f"{first.shell} and {other.shell}",
                line,
                run_line,
                f"disagree ({first.records!r} against {other.records!r}), and the lexer reported no problem",
                other,
            )
    return None


def _as_understood(run: Run, expected: dict[str, Segment]) -> list[tuple[str, ...]]:
    """What ``run`` ran, with the words of commands the lexer did not fully understand left out."""
    return sorted(record if expected[record[0]].understood else record[:1] for record in run.records)


def _report(shell: str, line: str, run_line: str, what: str, run: Run) -> str:
    return f"{shell} {what}\n  line:     {line!r}\n  run as:   {run_line!r}\n  stderr:   {run.stderr[:300]!r}"


# --- what the gate says --------------------------------------------------------------------


def gate_bypass(world: World, line: str, *, confined: bool = False) -> str | None:
    """Why ``line`` is a bypass: the gate lets it run and a shell starts the canary; None otherwise."""
    verdict = decide(line, world.given(confined=confined))
    if verdict.action != "run":
        return None
    for shell in SHELLS:
        run = world.run(shell, line)
        if run.canary:
            return (
                f"{shell} started the canary, but the gate let the line run unasked (confined={confined})\n  line:   {line!r}\n  stderr: {run.stderr[:300]!r}"
            )
    return None
