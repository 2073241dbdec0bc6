"""Commands that destroy data or the machine: they ask the user in every mode, always.

A best-effort safety net, not a sandbox. It judges the line with the same rules in three
views: ``rm -r`` / ``rm /``, ``mkfs`` / ``mke2fs`` / ``mkswap`` / ``wipefs``, ``dd of=``,
``shred``, ``blkdiscard``, ``fdisk`` / ``sfdisk`` / ``parted`` on a device, shutdown and
reboot (``shutdown``, ``init 0``, ``systemctl poweroff``, ``systemctl isolate
rescue.target`` ...), ``chmod``/``chown -R /``, ``find / -delete``, ``tee``/``cp`` to a disk
device, and git's ``push --force`` / ``--mirror`` / ``--delete`` / ``:branch`` / ``+ref``,
``reset --hard``, ``clean`` (unless ``-n``), ``branch -D``, ``checkout -f`` / ``checkout .``,
``restore .``, ``stash drop|clear``, ``reflog expire``, ``gc --prune=now``, ``prune``,
``filter-branch``, ``update-ref -d`` and aliases defined on the command line (``git -c
alias.x=...``, ``--config-env``, ``GIT_CONFIG_*``: what they run is unknown). Long options
count by any unambiguous-looking prefix of three or more characters (``rm --r``, ``git reset
--har``, ``git push --force-w``, as GNU getopt and git accept them); git's global options
(``-C``, ``-c``, ``--git-dir`` ...) are skipped in both their ``--opt value`` and
``--opt=value`` forms; ``busybox APPLET`` / ``toybox APPLET`` are judged as the applet.

The views:

* the analysed commands (so quoting tricks such as ``r\\m -rf`` or ``sh -c 'rm -rf x'``
  are seen), with bash brace expansions (``rm {-rf,x}``) expanded;
* a rough split of the raw text at every place a command can start (``;``, ``|``, ``&``,
  newlines, parentheses, backticks, ``$(``, keywords and ``sudo``/``xargs``/``exec``-like
  prefixes), so ``echo $(rm -rf x)``, which the analysis cannot take apart, is seen too;
* when the line runs a program that is not a fixed word -- a program name holding ``$``,
  a substitution or a glob (``$c -rf x``, ``$(echo rm) -rf x``, ``/bin/r? -rf x``), a
  wrapper with such a word (``sudo $c``), ``eval``, ``source``, ``trap``, ``xargs``,
  ``watch``, ``ssh``, an interpreter (``python -c``, ``perl -e``, ``awk``), a shell that
  reads its script from its input or a file or gets a ``-c`` script that is not a fixed
  word (``echo 'rm -rf x' | sh``, ``sh -c "$x"``, ``bash -c $'...'``), or git running
  configured commands (``-c``, ``submodule foreach``, ``bisect run``, ``rebase -x``) --
  a token scan of the whole raw text: quotes and backslashes dropped, ``$'...'`` and
  ``\\xHH`` / octal escapes decoded, split at whitespace, shell operators and ``$ { } , =``.
  Destructive words found anywhere in it (``rm`` plus a recursive flag or ``/``, ``mkfs``,
  ``dd`` plus ``of=``, ``reboot``, ``git`` plus ``push -f`` ...) ask, labelled "hidden behind
  a dynamic command". This view is coarse on purpose (``c=cp; $c -r a b; rm x`` asks): a
  false alarm costs one question, a miss costs data. Without a dynamic program there is
  no scan, so ``echo rm -rf`` still runs.

Plus raw-text checks: a fork bomb, ``curl ... | sh``, decoded text piped into a shell
(``base64 -d | sh``), ``> /dev/sdX`` and ``> /proc/sysrq-trigger``. Every check is linear in
the length of the line (no regular expression here can backtrack catastrophically; windows
and counts are bounded; the policy also refuses to analyse lines over 8,000 characters). A
false alarm only costs one question to the user; such commands are never offered "allow
always". Not covered: what scripts, aliases and functions defined elsewhere run, text
decoded by other means (``base64 -d`` into a variable), and programs whose destructive
use is their normal one (``truncate``, ``mv``, ``rsync --delete``, ``rm`` of plain files).
"""

from __future__ import annotations

import bisect
import fnmatch
import os
import re
from collections.abc import Iterable, Sequence

from clawbot_tools.runtime.shell_analysis import Analysis, Command
from clawbot_tools.runtime.shell_lexer import Word, lex

DISK_DEVICE = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|dm-|md|loop|mapper/|rdisk)\w*")
POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
RUNLEVELS = frozenset({"0", "1", "6", "s", "S"})
SYSTEMCTL_POWER_VERBS = frozenset({
    "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate",
    "soft-reboot", "rescue", "emergency",
})
SYSTEMCTL_START_VERBS = frozenset({"start", "isolate", "restart", "try-restart", "reload-or-restart", "try-reload-or-restart"})
POWER_TARGETS = frozenset({
    "poweroff", "reboot", "halt", "kexec", "rescue", "emergency", "shutdown", "suspend", "hibernate", "hybrid-sleep",
    "suspend-then-hibernate", "soft-reboot", "ctrl-alt-del", "sleep", "final",
})
PARTITIONERS = frozenset({"fdisk", "sfdisk", "cfdisk", "parted", "gdisk", "sgdisk", "cgdisk"})
PARTITION_LISTING = frozenset({"-l", "--list", "-d", "--dump", "-J", "--json", "-s", "--show-size", "-V", "--verify", "-p", "--print"})
FORMATTERS = frozenset({"mke2fs", "mkswap", "wipefs", "mkdosfs", "mkntfs", "mkexfatfs"})
ROOTISH = frozenset({"/", "/*", "~", "~/", "~/*", "$HOME", "${HOME}", "$HOME/", "$HOME/*", "${HOME}/", "${HOME}/*", "/.", "/.."})
# git's own options before the subcommand (git.c compares them exactly: no abbreviations)
GIT_VALUE_OPTIONS = frozenset({
    "-C", "-c", "--config-env", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--attr-source",
})
GIT_ALIAS = "git alias defined on the command line (what it runs is unknown)"
# find tests that narrow what -delete removes
FIND_FILTERS = frozenset({
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-empty", "-newer",
    "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-size", "-user", "-group", "-inum", "-links",
    "-samefile", "-lname", "-ilname", "-perm",
})
BOXES = frozenset({"busybox", "toybox"})

# Where a command may start in the raw text.
_ROUGH_SPLIT = re.compile(r"\$\(|[\n;&|()`]")
# Words that may precede the command name in the rough view.
_PREFIX_WORDS = frozenset({
    "!", "{", "}", "if", "then", "else", "elif", "do", "while", "until", "time", "sudo", "doas", "xargs",
    "exec", "command", "env", "nice", "nohup", "stdbuf", "eval", "busybox", "toybox",
})
_COMMAND_AFTER = frozenset({"{", "}", "do", "then", "else", "elif"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+=")
_SHELL_NAME = re.compile(r"(?:ba|z|da|k|fi)?sh")
_DISK_REDIRECT = re.compile(r">[ \t]*+/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)")
_SYSRQ = re.compile(r">[ \t]*+/proc/sysrq-trigger")
_COLON_BOMB = re.compile(r":[ \t]*+\([ \t]*+\)[ \t]*+\{")
_FUNCTION = re.compile(r"(?<![\w-])([\w-]++)[ \t]*+\([ \t]*+\)[ \t]*+\{")
_SELF_PIPE = re.compile(r"(?<![\w-])([\w-]++)[ \t]*+\|(?=[ \t]*+([\w-]++))")
_SH_OF_CURL = re.compile(r"(?<![\w-])(?:ba|z|da)?sh[ \t]++<\([ \t]*+(?:curl|wget)\b")
_GIT_CONFIG_ALIAS = re.compile(r"GIT_CONFIG_(?:KEY_\d++|PARAMETERS)=\S*?alias\.", re.IGNORECASE)
_BRACE_LIST = re.compile(r"\{([^{},]*+,[^{}]*+)\}")
_BRACE_RANGE = re.compile(r"\{(-?\d{1,6}|[A-Za-z])\.\.(-?\d{1,6}|[A-Za-z])\}")
MAX_BRACE_WORDS = 64
MAX_FUNCTION_BODY = 2000

# --- what makes a program dynamic -----------------------------------------------------------

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox-sh", "rbash", "yash"})
# programs and builtins that run text (their arguments or their input) as commands
RUNNERS = frozenset({
    "eval", "source", ".", "trap", "alias", "fc", "xargs", "watch", "ssh", "su", "runuser", "script", "parallel",
    "at", "batch", "sshpass", "expect", "osascript", "pwsh", "powershell", "tmux", "screen", "nsenter",
})
INTERPRETER = re.compile(
    r"(?:python|pypy|perl|ruby|php|lua|tclsh|wish|node|nodejs|deno|bun|julia|Rscript)[0-9.]*+|luajit|[gmn]?awk|busybox-awk"
)
# programs that start the program named by a later word
WRAPPERS = frozenset({
    "sudo", "doas", "env", "nice", "nohup", "timeout", "stdbuf", "time", "command", "exec", "builtin", "setsid",
    "ionice", "chroot", "flock", "unshare", "strace", "ltrace", "systemd-run", "find", "busybox", "toybox",
    "taskset", "chrt", "caffeinate", "pkexec", "run0", "firejail", "bwrap", "proot", "fakeroot", "catchsegv",
})
# the wrappers the analysis (or the rough view) looks through to the program they start
LOOKED_THROUGH = frozenset({"sudo", "doas", "env", "nice", "nohup", "timeout", "stdbuf", "time", "command", "find", "pkexec", "run0"})
_KEYWORDS = frozenset({
    "!", "if", "then", "else", "elif", "fi", "while", "until", "do", "done", "{", "}", "case", "esac", "for",
    "select", "in", "function", "coproc", "[[", "]]", "time",
})
MAX_SCRIPT_DEPTH = 8

# --- the token scan -----------------------------------------------------------------------

_SCAN_SPLIT = re.compile(r"[\s;|&()<>`]++")
_FINE_SPLIT = re.compile(r"[${},=:]++")
_EXPANSION_OPERATORS = "-+?=#%/^,"
_ESCAPE = re.compile(r"\\(?:x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|0?[0-7]{1,3}|c.|.)", re.S)
_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
# names the scan looks for (also matched by globs: /bin/r? -rf)
SCAN_NAMES = frozenset({
    "rm", "mkfs", "mkfs.ext4", "mkfs.xfs", "mkfs.vfat", "mkfs.btrfs", *FORMATTERS, "dd", "shred", "blkdiscard",
    *POWER, "init", "telinit", "systemctl", *PARTITIONERS, "chmod", "chown", "chgrp", "git", "find", "tee",
})
GIT_SUBCOMMANDS = frozenset({
    "push", "reset", "clean", "branch", "checkout", "restore", "stash", "reflog", "gc", "prune", "filter-branch",
    "filter-repo", "update-ref", "config",
})
SCAN_WINDOW = 16  # words judged after a program or git subcommand found by the scan
MAX_SCAN_HITS = 256  # more windows than this on one line: it asks without looking further
MAX_GLOBS = 128
HIDDEN = " (hidden behind a dynamic command)"
# what the scan could find something in: a name it looks for, an escape or a glob
_MAY_HIDE = re.compile(
    "|".join(sorted({re.escape(name) for name in SCAN_NAMES | GIT_SUBCOMMANDS} | {"mkfs", r"[*?\[]"}, key=len, reverse=True))
)
# expansions that may be empty: r${x}m, r$@m
_EMPTY_EXPANSION = re.compile(r"\$\{[^{}]{0,64}+\}|\$[@*#?!$0-9-]")


def _squash(text: str) -> str:
    """``text`` without quotes and possibly empty expansions (``"r"'m'``, ``r${x}m`` -> ``rm``)."""
    return _EMPTY_EXPANSION.sub("", text.replace("'", "").replace('"', ""))


def destructive(command: str, analysis: Analysis) -> list[str]:
    """Labels of the destructive patterns in ``command`` (empty: none)."""
    found: list[str] = []

    def add(labels: Iterable[str]) -> None:
        for label in labels:
            if label not in found:
                found.append(label)

    for command_ in analysis.commands:
        add(_argv_labels(command_))
    for redirect in analysis.redirects:
        target = redirect.target
        if target is not None and ">" in redirect.op:
            if DISK_DEVICE.match(target.value):
                add(["writes to a disk device"])
            elif target.value.startswith("/proc/sysrq-trigger"):
                add(["shutdown / reboot"])
    for name, args in _rough_commands(command):
        add(labels_of(name, args, args))
    add(_raw_labels(command))
    unquoted = command.replace("'", "").replace('"', "")
    if "\\" in command or _MAY_HIDE.search(unquoted) or _MAY_HIDE.search(_squash(unquoted)):
        hidden = [label for label in scan(command) if label not in found]
        if hidden and _dynamic(command, analysis):  # the (costlier) look at the programs comes last
            add(label + HIDDEN for label in hidden)
    return found


# --- dynamic programs ----------------------------------------------------------------------


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
            return wrapped or _shell_is_dynamic(words[k + 1:], depth)
        if base == "git" and _git_runs_commands([w.value for w in words[k + 1:]]):
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


def _git_runs_commands(args: list[str]) -> bool:
    """``git -c ...`` (a configured pager, editor, hook or alias runs), ``submodule foreach`` ..."""
    sub, rest, config = _git_split(args)
    if config:
        return True
    flags, operands = _options(rest)
    return (
        (sub == "submodule" and "foreach" in operands)
        or (sub == "bisect" and "run" in operands)
        or (sub == "rebase" and ("x" in flags or _has_long(flags, "--exec")))
    )


# --- the token scan -------------------------------------------------------------------------


def scan_tokens(text: str) -> list[str]:
    """The words of ``text`` for the scan, from four views of it: quotes as breaks; quotes and
    possibly empty expansions dropped; escapes decoded; quotes and backslashes dropped."""
    plain = text.replace("\\\n", "").replace("'", " ").replace('"', " ")
    views = [
        plain.replace("\\", ""),
        _squash(text).replace("\\", ""),
        _ESCAPE.sub(_unescape, text.replace("\\\n", "")).replace("'", "").replace('"', ""),
        text.replace("'", "").replace('"', "").replace("\\", ""),
    ]
    tokens: list[str] = []
    for view in views:
        for token in _SCAN_SPLIT.split(view):
            if not token:
                continue
            tokens.append(token)
            if _FINE_SPLIT.search(token):
                for piece in _FINE_SPLIT.split(token):
                    if piece:
                        tokens.append(piece)
                        if piece[0] in _EXPANSION_OPERATORS and "${" in token:
                            tokens.append(piece.lstrip(_EXPANSION_OPERATORS))  # ${c:-rm} -> rm
    return tokens


def _unescape(match: re.Match[str]) -> str:
    body = match.group()[1:]
    head = body[0]
    try:
        if head == "x" and len(body) > 1:
            return chr(int(body[1:], 16))
        if head in "uU" and len(body) > 1:
            return chr(int(body[1:], 16))
        if head in "01234567":
            return chr(int(body, 8) & 0xFF)
    except (ValueError, OverflowError):
        return ""
    if head == "c" and len(body) > 1:
        return chr(ord(body[1]) & 0x1F)
    return _SIMPLE_ESCAPES.get(head, head)


def scan(text: str) -> list[str]:
    """Destructive words anywhere in ``text``, however they are quoted, escaped or split."""
    tokens = scan_tokens(text)
    labels: list[str] = []

    def add(new: Iterable[str]) -> None:
        for label in new:
            if label not in labels:
                labels.append(label)

    bases = [os.path.basename(token) for token in tokens]
    present: set[str] = set()
    globs: set[str] = set()
    for base in bases:
        if base in SCAN_NAMES or base.startswith("mkfs") or base in GIT_SUBCOMMANDS:
            present.add(base)
        elif ("*" in base or "?" in base or "[" in base) and any(ch.isalpha() for ch in base) and len(base) <= 40:
            globs.add(base)
    if len(globs) > MAX_GLOBS:
        return ["too many globbed words to check"]
    for pattern in globs:
        present.update(name for name in SCAN_NAMES if fnmatch.fnmatchcase(name, pattern))
    # rules that hold anywhere on the line
    for name in present & {"rm", "chmod", "chown", "chgrp", "dd", "find", "tee", *PARTITIONERS, *POWER, *FORMATTERS,
                           "shred", "blkdiscard"}:
        add(labels_of(name, tokens, tokens, loose=True))
    if any(name.startswith("mkfs") for name in present):
        add(["mkfs (formats a disk)"])
    # rules that depend on the words after the program: a window at each place
    windowed = present & {"init", "telinit", "systemctl"}
    git_subs = (present & GIT_SUBCOMMANDS) if "git" in present else set()
    if "git" in present and any(token.lower().startswith("alias.") or "alias." in token.lower() for token in tokens):
        add([GIT_ALIAS])
    if windowed or git_subs:
        hits = 0
        for k, base in enumerate(bases):
            if base in windowed:
                window = tokens[k + 1:k + 1 + SCAN_WINDOW]
                found = labels_of(base, window, window, loose=True)
            elif base in git_subs:
                found = _git_sub_labels(base, tokens[k + 1:k + 1 + SCAN_WINDOW])
            else:
                continue
            hits += 1
            if hits > MAX_SCAN_HITS:
                add(["too many commands to check"])
                break
            add(found)
    return labels


# --- the rough view ------------------------------------------------------------------------


def _rough_commands(text: str) -> Iterable[tuple[str, list[str]]]:
    """(program base name, argument words) at every place a command may start; quotes stay."""
    for piece in _ROUGH_SPLIT.split(text):
        for words in _split_at_keywords(piece.split()):
            start = 0
            while start < len(words) and (words[start] in _PREFIX_WORDS or _ASSIGNMENT.match(words[start])):
                start += 1
            if start < len(words):
                args = [alt for word in words[start + 1:] for alt in brace_words(word)]
                yield os.path.basename(words[start]), args


def _split_at_keywords(words: list[str]) -> Iterable[list[str]]:
    """``for x do rm -rf y`` -> ``for x`` and ``rm -rf y``: a command may start after these words."""
    current: list[str] = []
    for word in words:
        if word in _COMMAND_AFTER:
            yield current
            current = []
        else:
            current.append(word)
    yield current


def _raw_labels(text: str) -> list[str]:
    labels: list[str] = []
    if _COLON_BOMB.search(text) or _self_piping_function(text):
        labels.append("fork bomb")
    if _DISK_REDIRECT.search(text):
        labels.append("writes to a disk device")
    if _SYSRQ.search(text):
        labels.append("shutdown / reboot")
    fetched, decoded = _piped_to_shell(text)
    if _SH_OF_CURL.search(text) or fetched:
        labels.append("downloads and runs a script (curl/wget | sh)")
    if decoded:
        labels.append("runs decoded text as a script (base64 -d ... | sh)")
    if "GIT_CONFIG" in text.upper() and _GIT_CONFIG_ALIAS.search(text):
        labels.append(GIT_ALIAS)
    return labels


def _self_piping_function(text: str) -> bool:
    """``f() { ... f | f ... }``: a function that pipes into itself (within 2,000 characters)."""
    pipes: dict[str, list[int]] = {}  # name -> where "name | name" starts (in increasing order)
    for match in _SELF_PIPE.finditer(text):
        if match.group(1) == match.group(2):
            pipes.setdefault(match.group(1), []).append(match.start())
    if not pipes:
        return False
    for match in _FUNCTION.finditer(text):
        starts = pipes.get(match.group(1))
        if not starts:
            continue
        end = text.find("}", match.end(), match.end() + MAX_FUNCTION_BODY)
        end = end if end >= 0 else match.end() + MAX_FUNCTION_BODY
        k = bisect.bisect_left(starts, match.end())
        if k < len(starts) and starts[k] < end:
            return True
    return False


_FETCHERS = frozenset({"curl", "wget"})
_DECODERS = frozenset({
    "base64", "base32", "basenc", "xxd", "uudecode", "openssl", "gpg", "rev", "tr", "gunzip", "zcat", "gzip",
    "bzcat", "bunzip2", "xzcat", "unxz", "xz", "zstd", "zstdcat", "unzstd", "lzcat",
})


def _piped_to_shell(text: str) -> tuple[bool, bool]:
    """(``curl ... | sh``, ``base64 -d ... | sh``): fetched or decoded text run by a shell."""
    fetched = decoded = False
    for chain in re.split(r"[\n;&]", text):
        source = ""
        for stage in chain.split("|"):
            words = stage.split()
            if source:
                while words and (words[0] in ("sudo", "doas", "env") or _ASSIGNMENT.match(words[0])):
                    words = words[1:]
                if words and _SHELL_NAME.fullmatch(os.path.basename(words[0])):
                    fetched = fetched or source == "fetched"
                    decoded = decoded or source == "decoded"
            bases = {os.path.basename(word) for word in words}
            if bases & _FETCHERS:
                source = "fetched"
            elif bases & _DECODERS and not source:
                source = "decoded"
    return fetched, decoded


def brace_words(word: str) -> list[str]:
    """The words bash makes of ``word`` by brace expansion (at most 64; ``word`` itself if none)."""
    words = [word]
    for _ in range(8):
        expanded: list[str] = []
        changed = False
        for item in words:
            alternatives = _one_brace(item)
            changed = changed or alternatives is not None
            expanded.extend(alternatives if alternatives is not None else [item])
            if len(expanded) >= MAX_BRACE_WORDS:
                return expanded[:MAX_BRACE_WORDS]
        words = expanded
        if not changed:
            break
    return words


def _one_brace(word: str) -> list[str] | None:
    match = _BRACE_LIST.search(word)
    if match is not None:
        parts = match.group(1).split(",")
    else:
        match = _BRACE_RANGE.search(word)
        if match is None:
            return None
        low, high = match.group(1), match.group(2)
        if low.lstrip("-").isdigit() and high.lstrip("-").isdigit():
            a, b = int(low), int(high)
            step = 1 if b >= a else -1
            parts = [str(n) for n in range(a, b + step, step)][:MAX_BRACE_WORDS]
        elif low.isalpha() and high.isalpha():
            step = 1 if ord(high) >= ord(low) else -1
            parts = [chr(n) for n in range(ord(low), ord(high) + step, step)]
        else:
            return None
    return [word[:match.start()] + part + word[match.end():] for part in parts]


# --- the rules -------------------------------------------------------------------------------


def _options(args: Sequence[str], values: str = "", *, dashdash: bool = True) -> tuple[set[str], list[str]]:
    """(short option letters and long options, operands) of ``args``.

    ``values``: short options that take a value (the rest of their cluster, or the next
    word). ``dashdash``: ``--`` ends the options (the scan ignores it).
    """
    flags: set[str] = set()
    operands: list[str] = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg == "--" and dashdash:
            operands.extend(args[i + 1:])
            break
        if arg.startswith("--"):
            flags.add(arg.split("=", 1)[0])
        elif arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], 1):
                flags.add(letter)
                if letter in values:
                    skip = j == len(arg) - 1
                    break
        else:
            operands.append(arg)
    return flags, operands


def _has_long(flags: set[str], *names: str) -> bool:
    """Whether a long option in ``flags`` abbreviates one of ``names`` (three characters or more)."""
    return any(len(flag) >= 3 and flag.startswith("--") and any(name.startswith(flag) for name in names) for flag in flags)


def _argv_labels(command: Command) -> list[str]:
    raws: list[str] = []
    values: list[str] = []
    for word in command.argv[1:]:
        if word.brace:
            alternatives = brace_words(word.value)
            raws.extend(alternatives)
            values.extend(alternatives)
        else:
            raws.append(word.raw)
            values.append(word.value)
    return labels_of(os.path.basename(command.name), raws, values)


def _rootish(raw: str, value: str) -> bool:
    return raw in ROOTISH or value in ROOTISH or os.path.normpath(value) in ("/", "//")


def labels_of(name: str, raws: Sequence[str], args: Sequence[str], *, loose: bool = False) -> list[str]:
    """The destructive patterns of program ``name`` run with ``args`` (``raws``: as written).

    ``loose``: ``args`` are all the words of a line (the scan), not one command's.
    """
    flags, operands = _options(args, dashdash=not loose)
    labels: list[str] = []
    if name in BOXES and args and not loose:
        return labels_of(os.path.basename(args[0]), raws[1:], args[1:])
    if name == "rm":
        if flags & {"r", "R"} or _has_long(flags, "--recursive"):
            labels.append("rm -r (recursive delete)")
        if any(_rootish(raw, value) for raw, value in zip(raws, args, strict=True) if not value.startswith("-")):
            labels.append("rm of / or ~")
    elif name.startswith("mkfs") or name in FORMATTERS:
        labels.append("mkfs (formats a disk)")
    elif name == "dd" and any(a.startswith("of=") for a in args):
        labels.append("dd of= (writes a device or file raw)")
    elif name == "shred":
        labels.append("shred (destroys file contents)")
    elif name == "blkdiscard":
        labels.append("blkdiscard (discards a whole device)")
    elif name in PARTITIONERS:
        if any(a.startswith("/dev/") for a in operands) and not (flags & {"l"} or _has_long(flags, "--list")):
            if name == "sfdisk" and (set(args) & PARTITION_LISTING or _has_long(flags, "--list", "--dump", "--json")):
                return labels
            if name == "parted" and not loose and operands[1:] in (["print"], ["p"]):
                return labels
            labels.append(f"{name} (partitions a disk)")
    elif name in POWER or (name in ("init", "telinit") and set(operands if loose else operands[:1]) & RUNLEVELS) or (
        name in ("systemctl", "loginctl") and _power_verb(operands)
    ):
        labels.append("shutdown / reboot")
    elif name in ("chmod", "chown", "chgrp") and (flags & {"R"} or _has_long(flags, "--recursive")):
        if any(_rootish(raw, value) for raw, value in zip(raws, args, strict=True)):
            labels.append("recursive chmod/chown of /")
    elif name == "find":
        labels.extend(_find_labels(list(raws), list(args), loose=loose))
    elif name in ("tee", "cp") and any(DISK_DEVICE.match(a) for a in operands):
        labels.append("writes to a disk device")
    elif name == "git" and not loose:
        labels.extend(_git_labels(list(args)))
    return labels


def _power_verb(operands: list[str]) -> bool:
    words = set(operands)
    if words & SYSTEMCTL_POWER_VERBS:
        return True
    return bool(words & SYSTEMCTL_START_VERBS) and any(
        (o[:-len(".target")] if o.endswith(".target") else o) in POWER_TARGETS for o in operands
    )


def _find_labels(raws: list[str], args: list[str], *, loose: bool) -> list[str]:
    """``find / -delete``, ``find ~ -exec rm``, and ``-delete`` without any test (all of it)."""
    k = 0
    while k < len(args) and args[k] in ("-H", "-L", "-P", "-O0", "-O1", "-O2", "-O3", "-D"):
        k += 2 if args[k] == "-D" else 1
    starts: list[bool] = []
    while not loose and k < len(args) and not args[k].startswith(("-", "(", "!", ")")):
        starts.append(_rootish(raws[k], args[k]))
        k += 1
    rooted = any(starts) if not loose else any(_rootish(r, a) for r, a in zip(raws, args, strict=True))
    words = set(args)
    deletes = "-delete" in words
    runs_rm = bool(words & {"-exec", "-execdir", "-ok", "-okdir"}) and bool(words & {"rm", "/bin/rm", "/usr/bin/rm", "shred", "unlink"})
    if rooted and (deletes or runs_rm):
        return ["find of / or ~ that deletes"]
    if deletes and not words & FIND_FILTERS:
        return ["find -delete of everything it finds"]
    return []


def _git_split(args: list[str]) -> tuple[str | None, list[str], list[str]]:
    """(subcommand, its arguments, config given with -c / --config-env) of git's ``args``."""
    config: list[str] = []
    i = 0
    while i < len(args) and args[i].startswith("-"):
        option, eq, value = args[i].partition("=")
        if option in GIT_VALUE_OPTIONS and not eq:
            if option in ("-c", "--config-env") and i + 1 < len(args):
                config.append(args[i + 1])
            i += 2
            continue
        if option == "--config-env":
            config.append(value)
        i += 1
    if i >= len(args):
        return None, [], config
    return args[i], args[i + 1:], config


def _git_labels(args: list[str]) -> list[str]:
    sub, rest, config = _git_split(args)
    labels: list[str] = []
    if any(item.lower().startswith("alias.") for item in config):
        labels.append(GIT_ALIAS)
    if sub is not None:
        labels.extend(_git_sub_labels(sub, rest))
    return labels


def _git_sub_labels(sub: str, rest: Sequence[str]) -> list[str]:
    """The destructive forms of ``git SUB REST``."""
    if sub == "push":
        flags, operands = _options(rest, values="o")
        if (
            flags & {"f", "d"}
            or _has_long(flags, "--force", "--force-with-lease", "--force-if-includes", "--mirror", "--delete", "--prune")
            or any(o.startswith(("+", ":")) and len(o) > 1 for o in operands)
        ):
            return ["git push --force (or --delete / --mirror / :branch / +ref)"]
    elif sub == "reset":
        flags, _ = _options(rest)
        if _has_long(flags, "--hard"):
            return ["git reset --hard"]
    elif sub == "clean":
        flags, _ = _options(rest, values="e")
        if not ("n" in flags or _has_long(flags, "--dry-run")):
            return ["git clean -f (deletes untracked files)"]
    elif sub == "branch":
        flags, _ = _options(rest, values="u")
        deletes = "d" in flags or _has_long(flags, "--delete")
        if "D" in flags or (deletes and ("f" in flags or _has_long(flags, "--force"))):
            return ["git branch -D"]
    elif sub in ("checkout", "restore", "switch"):
        flags, operands = _options(rest, values="bBo")
        if sub != "restore" and ("f" in flags or _has_long(flags, "--force", "--discard-changes")):
            return [f"git {sub} --force (discards changes)"]
        staged_only = sub == "restore" and (flags & {"S"} or _has_long(flags, "--staged")) and not (
            flags & {"W"} or _has_long(flags, "--worktree")
        )
        if sub != "switch" and not staged_only and any(o in (".", ":/", "*", "./") for o in operands):
            return [f"git {sub} . (discards all changes)"]
    elif sub == "stash":
        _, operands = _options(rest)
        if operands[:1] in (["drop"], ["clear"]):
            return [f"git stash {operands[0]}"]
    elif sub == "reflog":
        _, operands = _options(rest)
        if operands[:1] in (["expire"], ["delete"]):
            return [f"git reflog {operands[0]}"]
    elif sub == "gc":
        for arg in rest:
            option, _, value = arg.partition("=")
            if len(option) >= 4 and "--prune".startswith(option) and value in ("now", "all"):
                return ["git gc --prune=now"]
    elif sub == "prune":
        flags, _ = _options(rest)
        if not ("n" in flags or _has_long(flags, "--dry-run")):
            return ["git prune"]
    elif sub in ("filter-branch", "filter-repo"):
        return [f"git {sub} (rewrites history)"]
    elif sub == "update-ref":
        flags, _ = _options(rest)
        if "d" in flags:
            return ["git update-ref -d"]
    elif sub == "config":
        flags, operands = _options(rest)
        reads = flags & {"l", "e"} or _has_long(flags, "--get", "--get-all", "--get-regexp", "--list", "--unset", "--show-origin")
        if not reads and any(o.lower().startswith("alias.") for o in operands) and len(operands) >= 2:
            return ["git config alias.* (an alias may run anything)"]
    return []
