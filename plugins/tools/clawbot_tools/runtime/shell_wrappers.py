"""Looking through wrappers: the programs (``sh -c``, ``env``, ``nice``, ``timeout``, ``sudo``,
``find -exec`` ...) and the ``command`` builtin that start another program.

Each handler gets the :class:`~.shell_types.Walk` to go on with what the wrapper starts.
"""

from __future__ import annotations

import os
import re

import attrs

from clawbot_tools.runtime.shell_lexer import Word
from clawbot_tools.runtime.shell_types import (
    ASSIGNMENT,
    Collector,
    Command,
    Walk,
    leading_options,
)

SHELL_FLAGS = frozenset("ceuxvf")  # sh -c, plus options that only stop early or trace
SHELL_O_NAMES = frozenset({"errexit", "nounset", "pipefail", "xtrace", "verbose", "noglob", "posix"})
SHELL_LONG = frozenset({"--norc", "--noprofile", "--posix"})
# the problem a shell reading a script file (or its input) leaves: the file binding of
# "allow always" accepts it, since the script is a file the line names
SCRIPT_FILE = "{} without -c runs a script the analysis cannot see"
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox-sh"})
PRIVILEGED = frozenset({"sudo", "doas", "su", "pkexec", "run0"})


def command_builtin(walk: Walk, argv: list[Word], state: dict, home: str | None, out: Collector, *, depth: int, via: tuple[str, ...]) -> None:
    """``command [-p] NAME ...`` runs NAME (a builtin or a program); ``-v``/``-V`` only print."""
    default_path = False
    flags, rest = leading_options(argv[1:])
    for flag in flags:
        if flag in ("-v", "-V"):
            return  # only prints how a name resolves
        if flag == "-p":
            default_path = True
        else:
            out.problem(f"command option {flag!r} is not understood")
            return
    if rest:
        walk.command(rest, state, home, out, depth=depth, via=(*via, "command"), default_path=default_path, wrapped=True)


def _rest_after_options(argv: list[Word], takes_value: set[str], flags: set[str], out: Collector, *, positional: int = 0) -> list[Word] | None:
    """``argv`` without its program name, options and ``positional`` leading operands.

    Options in ``takes_value`` consume the next word (or an attached ``=value`` / ``-nVALUE``);
    options in ``flags`` consume nothing. Long options must be spelt out in full (GNU would
    take ``--out`` for ``--output``). Anything else is a problem (``None``).
    """
    name = os.path.basename(argv[0].value)
    rest = argv[1:]
    while rest:
        word = rest[0]
        text = word.value
        if not word.literal:
            if text.startswith("-"):
                out.problem(f"{name} option {word.raw!r} is not a fixed word")
                return None
            break
        if text == "--":
            rest = rest[1:]
            break
        if not text.startswith("-") or text == "-":
            break
        key = text.split("=", 1)[0] if text.startswith("--") else text
        if key in flags and "=" not in text[len(key) : len(key) + 1]:
            rest = rest[1:]
        elif key in takes_value:
            rest = rest[1:] if "=" in text else rest[2:]
        elif text[:2] in takes_value and len(text) > 2 and not text.startswith("--"):
            rest = rest[1:]  # -n5, -oL
        elif re.fullmatch(r"-[A-Za-z]+", text) and all(f"-{c}" in flags for c in text[1:]):
            rest = rest[1:]  # -0rt
        else:
            out.problem(f"{name} option {text!r} is not understood (or not known to be harmless)")
            return None
    for _ in range(positional):
        if not rest:
            return []
        if not rest[0].literal:
            out.problem(f"the argument {rest[0].raw!r} of {name} is not a fixed word")
            return None
        rest = rest[1:]
    return rest


def _then(
    walk: Walk,
    rest: list[Word] | None,
    label: str,
    state: dict,
    home: str | None,
    out: Collector,
    *,
    depth: int,
    via: tuple[str, ...],
    default_path: bool = False,
) -> None:
    if rest:
        walk.command(rest, state, home, out, depth=depth, via=(*via, label), default_path=default_path, wrapped=True, builtins=False)


def _shell(walk, argv, state, home, out, *, depth, via, default_path):
    name = os.path.basename(argv[0].value)
    rest = argv[1:]
    script: Word | None = None
    wants_script = False
    while rest:
        text = rest[0].value
        if not rest[0].literal:
            out.problem(f"{name} option {rest[0].raw!r} is not a fixed word")
            return
        if text in ("--", "-"):
            rest = rest[1:]
            break
        if text in ("-o", "+o"):
            if len(rest) < 2 or rest[1].value not in SHELL_O_NAMES or not rest[1].literal:
                shown = rest[1].raw if len(rest) > 1 else ""
                out.problem(f"{name} {text} {shown} is not known to be harmless".replace("  ", " "))
                return
            rest = rest[2:]
            continue
        if text.startswith("--"):
            if text not in SHELL_LONG:
                out.problem(f"{name} option {text!r} is not known to be harmless (it may read start-up files or change how the script is read)")
                return
            rest = rest[1:]
            continue
        if text[:1] in ("-", "+") and len(text) > 1:
            if not set(text[1:]) <= SHELL_FLAGS:
                out.problem(f"{name} option {text!r} is not known to be harmless (only -c, -e, -u, -x, -v, -f are)")
                return
            if "c" in text[1:]:
                wants_script = text[0] == "-"
            rest = rest[1:]
            continue
        break
    if wants_script and rest:
        script = rest[0]
    if script is None:
        out.problem(SCRIPT_FILE.format(name))
        return
    if not script.literal:
        out.problem(f"the script given to {name} -c is not a fixed word")
        return
    inner = {"cwd": state["cwd"]}  # a new shell: its cd stays inside
    walk.script(script.value, inner, home, out, depth=depth + 1, via=(*via, f"{name} -c"))


def _env(walk, argv, state, home, out, *, depth, via, default_path):
    rest = argv[1:]
    while rest:
        word = rest[0]
        text = word.value
        if not word.literal:
            out.problem(f"env argument {word.raw!r} is not a fixed word")
            return
        if text in ("-i", "--ignore-environment", "-"):
            default_path = True
            rest = rest[1:]
        elif text in ("-0", "--null", "-v", "--debug"):
            rest = rest[1:]
        elif text in ("-u", "--unset"):
            default_path = default_path or (len(rest) > 1 and rest[1].value == "PATH")
            rest = rest[2:]
        elif text.startswith(("--unset=", "-u")) and len(text) > 2:
            default_path = default_path or text in ("--unset=PATH", "-uPATH")
            rest = rest[1:]
        elif text == "--":
            rest = rest[1:]
            break
        elif text.startswith("-"):
            out.problem(f"env option {text!r} is not understood")
            return
        else:
            break
    while rest and ASSIGNMENT.match(rest[0].value):
        out.assign(rest[0])
        rest = rest[1:]
    if not rest:
        out.commands.append(Command(tuple(argv), state["cwd"], via))  # env alone prints the environment
        return
    _then(walk, rest, "env", state, home, out, depth=depth, via=via, default_path=default_path)


def _simple_wrapper(label: str, takes_value: set[str], flags: set[str], positional: int = 0):
    def unwrap(walk, argv, state, home, out, *, depth, via, default_path):
        rest = _rest_after_options(argv, takes_value, flags, out, positional=positional)
        if rest is None:
            return
        _then(walk, rest, label, state, home, out, depth=depth, via=via, default_path=default_path)

    return unwrap


def _nice(walk, argv, state, home, out, *, depth, via, default_path):
    if len(argv) > 1 and re.fullmatch(r"-[0-9]+", argv[1].value):
        argv = [argv[0], *argv[2:]]  # nice -10 cmd
    _simple_wrapper("nice", {"-n", "--adjustment"}, set())(walk, argv, state, home, out, depth=depth, via=via, default_path=default_path)


def _xargs(walk, argv, state, home, out, *, depth, via, default_path):
    """xargs is never looked through: the arguments it adds come from its input."""
    out.problem("xargs runs a command with arguments read from its input, which cannot be checked")
    rest = _rest_after_options(argv, XARGS_VALUES, XARGS_FLAGS, Collector())  # for the destructive check only
    _then(walk, rest or [Word("echo", "echo")], "xargs", state, home, out, depth=depth, via=via, default_path=default_path)


def _privileged(walk, argv, state, home, out, *, depth, via, default_path):
    name = os.path.basename(argv[0].value)
    if name == "su":
        out.problem("su runs a shell as another user")
        return
    rest = _rest_after_options(
        argv,
        {
            "-u",
            "--user",
            "-g",
            "--group",
            "-C",
            "--close-from",
            "-h",
            "--host",
            "-p",
            "--prompt",
            "-r",
            "--role",
            "-t",
            "--type",
            "-D",
            "--chdir",
            "-U",
            "--other-user",
            "-c",
            "--command",
            "-s",
        },
        {"-E", "-H", "-n", "-S", "-k", "-K", "-b", "-P", "-A", "-i", "-l", "--login", "--preserve-env", "--non-interactive", "--stdin", "--"},
        out,
    )
    _then(walk, rest, name, state, home, out, depth=depth, via=via)


def _find(walk, argv, state, home, out, *, depth, via, default_path):
    """find itself is a program (judged as such); each -exec/-ok command is another one.

    The ``{}`` find fills in is a path found anywhere find looks: not a fixed word.
    """
    out.commands.append(Command(tuple(argv), state["cwd"], via))
    i = 1
    while i < len(argv):
        text = argv[i].value
        if text in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(argv) and argv[j].value not in (";", "+"):
                j += 1
            inner = [attrs.evolve(w, placeholder=True) if "{}" in w.value else w for w in argv[i + 1 : j]]
            if not inner:
                out.problem(f"find {text} without a command")
            else:
                # -execdir runs in each file's directory: a relative program path there is unknown
                inner_state = {"cwd": None} if text.endswith("dir") else state
                walk.command(inner, inner_state, home, out, depth=depth, via=(*via, f"find {text}"), wrapped=True, builtins=False)
            i = j + 1
        else:
            i += 1


XARGS_VALUES = {
    "-I",
    "-L",
    "-n",
    "-P",
    "-s",
    "-d",
    "-E",
    "-a",
    "--arg-file",
    "--delimiter",
    "--max-lines",
    "--max-args",
    "--max-procs",
    "--max-chars",
    "--eof",
    "--replace",
    "--process-slot-var",
}
XARGS_FLAGS = {
    "-0",
    "-r",
    "-t",
    "-p",
    "-x",
    "-o",
    "--null",
    "--no-run-if-empty",
    "--verbose",
    "--interactive",
    "--exit",
    "--open-tty",
    "-i",
    "-l",
    "-e",
}

WRAPPERS = {
    **{name: _shell for name in SHELLS},
    "env": _env,
    "nice": _nice,
    "nohup": _simple_wrapper("nohup", set(), set()),
    "timeout": _simple_wrapper("timeout", {"-s", "--signal", "-k", "--kill-after"}, {"--preserve-status", "--foreground", "-v", "--verbose"}, positional=1),
    "stdbuf": _simple_wrapper("stdbuf", {"-i", "-o", "-e", "--input", "--output", "--error"}, set()),
    # not -o/--output or -a/--append: they write a file
    "time": _simple_wrapper("time", {"-f", "--format"}, {"-p", "-v", "--verbose", "--portability", "-q", "--quiet"}),
    "xargs": _xargs,
    **{name: _privileged for name in PRIVILEGED},
    "find": _find,
}
