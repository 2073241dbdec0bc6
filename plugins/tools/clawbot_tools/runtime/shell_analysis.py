"""Which programs a command line would start: every command of every pipeline and chain.

``exec`` does not judge ``sh -c '...'`` by ``sh``: the analysis splits the line into simple
commands (on ``|``, ``||``, ``&&``, ``;``, ``&``, parentheses and newlines), then looks
through the wrappers that merely start another program (``sh -c``, ``env``, ``nice``,
``timeout``, ``stdbuf``, ``nohup``, ``time``, ``command``, ``find -exec`` ...) to the
programs they start; a wrapper is looked through only when all of its own options are
known to be harmless (``time -o FILE`` writes a file: it is a problem).

Whatever it cannot pin down is listed in ``Analysis.problems``, so the policy asks rather
than allows. That includes:

* every shell keyword and compound command (``if``, ``for``, ``while``, ``until``,
  ``case``, ``select``, ``function``, ``{ ...; }``, ``( ... )``, ``[[ ]]``, ``(( ))``,
  ``coproc``): commands inside them are still analysed (so the destructive check and
  ``sudo`` detection see them), but the line is never "provably allowed";
* any word holding a ``$`` expansion, substitution or brace expansion (``{a,b}``), except
  the arguments of the ``echo``/``printf`` builtins, which only print them (but printf's
  format must be a fixed word not starting with ``-``, and ``-v`` anywhere asks); the lexer adds
  everything it cannot take apart (``$(...)``, backticks, ``${x-...}``, ``$((...))``,
  here-documents that expand code, unclosed quotes);
* ``xargs`` (it runs a command with arguments read from its input) and unknown or
  file-writing options of a wrapper;
* builtins that run or hide code or change the shell's state: ``eval``, ``source``/``.``,
  ``exec``, ``trap``, ``alias``, ``builtin``, ``enable``, ``hash``, ``read``, ``unset``,
  ``declare``/``typeset``/``local``, ``let``, ``printf -v``, ``test -v`` (bash evaluates
  the name as arithmetic, which can run commands), ``export``/``readonly`` of anything but
  plain ``NAME=value`` words, ``set`` options other than ``-e -u -x -v -f -C`` and a few
  ``-o`` names;
* a shell looked through (``sh -c``, ``bash -c``) with options other than ``-c`` and
  ``-e -u -x -v -f`` (``-o`` errexit, nounset, pipefail, xtrace, verbose, noglob, posix;
  ``--norc``, ``--noprofile``, ``--posix``): ``-k``, ``-l``/``--login``, ``-i``, ``-s``,
  ``-p``, ``-a``, ``-O``, ``--rcfile`` ... ask.

Variables set for commands (``NAME=value cmd``, ``NAME=value``, ``env NAME=value``,
``export NAME=value``) are listed in ``Analysis.assignments`` with their value (``None``
when it is not a fixed word); the policy decides which names may be set.

``cd`` is followed (so relative paths are judged where they really point), the way the
shell does it: logically for ``..``, and only into a directory that exists; after a ``cd``
that might fail, one run in a pipeline or in the background, or one that might be skipped
or whose failure changes what runs (not the first command of its ``&&``/``||`` list, or
followed by ``||``), the directory is unknown. Paths are resolved with
:func:`~clawbot_tools.runtime.executables.real_path` (``cd /proc/self/cwd`` is unknown).
"""

from __future__ import annotations

import os
import re

import attrs

from clawbot_tools.runtime.executables import real_path
from clawbot_tools.runtime.shell_lexer import Op, Word, lex

MAX_DEPTH = 8  # sh -c inside sh -c ...
MAX_WRAPPERS = 16  # wrappers around one program
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:=.*)?", re.S)

# Builtins of /bin/sh that run inside the shell and start no program; they count as allowed
# (with their arguments checked in _builtin).
SAFE_BUILTINS = frozenset({
    "cd", "pwd", "echo", "printf", "true", "false", "test", "[", ":", "exit", "export",
    "set", "wait", "shift", "readonly", "umask",
})
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
# Reserved words: compound commands the analysis does not follow ("!" only negates the
# exit status of the pipeline after it, and is looked through; "time" is a wrapper).
KEYWORDS = frozenset({
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
    "do", "done", "in", "function", "{", "}", "[[", "]]", "coproc",
})
# After these keywords the rest of the simple command is a command (analysed too);
# after the others it is names, patterns or a test expression.
KEYWORDS_BEFORE_A_COMMAND = frozenset({"if", "then", "else", "elif", "while", "until", "do", "{", "coproc"})
SET_FLAGS = frozenset("euxvfC")
SET_O_NAMES = frozenset({"errexit", "nounset", "xtrace", "verbose", "pipefail", "noglob", "noclobber"})
SHELL_FLAGS = frozenset("ceuxvf")  # sh -c, plus options that only stop early or trace
SHELL_O_NAMES = frozenset({"errexit", "nounset", "pipefail", "xtrace", "verbose", "noglob", "posix"})
SHELL_LONG = frozenset({"--norc", "--noprofile", "--posix"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox-sh"})
PRIVILEGED = frozenset({"sudo", "doas", "su", "pkexec", "run0"})


@attrs.frozen
class Command:
    """One program the line starts: ``argv[0]`` names it; ``via`` lists the wrappers around it."""

    argv: tuple[Word, ...]
    cwd: str | None  # where a relative program path resolves; None: unknown (after cd $X)
    via: tuple[str, ...] = ()
    builtin: bool = False
    default_path: bool = False  # looked up on the default PATH (env -i, command -p)

    @property
    def name(self) -> str:
        return self.argv[0].value


@attrs.frozen
class Redirect:
    op: str
    target: Word | None
    cwd: str | None  # where a relative target resolves; None: unknown


@attrs.frozen
class Analysis:
    commands: tuple[Command, ...]
    redirects: tuple[Redirect, ...]
    problems: tuple[str, ...]  # reasons the line is not provably allowed
    privileged: tuple[str, ...]  # sudo, doas ... found
    wrappers: tuple[Command, ...]  # programs looked through (sh -c, env, nice, xargs ...)
    assigned: tuple[str, ...]  # variable names set for commands (VAR=x cmd, env VAR=x, export VAR=)
    assignments: tuple[tuple[str, str | None], ...] = ()  # (name, value; None: not a fixed word)


class _Collector:
    def __init__(self) -> None:
        self.commands: list[Command] = []
        self.redirects: list[Redirect] = []
        self.problems: list[str] = []
        self.privileged: list[str] = []
        self.wrappers: list[Command] = []
        self.assigned: list[str] = []
        self.assignments: list[tuple[str, str | None]] = []
        self.keywords: list[str] = []

    def assign(self, word: Word, text: str | None = None) -> None:
        name, _, value = (word.value if text is None else text).partition("=")
        self.assigned.append(name)
        self.assignments.append((name, value if word.literal else None))

    def problem(self, text: str) -> None:
        if text not in self.problems:
            self.problems.append(text)


def analyse(command: str, cwd: str, home: str | None = None) -> Analysis:
    """Every program ``command`` starts when run by ``/bin/sh`` in ``cwd`` (a real path)."""
    out = _Collector()
    _script(command, {"cwd": cwd, "pwd": cwd}, home, out, depth=0, via=())
    if out.keywords:
        out.problem(f"shell keywords ({', '.join(out.keywords)}): compound commands (if, for, while, case, {{ }}, [[ ]] ...) are not analysed")
    return Analysis(
        tuple(out.commands), tuple(out.redirects), tuple(out.problems), tuple(out.privileged), tuple(out.wrappers), tuple(out.assigned),
        tuple(out.assignments),
    )


def _script(source: str, state: dict, home: str | None, out: _Collector, *, depth: int, via: tuple[str, ...]) -> None:
    """``state``: ``cwd`` (the real directory, None: unknown) and ``pwd`` (the shell's logical one)."""
    if depth > MAX_DEPTH:
        out.problem("shell scripts nested too deeply")
        return
    lexed = lex(source)
    for problem in lexed.problems:
        out.problem(problem)
    segment: list[Word] = []
    redirects: list[Redirect] = []
    pending_redirect: Op | None = None
    in_pipeline = False
    # the current and-or list ("a && b || c"): its && / || so far, where it started, and
    # whether a cd in it that may be skipped makes the directory unknown once it ends
    and_or: list[str] = []
    list_start = (state["cwd"], state["pwd"])
    state["reset_at_end"] = False
    last_op: str | None = None

    def finish(next_op: str | None) -> None:
        nonlocal segment, redirects, in_pipeline, list_start, last_op
        if not segment and not redirects and next_op == "\n" and last_op in ("&&", "||", "|", "|&"):
            return  # "a &&<newline>b", "a |<newline>b": the list goes on
        last_op = next_op
        # in a pipeline or in the background, a command runs in a subshell: its cd stays there
        detached = in_pipeline or next_op in ("|", "|&", "&")
        if next_op == "||" or "||" in and_or:
            state["cd_mode"] = "unknown"  # a cd that may be skipped, or whose failure runs what follows
        elif and_or:
            state["cd_mode"] = "and"  # runs only if what precedes succeeded: known for the && after it
        else:
            state["cd_mode"] = "first"
        out.redirects.extend(attrs.evolve(r, cwd=state["cwd"]) for r in redirects)
        if segment:
            _simple(segment, state, home, out, depth=depth, via=via, detached=detached)
        state["cd_mode"] = "first"
        in_pipeline = next_op in ("|", "|&")
        if in_pipeline:
            pass
        elif next_op in ("&&", "||"):
            and_or.append(next_op)
            if next_op == "||" and state["reset_at_end"]:
                state["cwd"] = state["pwd"] = None  # after ||: with or without that cd
        else:  # the list ends
            if next_op == "&":  # the whole list ran in the background: its cds stay there
                state["cwd"], state["pwd"] = list_start
            elif state["reset_at_end"]:
                state["cwd"] = state["pwd"] = None
            and_or.clear()
            state["reset_at_end"] = False
            list_start = (state["cwd"], state["pwd"])
        segment, redirects = [], []

    for token in lexed.tokens:
        if pending_redirect is not None:
            target = token if isinstance(token, Word) else None
            redirects.append(Redirect(pending_redirect.text, target, None))
            pending_redirect = None
            if target is not None:
                continue
        if isinstance(token, Word):
            segment.append(token)
        elif token.redirect:
            pending_redirect = token
        else:
            finish(token.text)
    if pending_redirect is not None:
        redirects.append(Redirect(pending_redirect.text, None, None))
    finish(None)


def _simple(words: list[Word], state: dict, home: str | None, out: _Collector, *, depth: int, via: tuple[str, ...], detached: bool) -> None:
    """One simple command (already split from its neighbours)."""
    while words:
        first = words[0]
        if first.quoted:
            break
        if first.value == "!":
            words = words[1:]
            continue
        if first.value not in KEYWORDS:
            break
        if first.value not in out.keywords:
            out.keywords.append(first.value)
        if first.value == "function":  # function NAME { ...: the body is analysed too
            words = words[2:]
            continue
        if first.value in ("for", "select"):  # for NAME [in WORDS]; do ... / for NAME do ...
            body = next((k for k, w in enumerate(words) if w.value == "do" and not w.quoted), None)
            if body is None:
                return
            words = words[body:]
            continue
        if first.value not in KEYWORDS_BEFORE_A_COMMAND:
            return
        words = words[1:]
    if not words:
        return
    # leading VAR=value assignments
    start = 0
    while start < len(words) and ASSIGNMENT.match(words[start].raw):
        out.assign(words[start])
        start += 1
    argv = words[start:]
    printer = bool(argv) and argv[0].literal and argv[0].value in PRINTERS
    for index, word in enumerate(words):
        if printer and index > start and not (word.brace and argv[0].value == "printf"):  # printf {-v,PATH}
            continue  # echo/printf arguments are only printed (printf's format is checked in _builtin)
        if word.expands:
            out.problem(f"{word.raw!r} holds a $ expansion or substitution, whose value is not known here")
        elif word.brace:
            out.problem(f"{word.raw!r} may be a brace expansion (bash makes several words of it)")
    if argv:
        _command(list(argv), state, home, out, depth=depth, via=via, detached=detached)


def _command(
    argv: list[Word], state: dict, home: str | None, out: _Collector, *, depth: int, via: tuple[str, ...], detached: bool,
    default_path: bool = False, wrapped: bool = False, builtins: bool = True,
) -> None:
    """``wrapped``: started by a wrapper; ``builtins``: a shell builtin of that name runs (not a program)."""
    if len(via) > MAX_WRAPPERS:
        out.problem("wrappers (env, nice, timeout, sh -c ...) nested too deeply")
        return
    head = argv[0]
    if not head.literal:
        out.problem(f"the program name {head.raw!r} is not a fixed word (a variable, glob, brace or substitution)")
        return
    name = head.value
    if head.tilde:
        name = _expand_tilde(name, home)
        if name is None:
            out.problem(f"the program name {head.raw!r} uses ~user")
            return
        head = attrs.evolve(head, value=name)
        argv = [head, *argv[1:]]
    base = os.path.basename(name)
    if builtins and "/" not in name:
        if name in OPAQUE_BUILTINS:
            out.problem(OPAQUE_BUILTINS[name])
            return
        if name in SAFE_BUILTINS:
            _builtin(argv, state, home, out, detached=detached)
            out.commands.append(Command(tuple(argv), state["cwd"], via, builtin=True))
            return
        if name == "command":
            _command_builtin(argv, state, home, out, depth=depth, via=via, detached=detached)
            return
    if base in PRIVILEGED:
        out.privileged.append(base)
    unwrap = _WRAPPERS.get(base)
    if unwrap is not None:
        # the wrapper is a program too: the policy checks it is the system's, not a look-alike
        out.wrappers.append(Command(tuple(argv), state["cwd"], via, default_path=default_path))
        unwrap(argv, state, home, out, depth=depth, via=via, detached=detached, default_path=default_path)
        return
    out.commands.append(Command(tuple(argv), state["cwd"], via, default_path=default_path))


def _expand_tilde(name: str, home: str | None) -> str | None:
    if name == "~" or name.startswith("~/"):
        return None if home is None else home + name[1:]
    return None


# --- builtins ----------------------------------------------------------------------------


def _builtin(argv: list[Word], state: dict, home: str | None, out: _Collector, *, detached: bool) -> None:
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
        _cd(args, state, home, detached=detached or bool(unfixed))
    elif unfixed:
        return
    elif name in ("test", "["):
        if any(w.value in ("-v", "-R") for w in args):
            out.problem(f"{name} -v/-R looks a variable up by a name bash evaluates as arithmetic (which can run commands)")
    elif name in ("export", "readonly"):
        _export(name, args, out)
    elif name == "set":
        _set(args, out)
    elif name == "wait":
        if any(w.value.startswith("-") for w in args):
            out.problem("wait with options (wait -p sets a variable)")


def _cd(args: list[Word], state: dict, home: str | None, *, detached: bool) -> None:
    physical = False
    while args and args[0].value.startswith("-") and args[0].value != "-":
        flag = args[0].value
        args = args[1:]
        if flag == "--":
            break
        if flag == "-P":
            physical = True
        elif flag != "-L":
            state["cwd"] = state["pwd"] = None  # cd -e, -@ ...: not followed
            return
    mode = state.get("cd_mode", "first")
    if detached or mode == "unknown" or state["cwd"] is None or len(args) > 1:
        state["cwd"] = state["pwd"] = None
        return
    if not args:
        target = home
    elif args[0].value == "-":
        target = None
    elif args[0].tilde:
        target = _expand_tilde(args[0].value, home)
    else:
        target = args[0].value
    if not target:
        state["cwd"] = state["pwd"] = None
        return
    if physical:
        logical = real_path(os.path.join(state["cwd"], target))
    else:  # the shell's default: ".." removes the last component of $PWD, not of the real path
        logical = os.path.normpath(os.path.join(state["pwd"] or state["cwd"], target))
    real = real_path(logical) if logical is not None else None
    if real is None or not (os.path.isdir(real) and os.access(real, os.X_OK)):
        # the cd may fail (or the directory may appear later): then what follows runs elsewhere
        state["cwd"] = state["pwd"] = None
        return
    state["cwd"], state["pwd"] = real, logical
    if mode == "and":  # it may not have run: after its and-or list, the directory is unknown
        state["reset_at_end"] = True


def _printf(args: list[Word], out: _Collector) -> None:
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


def _export(name: str, args: list[Word], out: _Collector) -> None:
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


def _set(args: list[Word], out: _Collector) -> None:
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


def _command_builtin(argv: list[Word], state: dict, home: str | None, out: _Collector, *, depth: int, via: tuple[str, ...], detached: bool) -> None:
    """``command [-p] NAME ...`` runs NAME (a builtin or a program); ``-v``/``-V`` only print."""
    rest = argv[1:]
    default_path = False
    while rest and rest[0].value.startswith("-") and rest[0].value != "-":
        flag = rest[0].value
        rest = rest[1:]
        if flag == "--":
            break
        if flag in ("-v", "-V"):
            return  # only prints how a name resolves
        if flag == "-p":
            default_path = True
        else:
            out.problem(f"command option {flag!r} is not understood")
            return
    if rest:
        _command(rest, state, home, out, depth=depth, via=(*via, "command"), detached=detached, default_path=default_path, wrapped=True)


# --- wrappers: programs that start another program --------------------------------------


def _rest_after_options(argv: list[Word], takes_value: set[str], flags: set[str], out: _Collector, *, positional: int = 0) -> list[Word] | None:
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
        if key in flags and "=" not in text[len(key):len(key) + 1]:
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


def _then(rest: list[Word] | None, label: str, state: dict, home: str | None, out: _Collector, *, depth: int, via: tuple[str, ...], detached: bool, default_path: bool = False) -> None:
    if rest:
        _command(rest, state, home, out, depth=depth, via=(*via, label), detached=detached, default_path=default_path, wrapped=True, builtins=False)


def _shell(argv, state, home, out, *, depth, via, detached, default_path):
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
        out.problem(f"{name} without -c runs a script the analysis cannot see")
        return
    if not script.literal:
        out.problem(f"the script given to {name} -c is not a fixed word")
        return
    inner = {"cwd": state["cwd"], "pwd": state["pwd"]}  # a new shell: its cd stays inside
    _script(script.value, inner, home, out, depth=depth + 1, via=(*via, f"{name} -c"))


def _env(argv, state, home, out, *, depth, via, detached, default_path):
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
    _then(rest, "env", state, home, out, depth=depth, via=via, detached=detached, default_path=default_path)


def _simple_wrapper(label: str, takes_value: set[str], flags: set[str], positional: int = 0):
    def unwrap(argv, state, home, out, *, depth, via, detached, default_path):
        rest = _rest_after_options(argv, takes_value, flags, out, positional=positional)
        if rest is None:
            return
        _then(rest, label, state, home, out, depth=depth, via=via, detached=detached, default_path=default_path)

    return unwrap


def _nice(argv, state, home, out, *, depth, via, detached, default_path):
    if len(argv) > 1 and re.fullmatch(r"-[0-9]+", argv[1].value):
        argv = [argv[0], *argv[2:]]  # nice -10 cmd
    _simple_wrapper("nice", {"-n", "--adjustment"}, set())(argv, state, home, out, depth=depth, via=via, detached=detached, default_path=default_path)


def _xargs(argv, state, home, out, *, depth, via, detached, default_path):
    """xargs is never looked through: the arguments it adds come from its input."""
    out.problem("xargs runs a command with arguments read from its input, which cannot be checked")
    rest = _rest_after_options(argv, XARGS_VALUES, XARGS_FLAGS, _Collector())  # for the destructive check only
    _then(rest or [Word("echo", "echo")], "xargs", state, home, out, depth=depth, via=via, detached=detached, default_path=default_path)


def _privileged(argv, state, home, out, *, depth, via, detached, default_path):
    name = os.path.basename(argv[0].value)
    if name == "su":
        out.problem("su runs a shell as another user")
        return
    rest = _rest_after_options(
        argv,
        {"-u", "--user", "-g", "--group", "-C", "--close-from", "-h", "--host", "-p", "--prompt", "-r", "--role", "-t", "--type", "-D", "--chdir", "-U", "--other-user", "-c", "--command", "-s"},
        {"-E", "-H", "-n", "-S", "-k", "-K", "-b", "-P", "-A", "-i", "-l", "--login", "--preserve-env", "--non-interactive", "--stdin", "--"},
        out,
    )
    _then(rest, name, state, home, out, depth=depth, via=via, detached=detached)


def _find(argv, state, home, out, *, depth, via, detached, default_path):
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
            inner = [attrs.evolve(w, placeholder=True) if "{}" in w.value else w for w in argv[i + 1:j]]
            if not inner:
                out.problem(f"find {text} without a command")
            else:
                # -execdir runs in each file's directory: a relative program path there is unknown
                inner_state = {"cwd": None, "pwd": None} if text.endswith("dir") else state
                _command(inner, inner_state, home, out, depth=depth, via=(*via, f"find {text}"), detached=detached, wrapped=True, builtins=False)
            i = j + 1
        else:
            i += 1


XARGS_VALUES = {
    "-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a", "--arg-file", "--delimiter", "--max-lines", "--max-args",
    "--max-procs", "--max-chars", "--eof", "--replace", "--process-slot-var",
}
XARGS_FLAGS = {
    "-0", "-r", "-t", "-p", "-x", "-o", "--null", "--no-run-if-empty", "--verbose", "--interactive", "--exit",
    "--open-tty", "-i", "-l", "-e",
}

_WRAPPERS = {
    **{name: _shell for name in SHELLS},
    "env": _env,
    "nice": _nice,
    "nohup": _simple_wrapper("nohup", set(), set()),
    "timeout": _simple_wrapper(
        "timeout", {"-s", "--signal", "-k", "--kill-after"}, {"--preserve-status", "--foreground", "-v", "--verbose"}, positional=1
    ),
    "stdbuf": _simple_wrapper("stdbuf", {"-i", "-o", "-e", "--input", "--output", "--error"}, set()),
    # not -o/--output or -a/--append: they write a file
    "time": _simple_wrapper("time", {"-f", "--format"}, {"-p", "-v", "--verbose", "--portability", "-q", "--quiet"}),
    "xargs": _xargs,
    **{name: _privileged for name in PRIVILEGED},
    "find": _find,
}
