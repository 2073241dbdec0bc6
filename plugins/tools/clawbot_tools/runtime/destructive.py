"""Commands that destroy data or the machine: they ask the user in every mode, always.

A best-effort safety net, not a sandbox: it looks both at the analysed commands (so
quoting tricks such as ``r\\m -rf`` or ``sh -c 'rm -rf x'`` are seen) and at the raw text
(so ``echo $(rm -rf x)``, which the analysis cannot take apart, is seen too). A false alarm
only costs one question to the user; such commands are never offered "allow always".
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from clawbot_tools.runtime.shell_analysis import Analysis, Command

DISK_DEVICE = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|dm-|md|loop)\w*")
POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
ROOTISH = frozenset({"/", "/*", "~", "~/", "~/*", "$HOME", "${HOME}", "$HOME/", "$HOME/*", "${HOME}/", "${HOME}/*", "/.", "/.."})

# Raw-text patterns: "<start of a command>WORD" where a command can start.
_START = r"(?:^|[;&|(`{\n]|\$\(|\bdo\b|\bthen\b|\bsudo\b|\bxargs\b|\bexec\b)\s*(?:\S+=\S*\s+)*"
TEXT_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("rm -r (recursive delete)", re.compile(_START + r"(?:\S*/)?rm\s+(?:[^\s;&|]+\s+)*?(?:-[A-Za-z]*[rR][A-Za-z]*|--recursive)(?:\s|$)")),
    ("rm of / or ~", re.compile(_START + r"(?:\S*/)?rm\s+(?:-[^\s;&|]+\s+)*(?:/|/\*|~/?\*?|\$\{?HOME\}?/?\*?)(?:\s|$)")),
    ("mkfs (formats a disk)", re.compile(_START + r"(?:\S*/)?mkfs(?:\.\w+)?\b")),
    ("dd of= (writes a device or file raw)", re.compile(_START + r"(?:\S*/)?dd\b[^\n;&|]*\bof=")),
    ("shred (destroys file contents)", re.compile(_START + r"(?:\S*/)?shred\b")),
    ("fork bomb", re.compile(r":\s*\(\s*\)\s*\{|(\b\w+)\s*\(\s*\)\s*\{[^}]*\b\1\s*\|\s*\1\b")),
    ("shutdown / reboot", re.compile(_START + r"(?:\S*/)?(?:shutdown|reboot|halt|poweroff)\b")),
    ("recursive chmod/chown of /", re.compile(_START + r"(?:\S*/)?ch(?:mod|own|grp)\s+[^\n;&|]*-[A-Za-z]*R[^\n;&|]*\s/(?:\*|\s|$)")),
    ("git push --force", re.compile(r"\bgit\b[^\n;&|]*\bpush\b[^\n;&|]*(?:\s-[A-Za-z]*f[A-Za-z]*\b|--force)")),
    ("git reset --hard", re.compile(r"\bgit\b[^\n;&|]*\breset\b[^\n;&|]*--hard\b")),
    ("git clean -f", re.compile(r"\bgit\b[^\n;&|]*\bclean\b[^\n;&|]*(?:\s-[A-Za-z]*f[A-Za-z]*\b|--force)")),
    ("writes to a disk device", re.compile(r">\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)")),
    ("downloads and runs a script (curl/wget | sh)", re.compile(
        r"\b(?:curl|wget)\b[^\n;&]*\|\s*(?:sudo\s+)?(?:\S*/)?(?:ba|z|da|k|fi)?sh\b"
        r"|\b(?:ba|z|da)?sh\s+<\(\s*(?:curl|wget)\b"
    )),
)

GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})


def destructive(command: str, analysis: Analysis) -> list[str]:
    """Labels of the destructive patterns in ``command`` (empty: none)."""
    found: list[str] = []
    for command_ in analysis.commands:
        for label in _argv_labels(command_):
            if label not in found:
                found.append(label)
    disk = "writes to a disk device"
    for redirect in analysis.redirects:
        target = redirect.target
        if target is not None and ">" in redirect.op and DISK_DEVICE.match(target.value) and disk not in found:
            found.append(disk)
    for label, pattern in TEXT_PATTERNS:
        if label not in found and pattern.search(command):
            found.append(label)
    return found


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
    name = os.path.basename(command.name)
    raws = [w.raw for w in command.argv[1:]]
    args = [w.value for w in command.argv[1:]]
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
        labels.extend(_git_labels(args))
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
