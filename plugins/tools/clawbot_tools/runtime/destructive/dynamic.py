"""What makes a line's program dynamic: a program word that is not fixed, a runner (``eval``,
``xargs``, ``ssh`` ...), an interpreter, a shell whose script is not in view, a wrapper the
analysis does not look through, or git running configured commands.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from clawbot_tools.runtime.destructive.git import _git_runs_commands
from clawbot_tools.runtime.destructive.options import _ASSIGNMENT
from clawbot_tools.runtime.shell_analysis import Analysis
from clawbot_tools.runtime.shell_lexer import Word, lex

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox-sh", "rbash", "yash"})
# programs and builtins that run text (their arguments or their input) as commands
RUNNERS = frozenset(
    {
        "eval",
        "source",
        ".",
        "trap",
        "alias",
        "fc",
        "xargs",
        "watch",
        "ssh",
        "su",
        "runuser",
        "script",
        "parallel",
        "at",
        "batch",
        "sshpass",
        "expect",
        "osascript",
        "pwsh",
        "powershell",
        "tmux",
        "screen",
        "nsenter",
    }
)
INTERPRETER = re.compile(r"(?:python|pypy|perl|ruby|php|lua|tclsh|wish|node|nodejs|deno|bun|julia|Rscript)[0-9.]*+|luajit|[gmn]?awk|busybox-awk")
# programs that start the program named by a later word
WRAPPERS = frozenset(
    {
        "sudo",
        "doas",
        "env",
        "nice",
        "nohup",
        "timeout",
        "stdbuf",
        "time",
        "command",
        "exec",
        "builtin",
        "setsid",
        "ionice",
        "chroot",
        "flock",
        "unshare",
        "strace",
        "ltrace",
        "systemd-run",
        "find",
        "busybox",
        "toybox",
        "taskset",
        "chrt",
        "caffeinate",
        "pkexec",
        "run0",
        "firejail",
        "bwrap",
        "proot",
        "fakeroot",
        "catchsegv",
    }
)
# the wrappers the analysis (or the rough view) looks through to the program they start
LOOKED_THROUGH = frozenset({"sudo", "doas", "env", "nice", "nohup", "timeout", "stdbuf", "time", "command", "find", "pkexec", "run0"})
_KEYWORDS = frozenset(
    {
        "!",
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "while",
        "until",
        "do",
        "done",
        "{",
        "}",
        "case",
        "esac",
        "for",
        "select",
        "in",
        "function",
        "coproc",
        "[[",
        "]]",
        "time",
    }
)
MAX_SCRIPT_DEPTH = 8


def _dynamic(command: str, analysis: Analysis) -> bool:
    """Whether the line runs a program (or a script) whose words are not all in view."""
    for wrapper in analysis.wrappers:
        base = os.path.basename(wrapper.name)
        if base == "xargs" or (base in SHELLS and _shell_is_dynamic(list(wrapper.argv[1:]), MAX_SCRIPT_DEPTH)):
            return True
    for command_ in analysis.commands:
        if os.path.basename(command_.name) == "git" and _git_runs_commands([w.value for w in command_.argv[1:]]):
            return True
    return _script_is_dynamic(command, 0)


def _script_is_dynamic(source: str, depth: int) -> bool:
    if depth > MAX_SCRIPT_DEPTH:
        return True
    words: list[Word] = []
    skip_next = False
    for token in (*lex(source).tokens, None):
        if isinstance(token, Word):
            if skip_next:
                skip_next = False
            else:
                words.append(token)
            continue
        if token is not None and token.redirect:
            skip_next = True
            continue
        skip_next = False
        if words and _simple_is_dynamic(words, depth):
            return True
        words = []
    return False


def _simple_is_dynamic(words: list[Word], depth: int) -> bool:
    i = 0
    while i < len(words) and not words[i].quoted and (words[i].value in _KEYWORDS or _ASSIGNMENT.match(words[i].raw)):
        i += 1
    wrapped = False
    for k in range(i, len(words)):
        word = words[k]
        if not word.literal:
            return k == i or wrapped
        base = os.path.basename(word.value)
        if base in RUNNERS or INTERPRETER.fullmatch(base):
            return True
        if base in SHELLS:
            # through a wrapper, the analysis may not have seen the shell's script
            return wrapped or _shell_is_dynamic(words[k + 1 :], depth)
        if base == "git" and _git_runs_commands([w.value for w in words[k + 1 :]]):
            return True
        if base in WRAPPERS:
            if base not in LOOKED_THROUGH:
                return True  # the analysis sees only the wrapper: the scan looks at what it runs
            wrapped = True
        elif not wrapped:
            return False
    return False


def _shell_is_dynamic(args: Sequence[Word], depth: int) -> bool:
    """Whether a shell run with ``args`` runs text not in view (its input, a file, a -c word not fixed)."""
    wants_script = False
    k = 0
    while k < len(args):
        word = args[k]
        if not word.literal:
            return True
        text = word.value
        if text in ("--", "-"):
            k += 1
            break
        if text in ("-o", "+o", "-O", "+O"):
            k += 2
            continue
        if text.startswith("--"):
            k += 1
            continue
        if text[:1] in ("-", "+") and len(text) > 1:
            wants_script = wants_script or "c" in text[1:]
            if "s" in text[1:] or "i" in text[1:]:
                return True
            k += 1
            continue
        break
    if not wants_script or k >= len(args):
        return True  # a script file or the shell's input
    script = args[k]
    return not script.literal or _script_is_dynamic(script.value, depth + 1)
