"""The files a command line runs or names that the agent can rewrite, bound by their content.

"Allow always" for an exact command (``python3 build.py`` with network, or outside the
sandbox) covers what the owner approved: the command line *and* the files it runs. The
workspace, the ``sandbox_write`` paths and the session's temp dir can be rewritten by any
later turn without asking, so the approval records each file there that the line names,
by content (sha256), and the command asks again when one of them changed, vanished,
appeared, or became a symlink.

Which files (:func:`bind`): every word of every simple command (``sh -c`` scripts
included) and every redirection it reads from, read as a path from the directory the command runs
in (and the value of ``--option=value`` and ``NAME=value`` words), that lies in one of
those trees; a program found on ``PATH`` inside them; and what the line runs without
naming it:

* ``make`` (without ``-C``): the makefiles of its directory;
* ``python3 x.py``, and ``./x.py`` whose ``#!`` line names Python: every name Python's
  import finds beside the script before the standard library: modules with each suffix of
  ``importlib.machinery.all_suffixes()``, packages' ``__init__`` with each of them, and the
  cached bytecode in ``__pycache__`` (an unchecked ``.pyc`` runs whatever its source says).
  A module or package appearing there is a file that appeared;
* a program inside those trees run by its name: itself, and what its ``#!`` line's
  interpreter adds (above); an interpreter not known here makes the line unsure;
* ``. lib.sh``, ``source lib.sh``, ``bash x.sh`` with a name without ``/``: the file in
  the directory and the file of that name in each ``PATH`` folder (``sh`` looks on ``PATH``
  only, ``bash`` on ``PATH`` then in the directory; the binding holds both);
* ``node build``: ``build`` and the files Node tries for it (``build.js``, ``.mjs``,
  ``.cjs``, ``.json``, ``.node``).

A word with ``..`` is read as the kernel reads it: the folder before the last ``..`` is
resolved through its symlinks first (``a/../x`` is not ``x`` when ``a`` is a link).
What those files load in turn (a script another script runs, modules deeper in a package,
a file a program opens by a name in its own text) is not followed.

``Binding.unsure`` says why the files a line runs cannot all be named: text the analysis
could not take apart, a word that is not fixed (``$X``, a glob), a relative word after
``cd``, code given on the command line (``python3 -c``, ``-m``, ``node -e``), an
interpreter of a virtual environment in the workspace, named, found on ``PATH`` or in a
``#!`` line (it loads the packages there), a ``#!`` interpreter not known here, builtins
that run text (``eval``), variables that change what programs load, or a program that may run
workspace files it is not given by name (build tools, package managers, test runners,
``git`` with its hooks ...). Known are only programs that run no code from their arguments
(:data:`~clawbot_tools.runtime.exec_policy.ALWAYS_OK`), interpreters given a script file,
shells given a script file, ``source``, ``make``, and programs inside those trees
(which are bound themselves). exec does not offer "always" for an unsure line that runs
with more than the sandbox gives.
"""

from __future__ import annotations

import errno
import glob
import hashlib
import importlib.machinery
import logging
import os
import re
import stat
from collections.abc import Iterable, Mapping

import attrs
from clawbot.paths import inside

from clawbot_tools.runtime.envscrub import settable
from clawbot_tools.runtime.exec_policy import ALWAYS_OK, MAX_ANALYSED_CHARS
from clawbot_tools.runtime.executables import real_path, resolve, which
from clawbot_tools.runtime.shell_analysis import Command, Word, analyse
from clawbot_tools.runtime.shell_builtins import OPAQUE_BUILTINS
from clawbot_tools.runtime.shell_wrappers import SCRIPT_FILE, SHELLS

log = logging.getLogger(__name__)

MAX_FILES = 200  # more than this many bound files: the line cannot be bound
MAX_FILE_BYTES = 64 * 1024 * 1024  # a larger file is not read to compare it
CHUNK = 1024 * 1024
SOURCING = frozenset({"source", "."})
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
MAKE = frozenset({"make", "gmake"})
# interpreters given a script file, and their options known to change nothing about which
# code runs (-c, -m, -e, -r, -I lib ... are not: code or modules the line does not name)
INTERPRETER_OPTIONS: dict[str, frozenset[str]] = {
    "python": frozenset("-u -B -E -I -O -OO -s -S -b -bb -q -v -vv -d -R -x -P".split()),
    "node": frozenset({"--no-warnings", "--trace-warnings", "--enable-source-maps", "--trace-uncaught"}),
    "perl": frozenset({"-w", "-W", "-X", "-T", "-t"}),
    "ruby": frozenset({"-w", "-W"}),
    "php": frozenset({"-n"}),
}
INTERPRETER_NAMES = (
    ("python", re.compile(r"python(\d+(\.\d+)?)?|pypy3?")),
    ("node", re.compile(r"node|nodejs")),
    ("perl", re.compile(r"perl(\d+(\.\d+)*)?")),
    ("ruby", re.compile(r"ruby(\d+(\.\d+)*)?")),
    ("php", re.compile(r"php(\d+(\.\d+)*)?")),
)
# network clients that run nothing they are not given by name (their configuration lives in the home)
NAMED_ONLY = frozenset({"curl", "wget"})
# what Python's import finds beside a script (``*.so`` also covers ``.cpython-3X-....so``)
PYTHON_SUFFIXES = tuple(dict.fromkeys(importlib.machinery.all_suffixes()))
PYTHON_MODULES = (
    *(f"*{suffix}" for suffix in PYTHON_SUFFIXES),
    *(f"*/__init__{suffix}" for suffix in PYTHON_SUFFIXES),
    "__pycache__/*.pyc",
    "*/__pycache__/__init__.*.pyc",
)
# what ``node NAME`` tries when NAME is not a file
NODE_EXTENSIONS = (".js", ".mjs", ".cjs", ".json", ".node")
# shell options that take the next word as their value, and those after which no script file is read
SHELL_OPTION_VALUES = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
SHELL_NO_SCRIPT = frozenset("cs")
SHEBANG_BYTES = 256  # Linux reads no more of a #! line


@attrs.frozen
class Binding:
    """``files``: bound path -> what it is now (compared as text); ``unsure``: why the files
    the line runs cannot all be named (None: they can)."""

    files: Mapping[str, str] = attrs.field(factory=dict)
    unsure: str | None = None


class _TooLarge(Exception):
    pass


def bind(command: str, *, cwd: str, roots: Iterable[str], path_value: str, home: str | None) -> Binding:
    """The files ``command``, run in ``cwd``, runs or names inside ``roots`` (real paths).
    Never raises: what cannot be worked out makes the binding unsure."""
    if len(command) > MAX_ANALYSED_CHARS:
        return Binding({}, f"the line is too long to check ({len(command):,} characters)")
    try:
        return _bind(command, cwd, tuple(roots), path_value, home)
    except Exception:  # a bug here must not let a changed file run unasked
        log.exception("exec: the files %r runs could not be bound", command[:200])
        return Binding({}, "the files it runs could not be worked out")


def _bind(command: str, cwd: str, roots: tuple[str, ...], path_value: str, home: str | None) -> Binding:
    analysis = analyse(command, cwd, home)
    reasons: list[str] = []
    paths: list[str] = []

    def why(reason: str) -> None:
        if reason not in reasons:
            reasons.append(reason)

    for problem in analysis.unread:
        why(f"part of the line cannot be taken apart ({problem})")
    for problem in analysis.problems:
        if problem not in analysis.unread and not _names_its_script(problem):
            why(f"the line holds what the analysis cannot pin down ({problem})")
    for name, value in analysis.assignments:
        if not settable(name, value):
            why(f"it sets {name}, which may change what the programs load")
    words = [(word, where) for segment, where in analysis.segments for word in segment]
    words += [(r.target, r.cwd) for r in analysis.redirects if r.target is not None and _read_from(r.op)]
    for word, where in words:
        if not word.literal:
            why(f"{word.raw!r} is not a fixed word (a variable, glob or substitution may name any file)")
            continue
        for text, tilde in _candidates(word):
            try:
                path = _absolute(text, tilde, where, home)
            except LookupError:
                why(f"{word.raw!r} leads through a folder whose real place is not known")
                continue
            if path is None and where is None and not tilde:
                why(f"after cd, the directory {word.raw!r} is read in is not known")
            elif path is not None:
                paths.append(path)
    for segment, _where in analysis.segments:
        head = segment[0].value if segment else ""
        if head in OPAQUE_BUILTINS and head not in SOURCING:
            why(f"{head} is not followed ({OPAQUE_BUILTINS[head]})")
        script = _sourced_or_shell_script(segment)
        try:
            paths += [] if script is None else _on_path(script, path_value, _where)
        except LookupError:
            why(f"which file {script!r} is depends on a PATH folder whose real place is not known")
    for command_ in analysis.commands:
        if command_.builtin:
            continue
        found = _program(command_, path_value, roots)
        if isinstance(found, str):
            why(found)
        else:
            paths += found
    if reasons:  # the first says why; the files that can be named are still bound
        return Binding(_states(paths, roots, lenient=True), reasons[0])
    try:
        files = _states(paths, roots)
    except _TooLarge as exc:  # unsure; what can be compared is still bound
        return Binding(_states(paths, roots, lenient=True), str(exc))
    return Binding(files)


def changes(allowed: Mapping[str, str], now: Mapping[str, str]) -> list[tuple[str, str]]:
    """What differs between the files bound to an approval and the files now: (path, what happened)."""
    found = []
    for path in sorted(set(allowed) | set(now)):
        before, after = allowed.get(path), now.get(path)
        if before == after:
            continue
        if before is None:
            found.append((path, "appeared"))
        elif after is None:
            found.append((path, "is gone"))
        elif after.startswith("symlink") and not before.startswith("symlink"):
            found.append((path, "became a symlink"))
        else:
            found.append((path, "changed"))
    return found


def _read_from(op: str) -> bool:
    """Whether a redirection reads its target: ``<``, ``<>``, ``<&``; what ``>`` writes runs nothing,
    and binding it would ask again after every run. A here-document is text of the line."""
    op = op.lstrip("0123456789")
    return op.startswith("<") and op not in ("<<", "<<-", "<<<")


def _names_its_script(problem: str) -> bool:
    """The problems of ``source FILE`` and ``bash FILE``: the file is a word of the line, bound."""
    if problem in (OPAQUE_BUILTINS["source"], OPAQUE_BUILTINS["."]):
        return True
    return any(problem == SCRIPT_FILE.format(shell) for shell in SHELLS)


def _candidates(word: Word) -> list[tuple[str, bool]]:
    """The texts ``word`` may name a file by (with whether a leading ~ is the home): the
    word, unless an option, and what follows its first ``=`` (``--file=x``, ``NAME=x``)."""
    value = word.value
    texts = [] if value.startswith("-") else [(value, word.tilde)]
    if "=" in value:
        texts.append((value.partition("=")[2], False))
    return [(text, tilde) for text, tilde in texts if text]


def _absolute(text: str, tilde: bool, where: str | None, home: str | None) -> str | None:
    """The path ``text`` names from ``where``; ``LookupError`` when a ``..`` in it follows a
    folder whose real place is not known."""
    if tilde:
        if not home or not (text == "~" or text.startswith("~/")):
            return None  # ~user: no tree the agent writes
        text = home + text[1:]
    if not os.path.isabs(text):
        if where is None:
            return None
        text = os.path.join(where, text)
    return _as_the_kernel_reads(text)


def _as_the_kernel_reads(path: str) -> str:
    """Absolute ``path`` normalised as the kernel walks it: ``a/..`` is the parent of where
    ``a`` really leads, so the part up to the last ``..`` is resolved through its links."""
    parts = path.split("/")
    if ".." not in parts:
        return os.path.normpath(path)
    last = len(parts) - 1 - parts[::-1].index("..")
    folder = real_path("/".join(parts[: last + 1]) or "/")
    if folder is None:
        raise LookupError(path)
    return os.path.normpath(os.path.join(folder, *parts[last + 1 :]))


def _on_path(name: str, path_value: str, where: str | None) -> list[str]:
    """The files a shell may read for a script named ``name`` without ``/`` (``. lib.sh``,
    ``bash x.sh``): the one of that name in each ``PATH`` folder (the one in the directory
    is a word of the line, bound with the others). ``LookupError``: see :func:`_as_the_kernel_reads`."""
    if "/" in name or not name:
        return []
    found = []
    for folder in path_value.split(os.pathsep):
        if not os.path.isabs(folder or "."):
            if where is None:
                continue
            folder = os.path.join(where, folder)
        found.append(_as_the_kernel_reads(os.path.join(folder, name)))
    return found


def _program(command: Command, path_value: str, roots: tuple[str, ...]) -> list[str] | str:
    """The files ``command`` runs beyond its words, or why they cannot be named."""
    search = os.defpath if command.default_path else path_value
    try:
        program = resolve(command.name, search, command.cwd)
        named = os.path.normpath(os.path.join(command.cwd or "/", command.name)) if "/" in command.name else which(command.name, search, command.cwd)
    except LookupError:
        return f"which program {command.name!r} is depends on a directory that is not known"
    if program is None:
        return f"{command.name!r} is not found as a program yet"
    if any(inside(root, program.real) for root in roots):  # a program the agent can rewrite: bound itself
        added = _shebang(program.real, command.name, roots, search, command.cwd)
        return added if isinstance(added, str) else [program.real, *added]
    names = {program.name, os.path.basename(program.real)}
    if names <= ALWAYS_OK | NAMED_ONLY:
        return []
    if names & MAKE:
        if any(a.value in ("-C", "--directory") or a.value.startswith(("-C", "--directory=")) for a in command.argv[1:]):
            return "make -C reads a makefile elsewhere, which is not followed"
        return [] if command.cwd is None else [os.path.join(command.cwd, name) for name in MAKEFILES]
    if program.name in SHELLS:
        return []  # options already judged by the analysis; the script is a word of the line
    family = _interpreter(program.name)
    if family is None:
        return f"{program.name} may run files of the workspace that the line does not name"
    if named is not None and any(inside(root, named) for root in roots):  # ./.venv/bin/python, or found on PATH there
        return f"{command.name} is an interpreter of a virtual environment here, whose packages it loads are not followed"
    return _script(command, family)


def _sourced_or_shell_script(segment: tuple[Word, ...]) -> str | None:
    """The script a segment sources or gives a shell (``. lib.sh``, ``env bash x.sh``): after
    the first word that is ``.``, ``source`` or a shell, wrappers before it included."""
    for at, word in enumerate(segment):
        if word.value in SOURCING:
            following = segment[at + 1] if at + 1 < len(segment) else None
            return following.value if following is not None and following.literal else None
        if os.path.basename(word.value) in SHELLS:
            return _shell_script(segment[at + 1 :])
    return None


def _shell_script(args: Iterable[Word]) -> str | None:
    """The script file a shell is given (``bash x.sh``), or None (``-c``, ``-s``, its input)."""
    rest = iter(args)
    for word in rest:
        value = word.value
        if value == "--":
            script = next(rest, None)
            return script.value if script is not None and script.literal else None
        if value in SHELL_OPTION_VALUES:
            next(rest, None)
        elif value.startswith(("-", "+")):
            if not value.startswith("--") and SHELL_NO_SCRIPT & set(value[1:]):
                return None
        else:
            return value if word.literal else None
    return None


def _shebang(real: str, name: str, roots: tuple[str, ...], path_value: str, cwd: str | None) -> list[str] | str:
    """What the interpreter of program ``real``'s ``#!`` line runs beyond the program itself
    (the modules beside a Python script), or why that cannot be named. ``env NAME`` finds
    NAME on ``path_value``, as the kernel's ``env`` does."""
    line = _first_line(real)
    if line is None:
        return []  # not a script (a compiled program), or one the shell runs itself
    words = line.split()
    if not words:
        return f"{name} has an empty #! line"
    interpreter, options = words[0], words[1:]
    if os.path.basename(interpreter) == "env" and options:
        interpreter, options = options[0], options[1:]
        if interpreter.startswith("-"):
            return f"{name} is run by env {interpreter} (its #! line), which is not followed"
        try:
            found = which(interpreter, path_value, cwd) if "/" not in interpreter else interpreter
        except LookupError:
            return f"which {interpreter} runs {name} (its #! line) depends on a directory that is not known"
        if found is not None and any(inside(root, found) for root in roots):
            return f"{name} is run by {found} (its #! line), an interpreter of the workspace whose packages are not followed"
    elif not os.path.isabs(interpreter) or any(inside(root, interpreter) for root in roots):  # #!.venv/bin/python is read from the directory
        return f"{name} is run by {interpreter} (its #! line), an interpreter of the workspace whose packages are not followed"
    base = os.path.basename(interpreter)
    if base in SHELLS:
        return []
    family = _interpreter(base)
    if family is None:
        return f"{name} is run by {base} (its #! line), which may run files of the workspace that the line does not name"
    if any(option not in INTERPRETER_OPTIONS[family] for option in options):
        return f"{name} is run by {base} {' '.join(options)} (its #! line), which may run code the line does not name"
    return _python_modules(os.path.dirname(real)) if family == "python" else []


def _first_line(real: str) -> str | None:
    """The ``#!`` line of file ``real`` without ``#!`` (None: it has none)."""
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError:
        return None  # it cannot be run either; the file itself is bound
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        head = os.read(fd, SHEBANG_BYTES)
    finally:
        os.close(fd)
    if not head.startswith(b"#!"):
        return None
    return head[2:].split(b"\n", 1)[0].decode("utf-8", "replace")


def _python_modules(folder: str) -> list[str]:
    """Every file beside a script that Python's import may load (see :data:`PYTHON_MODULES`)."""
    found = (path for pattern in PYTHON_MODULES for path in sorted(glob.glob(os.path.join(glob.escape(folder), pattern))))
    return list(dict.fromkeys(found))


def _interpreter(name: str) -> str | None:
    return next((family for family, pattern in INTERPRETER_NAMES if pattern.fullmatch(name)), None)


def _script(command: Command, family: str) -> list[str] | str:
    known = INTERPRETER_OPTIONS[family]
    rest = list(command.argv[1:])
    while rest and rest[0].value.startswith("-") and rest[0].value != "-":
        if rest[0].value == "--":
            rest = rest[1:]
            break
        if rest[0].value not in known:
            return f"{command.name} {rest[0].value} runs code or modules the line does not name as files"
        rest = rest[1:]
    if not rest or rest[0].value == "-" or command.cwd is None:
        return []  # it reads its input (an approved command's is /dev/null unless interactive)
    script = os.path.join(command.cwd, rest[0].value)
    if os.path.isdir(script):
        return f"{command.name} {rest[0].value} runs a directory, whose files are not followed"
    if family == "node" and not os.path.isfile(script):  # node build runs build.js
        return [script + extension for extension in NODE_EXTENSIONS]
    if family != "python":
        return []
    return _python_modules(os.path.dirname(os.path.realpath(script)))


def _states(paths: list[str], roots: tuple[str, ...], *, lenient: bool = False) -> dict[str, str]:
    """Each of ``paths`` inside ``roots`` that exists -> what it is now."""
    found: dict[str, str] = {}
    for path in dict.fromkeys(paths):
        if not any(inside(root, path) or inside(root, os.path.realpath(path)) for root in roots):
            continue
        if len(found) >= MAX_FILES:
            if lenient:
                break
            raise _TooLarge(f"the line names more than {MAX_FILES} files of the workspace")
        try:
            state = _state(path)
        except _TooLarge:
            if lenient:
                continue
            raise
        if state is not None:
            found[path] = state
    return found


def _state(path: str) -> str | None:
    """What ``path`` is now (None: nothing there, or a plain directory, whose files a line
    runs only by naming them): its content's sha256, a special file; for a symlink, or a
    path through a linked directory, where it leads."""
    try:
        info = os.lstat(path)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        return f"unreadable ({exc.strerror})"
    real = os.path.realpath(path)
    if stat.S_ISDIR(info.st_mode) and real == path:
        return None
    if stat.S_ISLNK(info.st_mode):
        prefix = f"symlink to {real}: "
    elif real != path:
        prefix = f"through {real}: "
    else:
        prefix = ""
    return prefix + _content(real)


def _content(real: str) -> str:
    try:  # never blocks (a FIFO opens at once), never follows a link swapped in meanwhile
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return "missing"
        if exc.errno in (errno.ENXIO, errno.ENODEV):
            return "special file"
        return f"unreadable ({exc.strerror})"
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            return "directory"
        if not stat.S_ISREG(info.st_mode):
            return "special file"
        if info.st_size > MAX_FILE_BYTES:
            raise _TooLarge(f"{real} is too large to compare ({info.st_size:,} bytes)")
        digest = hashlib.sha256()
        total = 0
        while chunk := os.read(fd, CHUNK):
            total += len(chunk)
            if total > MAX_FILE_BYTES:
                raise _TooLarge(f"{real} is too large to compare (it grew while it was read)")
            digest.update(chunk)
        return "sha256:" + digest.hexdigest()
    finally:
        os.close(fd)
