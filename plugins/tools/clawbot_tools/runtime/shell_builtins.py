"""Judging the builtins that start no program: which are safe, which hide code, and what their arguments do."""

from __future__ import annotations

import re

from clawbot_tools.runtime.shell_lexer import Word
from clawbot_tools.runtime.shell_types import Collector

PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:=.*)?", re.S)

# Builtins of /bin/sh that run inside the shell and start no program; they count as allowed
# (with their arguments checked in judge_builtin).
SAFE_BUILTINS = frozenset(
    {
        "cd",
        "pwd",
        "echo",
        "printf",
        "true",
        "false",
        "test",
        "[",
        ":",
        "exit",
        "export",
        "set",
        "wait",
        "shift",
        "readonly",
        "umask",
    }
)
# Builtins whose arguments are only printed: they may hold $NAME, globs and braces.
PRINTERS = frozenset({"echo", "printf"})
# Builtins that run code the analysis cannot see, or change how later commands are found.
OPAQUE_BUILTINS = {
    "eval": "eval runs a string as a command",
    "source": "source runs a script file",
    ".": ". (source) runs a script file",
    "exec": "exec replaces the shell or rewires its file descriptors",
    "trap": "trap runs a command later",
    "alias": "alias redefines commands",
    "unalias": "unalias changes what names run",
    "builtin": "builtin is not analysed",
    "enable": "enable loads or switches shell builtins",
    "hash": "hash changes which file a name runs",
    "read": "read sets variables from its input",
    "mapfile": "mapfile sets variables from its input",
    "readarray": "readarray sets variables from its input",
    "getopts": "getopts sets variables",
    "unset": "unset removes variables or functions",
    "declare": "declare sets variables and attributes",
    "typeset": "typeset sets variables and attributes",
    "local": "local sets variables and attributes",
    "let": "let evaluates arithmetic, which can run commands",
    "pushd": "pushd changes the directory in a way that is not followed",
    "popd": "popd changes the directory in a way that is not followed",
    "compgen": "compgen is not analysed",
    "complete": "complete is not analysed",
    "bind": "bind is not analysed",
    "fc": "fc runs commands from the history",
    "shopt": "shopt changes how the shell reads commands",
}
# test / [ primaries that look a file up by name (its existence, type, permissions, age)
FILE_TESTS = frozenset(
    {
        "-a",
        "-b",
        "-c",
        "-d",
        "-e",
        "-f",
        "-g",
        "-G",
        "-h",
        "-k",
        "-L",
        "-N",
        "-O",
        "-p",
        "-r",
        "-s",
        "-S",
        "-u",
        "-w",
        "-x",
        "-nt",
        "-ot",
        "-ef",
    }
)
SET_FLAGS = frozenset("euxvfC")
SET_O_NAMES = frozenset({"errexit", "nounset", "xtrace", "verbose", "pipefail", "noglob", "noclobber"})


def judge_builtin(argv: list[Word], state: dict, out: Collector) -> None:
    """Record what ``argv`` (a builtin of :data:`SAFE_BUILTINS`) does that the policy must know."""
    name = argv[0].value
    args = argv[1:]
    if name in ("echo", ":", "true", "false"):
        return
    if name == "printf":
        _printf(args, out)
        return
    unfixed = [w for w in args if not w.literal]
    for word in unfixed:
        out.problem(f"the argument {word.raw!r} of {name} is not a fixed word")
    if name == "cd":
        state["cwd"] = None  # not followed: relative programs after it cannot be resolved
    elif unfixed:
        return
    elif name in ("test", "["):
        if any(w.value in ("-v", "-R") for w in args):
            out.problem(f"{name} -v/-R looks a variable up by a name bash evaluates as arithmetic (which can run commands)")
        for primary, operand in zip(args, args[1:], strict=False):
            if primary.value in FILE_TESTS and not primary.quoted:
                out.reveal(f"{name} {primary.value} looks {operand.value} up by name", operand.value)
    elif name in ("export", "readonly"):
        _export(name, args, out)
    elif name == "set":
        _set(args, out)
    elif name == "wait":
        if any(w.value.startswith("-") for w in args):
            out.problem("wait with options (wait -p sets a variable)")


def _printf(args: list[Word], out: Collector) -> None:
    """printf prints, unless its format is an option (``printf $X ...`` with X=-v sets a variable)."""
    if any(w.value.startswith("-v") for w in args):
        out.problem("printf -v sets a variable")
        return
    if args and args[0].literal and args[0].value == "--":
        args = args[1:]
    elif args and args[0].value.startswith("-"):
        out.problem(f"printf option {args[0].raw!r} is not understood")
        return
    if args and not args[0].literal:
        out.problem(f"the format {args[0].raw!r} of printf is not a fixed word (it could be an option such as -v)")


def _export(name: str, args: list[Word], out: Collector) -> None:
    options = {"-p", "-n", "--"} if name == "export" else {"-p", "--"}
    for word in args:
        text = word.value
        if text.startswith("-"):
            if text not in options:
                out.problem(f"{name} option {text!r} is not understood")
        elif PLAIN_NAME.fullmatch(text):
            if "=" in text:
                out.assign(word)
        else:
            out.problem(f"{name} {text!r} is not a plain NAME or NAME=value")


def _set(args: list[Word], out: Collector) -> None:
    i = 0
    while i < len(args):
        text = args[i].value
        if text in ("--", "-"):
            return  # the rest sets $1, $2 ...
        if text in ("-o", "+o"):
            if i + 1 < len(args) and args[i + 1].value not in SET_O_NAMES:
                out.problem(f"set {text} {args[i + 1].value} is not understood")
            i += 2
            continue
        if text[:1] in "-+" and len(text) > 1:
            if not set(text[1:]) <= SET_FLAGS:
                out.problem(f"set option {text!r} is not understood")
            i += 1
            continue
        return  # positional parameters
