"""Which programs a command line would start: every command of every pipeline and chain.

``exec`` does not judge ``sh -c '...'`` by ``sh``: the analysis splits the line into simple
commands (on ``|``, ``||``, ``&&``, ``;``, ``&`` and newlines), then looks through the
wrappers that merely start another program (``sh -c``, ``env``, ``nice``, ``timeout``,
``xargs``, ``find -exec`` ...) to the programs they start. Whatever it cannot pin down is
listed in ``Analysis.problems`` so the policy asks rather than allows: expansions or globs
in command position, ``eval``/``source``, subshells, here-documents, unknown wrapper options.
"""

from __future__ import annotations

import os
import re

import attrs

from clawbot_tools.runtime.shell_lexer import Op, Word, lex

MAX_DEPTH = 8
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")

# Builtins of /bin/sh that run inside the shell and start no program; they count as allowed.
SAFE_BUILTINS = frozenset({
    "cd", "pwd", "echo", "printf", "true", "false", "test", "[", ":", "exit", "export",
    "unset", "set", "wait", "read", "shift", "readonly", "local", "umask",
})
# Builtins that run code the analysis cannot see.
OPAQUE_BUILTINS = {
    "eval": "eval runs a string as a command",
    "source": "source runs a script file",
    ".": ". (source) runs a script file",
    "trap": "trap runs a command later",
    "alias": "alias redefines commands",
    "builtin": "builtin is not analysed",
    "coproc": "coproc is not analysed",
    "function": "a function definition",
    "case": "a case statement",
    "select": "a select loop",
    "{": "a { ... } command group",
    "}": "a { ... } command group",
    "[[": "a [[ ... ]] test",
}
PREFIX_KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!"})
END_KEYWORDS = frozenset({"fi", "done"})
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


class _Collector:
    def __init__(self) -> None:
        self.commands: list[Command] = []
        self.redirects: list[Redirect] = []
        self.problems: list[str] = []
        self.privileged: list[str] = []
        self.wrappers: list[Command] = []
        self.assigned: list[str] = []

    def problem(self, text: str) -> None:
        if text not in self.problems:
            self.problems.append(text)


def analyse(command: str, cwd: str, home: str | None = None) -> Analysis:
    """Every program ``command`` starts when run by ``/bin/sh`` in ``cwd``."""
    out = _Collector()
    _script(command, cwd, home, out, depth=0, via=())
    return Analysis(
        tuple(out.commands), tuple(out.redirects), tuple(out.problems), tuple(out.privileged), tuple(out.wrappers), tuple(out.assigned)
    )


def _script(source: str, cwd: str | None, home: str | None, out: _Collector, *, depth: int, via: tuple[str, ...]) -> None:
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
    state = {"cwd": cwd}

    def finish(next_op: str | None) -> None:
        nonlocal segment, redirects, in_pipeline
        piped = in_pipeline or next_op in ("|", "|&")
        out.redirects.extend(attrs.evolve(r, cwd=state["cwd"]) for r in redirects)
        if segment:
            _simple(segment, state, home, out, depth=depth, via=via, piped=piped)
        in_pipeline = next_op in ("|", "|&")
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


def _simple(words: list[Word], state: dict, home: str | None, out: _Collector, *, depth: int, via: tuple[str, ...], piped: bool) -> None:
    """One simple command (already split from its neighbours)."""
    # keywords of if/while/for that precede a command
    while words and not words[0].quoted and words[0].value in PREFIX_KEYWORDS:
        words = words[1:]
    if not words:
        return
    first = words[0]
    if not first.quoted and first.value in END_KEYWORDS:
        if len(words) > 1:
            out.problem(f"words after {first.value!r}")
        return
    if not first.quoted and first.value == "for":
        return  # "for x in a b": only the loop body runs programs, and it is its own segment
    # leading VAR=value assignments
    while words and not words[0].quoted and ASSIGNMENT.match(words[0].raw):
        out.assigned.append(words[0].raw.split("=", 1)[0])
        words = words[1:]
    if not words:
        return
    _command(list(words), state, home, out, depth=depth, via=via, piped=piped)


def _command(argv: list[Word], state: dict, home: str | None, out: _Collector, *, depth: int, via: tuple[str, ...], piped: bool, default_path: bool = False, wrapped: bool = False) -> None:
    head = argv[0]
    if not head.literal:
        out.problem(f"the program name {head.raw!r} is not a fixed word (a variable, glob or substitution)")
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
    if not wrapped and "/" not in name:
        if name in OPAQUE_BUILTINS:
            out.problem(OPAQUE_BUILTINS[name])
            return
        if name in SAFE_BUILTINS:
            _builtin(argv, state, home, out, piped=piped)
            out.commands.append(Command(tuple(argv), state["cwd"], via, builtin=True))
            return
        if name == "exec" or name == "command":
            _shell_exec_or_command(argv, state, home, out, depth=depth, via=via, piped=piped)
            return
    if base in PRIVILEGED:
        out.privileged.append(base)
    unwrap = _WRAPPERS.get(base)
    if unwrap is not None:
        # the wrapper is a program too: the policy checks it is the system's, not a look-alike
        out.wrappers.append(Command(tuple(argv), state["cwd"], via, default_path=default_path))
        unwrap(argv, state, home, out, depth=depth, via=via, piped=piped, default_path=default_path)
        return
    out.commands.append(Command(tuple(argv), state["cwd"], via, default_path=default_path))


def _expand_tilde(name: str, home: str | None) -> str | None:
    if name == "~" or name.startswith("~/"):
        return None if home is None else home + name[1:]
    return None


def _builtin(argv: list[Word], state: dict, home: str | None, out: _Collector, *, piped: bool) -> None:
    name = argv[0].value
    if name == "cd":
        args = [w for w in argv[1:] if w.value not in ("-L", "-P", "--")]
        if piped or state["cwd"] is None:
            state["cwd"] = None
        elif not args:
            state["cwd"] = home
        elif not args[0].literal or args[0].value == "-":
            state["cwd"] = None
        else:
            target = _expand_tilde(args[0].value, home) if args[0].tilde else args[0].value
            state["cwd"] = None if target is None else os.path.realpath(os.path.join(state["cwd"], target))
    elif name in ("export", "readonly", "local"):
        for word in argv[1:]:
            if ASSIGNMENT.match(word.value):
                out.assigned.append(word.value.split("=", 1)[0])


def _shell_exec_or_command(argv: list[Word], state: dict, home: str | None, out: _Collector, *, depth: int, via: tuple[str, ...], piped: bool) -> None:
    name = argv[0].value
    rest = argv[1:]
    default_path = False
    while rest and rest[0].value.startswith("-") and rest[0].value != "-":
        flag = rest[0].value
        rest = rest[1:]
        if flag == "--":
            break
        if name == "command" and flag in ("-v", "-V"):
            return  # only prints how a name resolves
        if name == "command" and flag == "-p":
            default_path = True
        elif name == "exec" and flag == "-a" and rest:
            rest = rest[1:]
        elif name == "exec" and flag in ("-c", "-l", "-cl", "-lc"):
            pass
        else:
            out.problem(f"{name} option {flag!r} is not understood")
            return
    if rest:
        _command(rest, state, home, out, depth=depth, via=(*via, name), piped=piped, default_path=default_path, wrapped=True)


# --- wrappers: programs that start another program --------------------------------------


def _rest_after_options(argv: list[Word], takes_value: set[str], flags: set[str], out: _Collector, *, positional: int = 0) -> list[Word] | None:
    """``argv`` without its program name, options and ``positional`` leading operands.

    Options in ``takes_value`` consume the next word (or an attached ``=value`` / ``-nVALUE``);
    options in ``flags`` consume nothing. Anything else is a problem (``None``).
    """
    name = argv[0].value
    rest = argv[1:]
    while rest:
        word = rest[0]
        text = word.value
        if text == "--":
            rest = rest[1:]
            break
        if not text.startswith("-") or text == "-":
            break
        if not word.literal:
            out.problem(f"{os.path.basename(name)} option {word.raw!r} is not a fixed word")
            return None
        key = text.split("=", 1)[0]
        if key in flags:
            rest = rest[1:]
        elif key in takes_value:
            rest = rest[1:] if "=" in text else rest[2:]
        elif text[:2] in takes_value and len(text) > 2 and not text.startswith("--"):
            rest = rest[1:]  # -n5, -oL
        elif re.fullmatch(r"-[A-Za-z]+", text) and all(f"-{c}" in flags for c in text[1:]):
            rest = rest[1:]  # -0rt
        else:
            out.problem(f"{os.path.basename(name)} option {text!r} is not understood")
            return None
    for _ in range(positional):
        if not rest:
            return []
        rest = rest[1:]
    return rest


def _then(rest: list[Word] | None, label: str, state: dict, home: str | None, out: _Collector, *, depth: int, via: tuple[str, ...], piped: bool, default_path: bool = False) -> None:
    if rest:
        _command(rest, state, home, out, depth=depth, via=(*via, label), piped=piped, default_path=default_path, wrapped=True)


def _shell(argv, state, home, out, *, depth, via, piped, default_path):
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
        if text in ("-o", "+o", "-O", "+O"):
            rest = rest[2:]
            continue
        if text.startswith("--"):
            if text not in ("--login", "--norc", "--noprofile", "--posix", "--noediting", "--restricted"):
                out.problem(f"{name} option {text!r} is not understood")
                return
            rest = rest[1:]
            continue
        if text[0] in "-+" and len(text) > 1:
            if "c" in text[1:]:
                wants_script = True
            if "s" in text[1:] or "i" in text[1:]:
                out.problem(f"{name} {text} reads commands from its input")
                return
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
    _script(script.value, state["cwd"], home, out, depth=depth + 1, via=(*via, f"{name} -c"))


def _env(argv, state, home, out, *, depth, via, piped, default_path):
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
            rest = rest[2:]
        elif text.startswith(("--unset=", "-u")) and len(text) > 2:
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
        out.assigned.append(rest[0].value.split("=", 1)[0])
        rest = rest[1:]
    if not rest:
        out.commands.append(Command(tuple(argv), state["cwd"], via))  # env alone prints the environment
        return
    _then(rest, "env", state, home, out, depth=depth, via=via, piped=piped, default_path=default_path)


def _simple_wrapper(label: str, takes_value: set[str], flags: set[str], positional: int = 0):
    def unwrap(argv, state, home, out, *, depth, via, piped, default_path):
        rest = _rest_after_options(argv, takes_value, flags, out, positional=positional)
        if rest is None:
            return
        if not rest and label == "xargs":  # xargs with no command runs echo
            rest = [Word("echo", "echo")]
        _then(rest, label, state, home, out, depth=depth, via=via, piped=piped, default_path=default_path)

    return unwrap


def _nice(argv, state, home, out, *, depth, via, piped, default_path):
    if len(argv) > 1 and re.fullmatch(r"-\d+", argv[1].value):
        argv = [argv[0], *argv[2:]]  # nice -10 cmd
    _simple_wrapper("nice", {"-n", "--adjustment"}, set())(argv, state, home, out, depth=depth, via=via, piped=piped, default_path=default_path)


def _privileged(argv, state, home, out, *, depth, via, piped, default_path):
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
    _then(rest, name, state, home, out, depth=depth, via=via, piped=piped)


def _find(argv, state, home, out, *, depth, via, piped, default_path):
    """find itself is a program (judged as such); each -exec/-ok command is another one."""
    out.commands.append(Command(tuple(argv), state["cwd"], via))
    i = 1
    while i < len(argv):
        text = argv[i].value
        if text in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(argv) and argv[j].value not in (";", "+"):
                j += 1
            inner = argv[i + 1:j]
            if not inner:
                out.problem(f"find {text} without a command")
            else:
                # -execdir runs in each file's directory: a relative program path there is unknown
                inner_state = {"cwd": None} if text.endswith("dir") else state
                _command(inner, inner_state, home, out, depth=depth, via=(*via, f"find {text}"), piped=piped, wrapped=True)
            i = j + 1
        else:
            i += 1


_WRAPPERS = {
    **{name: _shell for name in SHELLS},
    "env": _env,
    "nice": _nice,
    "nohup": _simple_wrapper("nohup", set(), set()),
    "timeout": _simple_wrapper(
        "timeout", {"-s", "--signal", "-k", "--kill-after"}, {"--preserve-status", "--foreground", "-v", "--verbose"}, positional=1
    ),
    "stdbuf": _simple_wrapper("stdbuf", {"-i", "-o", "-e", "--input", "--output", "--error"}, set()),
    "time": _simple_wrapper("time", {"-f", "--format", "-o", "--output"}, {"-p", "-v", "--verbose", "-a", "--append", "--portability", "-q", "--quiet"}),
    "xargs": _simple_wrapper(
        "xargs",
        {"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a", "--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--eof", "--replace", "--process-slot-var"},
        {"-0", "-r", "-t", "-p", "-x", "-o", "--null", "--no-run-if-empty", "--verbose", "--interactive", "--exit", "--open-tty", "-i", "-l", "-e"},
    ),
    **{name: _privileged for name in PRIVILEGED},
    "find": _find,
}
