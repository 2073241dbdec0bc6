"""Commands that destroy data or the machine: they ask the user in every mode, always.

A best-effort safety net, not a sandbox. It judges two views of the line with the same
rules (``rm -r``, ``rm /``, ``mkfs``, ``dd of=``, ``shred``, shutdown, ``chmod -R /``,
``git push --force`` / ``reset --hard`` / ``clean -f``):

* the analysed commands (so quoting tricks such as ``r\\m -rf`` or ``sh -c 'rm -rf x'``
  are seen), with bash brace expansions (``rm {-rf,x}``) expanded;
* a rough split of the raw text at every place a command can start (``;``, ``|``, ``&``,
  newlines, parentheses, backticks, ``$(``, keywords and ``sudo``/``xargs``/``exec``-like
  prefixes), so ``echo $(rm -rf x)``, which the analysis cannot take apart, is seen too.

Plus three raw-text checks: a fork bomb, ``curl ... | sh``, and ``> /dev/sdX``. Every
check is linear in the length of the line (no regular expression here can backtrack
catastrophically; the policy also refuses to analyse lines over 8,000 characters). A false
alarm only costs one question to the user; such commands are never offered "allow always".
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from clawbot_tools.runtime.shell_analysis import Analysis, Command

DISK_DEVICE = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|dm-|md|loop)\w*")
POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
ROOTISH = frozenset({"/", "/*", "~", "~/", "~/*", "$HOME", "${HOME}", "$HOME/", "$HOME/*", "${HOME}/", "${HOME}/*", "/.", "/.."})
GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})

# Where a command may start in the raw text.
_ROUGH_SPLIT = re.compile(r"\$\(|[\n;&|()`]")
# Words that may precede the command name in the rough view.
_PREFIX_WORDS = frozenset({
    "!", "{", "}", "if", "then", "else", "elif", "do", "while", "until", "time", "sudo", "doas", "xargs",
    "exec", "command", "env", "nice", "nohup", "stdbuf", "eval",
})
_COMMAND_AFTER = frozenset({"{", "}", "do", "then", "else", "elif"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+=")
_SHELL_NAME = re.compile(r"(?:ba|z|da|k|fi)?sh")
_DISK_REDIRECT = re.compile(r">[ \t]*+/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)")
_COLON_BOMB = re.compile(r":[ \t]*+\([ \t]*+\)[ \t]*+\{")
_FUNCTION = re.compile(r"(?<![\w-])([\w-]++)[ \t]*+\([ \t]*+\)[ \t]*+\{")
_SH_OF_CURL = re.compile(r"(?<![\w-])(?:ba|z|da)?sh[ \t]++<\([ \t]*+(?:curl|wget)\b")
_BRACE_LIST = re.compile(r"\{([^{},]*+,[^{}]*+)\}")
_BRACE_RANGE = re.compile(r"\{(-?\d{1,6}|[A-Za-z])\.\.(-?\d{1,6}|[A-Za-z])\}")
MAX_BRACE_WORDS = 64
MAX_FUNCTION_BODY = 2000


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
        if target is not None and ">" in redirect.op and DISK_DEVICE.match(target.value):
            add(["writes to a disk device"])
    for name, args in _rough_commands(command):
        add(labels_of(name, args, args))
    add(_raw_labels(command))
    return found


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
    if _SH_OF_CURL.search(text) or _curl_piped_to_shell(text):
        labels.append("downloads and runs a script (curl/wget | sh)")
    return labels


def _self_piping_function(text: str) -> bool:
    """``f() { ... f | f ... }``: a function that pipes into itself."""
    for match in _FUNCTION.finditer(text):
        name = re.escape(match.group(1))
        end = text.find("}", match.end(), match.end() + MAX_FUNCTION_BODY)
        body = text[match.end(): end if end >= 0 else match.end() + MAX_FUNCTION_BODY]
        if re.search(rf"(?<![\w-]){name}[ \t]*+\|[ \t]*+{name}(?![\w-])", body):
            return True
    return False


def _curl_piped_to_shell(text: str) -> bool:
    for chain in re.split(r"[\n;&]", text):
        stages = chain.split("|")
        fetched = False
        for stage in stages:
            words = stage.split()
            if fetched:
                while words and (words[0] in ("sudo", "doas", "env") or _ASSIGNMENT.match(words[0])):
                    words = words[1:]
                if words and _SHELL_NAME.fullmatch(os.path.basename(words[0])):
                    return True
            if any(os.path.basename(word) in ("curl", "wget") for word in words):
                fetched = True
    return False


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


def _options(args: Sequence[str]) -> tuple[set[str], list[str]]:
    """(short option letters and long options, operands) of ``args``."""
    flags: set[str] = set()
    operands: list[str] = []
    for i, arg in enumerate(args):
        if arg == "--":
            operands.extend(args[i + 1:])
            break
        if arg.startswith("--"):
            flags.add(arg.split("=", 1)[0])
        elif arg.startswith("-") and len(arg) > 1:
            flags.update(arg[1:])
        else:
            operands.append(arg)
    return flags, operands


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


def labels_of(name: str, raws: Sequence[str], args: Sequence[str]) -> list[str]:
    """The destructive patterns of program ``name`` run with ``args`` (``raws``: as written)."""
    flags, operands = _options(args)
    labels: list[str] = []
    if name == "rm":
        if flags & {"r", "R", "--recursive"}:
            labels.append("rm -r (recursive delete)")
        if any(raw in ROOTISH or os.path.normpath(value) == "/" for raw, value in zip(raws, args, strict=True) if not value.startswith("-")):
            labels.append("rm of / or ~")
    elif name.startswith("mkfs") or name == "wipefs":
        labels.append("mkfs (formats a disk)")
    elif name == "dd" and any(a.startswith("of=") for a in args):
        labels.append("dd of= (writes a device or file raw)")
    elif name == "shred":
        labels.append("shred (destroys file contents)")
    elif name in POWER or (name == "init" and operands[:1] in (["0"], ["6"])) or (
        name == "systemctl" and set(operands) & {"poweroff", "reboot", "halt", "kexec"}
    ):
        labels.append("shutdown / reboot")
    elif name in ("chmod", "chown", "chgrp") and flags & {"R", "--recursive"}:
        if any(raw in ROOTISH or os.path.normpath(value) == "/" for raw, value in zip(raws, args, strict=True)):
            labels.append("recursive chmod/chown of /")
    elif name == "git":
        labels.extend(_git_labels(list(args)))
    return labels


def _git_labels(args: list[str]) -> list[str]:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 1 if "=" in args[i] or args[i] not in GIT_VALUE_OPTIONS else 2
    if i >= len(args):
        return []
    sub, rest = args[i], args[i + 1:]
    flags, operands = _options(rest)
    if sub == "push" and (flags & {"f", "--force", "--force-with-lease", "--force-if-includes"} or any(o.startswith("+") for o in operands)):
        return ["git push --force"]
    if sub == "reset" and "--hard" in flags:
        return ["git reset --hard"]
    if sub == "clean" and flags & {"f", "--force"}:
        return ["git clean -f"]
    return []
