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

``cd`` is not followed: after any ``cd`` (or ``pushd``/``popd``, which ask anyway) the
working directory is unknown for the rest of the line, so a relative program path after it
(``cd /usr/bin && ./rm``) cannot be resolved and asks. Where a command may read or write is
no longer the analysis's business: the OS sandbox confines it (see
:mod:`~clawbot_tools.runtime.sandbox`). What the analysis still records for the case without
a sandbox is what names files: globs (they list directories) and ``test``/``[`` file tests,
in ``Analysis.reveals``.

This module walks the line into commands; ``shell_builtins``
judges builtins, ``shell_wrappers`` looks through wrappers, ``shell_types`` holds the
shared types.
"""

from __future__ import annotations

import os

import attrs

from clawbot_tools.runtime.shell_builtins import (
    OPAQUE_BUILTINS,
    PRINTERS,
    SAFE_BUILTINS,
    judge_builtin,
)
from clawbot_tools.runtime.shell_lexer import Op, Word, lex
from clawbot_tools.runtime.shell_types import (
    ASSIGNMENT,
    Analysis,
    Collector,
    Command,
    Redirect,
    Walk,
    expand_tilde,
)
from clawbot_tools.runtime.shell_wrappers import PRIVILEGED, WRAPPERS, command_builtin

__all__ = ["Analysis", "Command", "Redirect", "Word", "analyse"]

MAX_DEPTH = 8  # sh -c inside sh -c ...
MAX_WRAPPERS = 16  # wrappers around one program

# Reserved words: compound commands the analysis does not follow ("!" only negates the
# exit status of the pipeline after it, and is looked through; "time" is a wrapper).
KEYWORDS = frozenset(
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
        "[[",
        "]]",
        "coproc",
    }
)
# After these keywords the rest of the simple command is a command (analysed too);
# after the others it is names, patterns or a test expression.
KEYWORDS_BEFORE_A_COMMAND = frozenset({"if", "then", "else", "elif", "while", "until", "do", "{", "coproc"})


def analyse(command: str, cwd: str, home: str | None = None) -> Analysis:
    """Every program ``command`` starts when run by ``/bin/sh`` in ``cwd`` (a real path)."""
    out = Collector()
    _script(command, {"cwd": cwd}, home, out, depth=0, via=())
    if out.keywords:
        out.problem(f"shell keywords ({', '.join(out.keywords)}): compound commands (if, for, while, case, {{ }}, [[ ]] ...) are not analysed")
    return Analysis(
        tuple(out.commands),
        tuple(out.redirects),
        tuple(out.problems),
        tuple(out.privileged),
        tuple(out.wrappers),
        tuple(out.assigned),
        tuple(out.assignments),
        tuple(out.reveals),
        tuple(out.segments),
        tuple(out.unread),
    )


def _script(source: str, state: dict, home: str | None, out: Collector, *, depth: int, via: tuple[str, ...]) -> None:
    """``state``: ``cwd``, the real directory commands run in (None: unknown, after a ``cd``)."""
    if depth > MAX_DEPTH:
        out.unreadable("shell scripts nested too deeply")
        return
    lexed = lex(source)
    for problem in lexed.problems:
        out.unreadable(problem)
    segment: list[Word] = []
    redirects: list[Redirect] = []
    pending_redirect: Op | None = None

    def finish(next_op: str | None) -> None:
        nonlocal segment, redirects
        out.redirects.extend(attrs.evolve(r, cwd=state["cwd"]) for r in redirects)
        if segment:
            _simple(segment, state, home, out, depth=depth, via=via)
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


def _simple(words: list[Word], state: dict, home: str | None, out: Collector, *, depth: int, via: tuple[str, ...]) -> None:
    """One simple command (already split from its neighbours)."""
    out.segments.append((tuple(words), state["cwd"]))
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
        if word.glob and index >= start:
            out.reveal(f"the glob {word.raw!r} lists file names")
        if printer and index > start and not (word.brace and argv[0].value == "printf"):  # printf {-v,PATH}
            continue  # echo/printf arguments are only printed (printf's format is checked in judge_builtin)
        if word.expands:
            out.problem(f"{word.raw!r} holds an expansion ($, a substitution, or a ~ after =) whose value is not known here")
        elif word.brace:
            out.problem(f"{word.raw!r} may be a brace expansion (bash makes several words of it)")
    if argv:
        _command(list(argv), state, home, out, depth=depth, via=via)


def _command(
    argv: list[Word],
    state: dict,
    home: str | None,
    out: Collector,
    *,
    depth: int,
    via: tuple[str, ...],
    default_path: bool = False,
    wrapped: bool = False,
    builtins: bool = True,
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
        name = expand_tilde(name, home)
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
            judge_builtin(argv, state, out)
            out.commands.append(Command(tuple(argv), state["cwd"], via, builtin=True))
            return
        if name == "command":
            command_builtin(_WALK, argv, state, home, out, depth=depth, via=via)
            return
    if base in PRIVILEGED:
        out.privileged.append(base)
    unwrap = WRAPPERS.get(base)
    if unwrap is not None:
        # the wrapper is a program too: the policy checks it is the system's, not a look-alike
        out.wrappers.append(Command(tuple(argv), state["cwd"], via, default_path=default_path))
        unwrap(_WALK, argv, state, home, out, depth=depth, via=via, default_path=default_path)
        return
    out.commands.append(Command(tuple(argv), state["cwd"], via, default_path=default_path))


# the wrappers go on with these (see Walk)
_WALK = Walk(script=_script, command=_command)
