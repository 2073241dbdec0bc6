"""The per-program rules: when ``rm``, ``mkfs`` and other formatters, ``dd``, ``shred``,
``blkdiscard``, the partitioners, shutdown and reboot, ``chmod``/``chown``, ``find`` and
``tee``/``cp`` destroy, ``busybox``/``toybox APPLET`` judged as the applet (git: ``git.py``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from clawbot_tools.runtime.destructive.braces import brace_words
from clawbot_tools.runtime.destructive.git import _git_labels
from clawbot_tools.runtime.destructive.options import _has_long, _options
from clawbot_tools.runtime.shell_analysis import Command

DISK_DEVICE = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|dm-|md|loop|mapper/|rdisk)\w*")
POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
RUNLEVELS = frozenset({"0", "1", "6", "s", "S"})
SYSTEMCTL_POWER_VERBS = frozenset(
    {
        "poweroff",
        "reboot",
        "halt",
        "kexec",
        "suspend",
        "hibernate",
        "hybrid-sleep",
        "suspend-then-hibernate",
        "soft-reboot",
        "rescue",
        "emergency",
    }
)
SYSTEMCTL_START_VERBS = frozenset({"start", "isolate", "restart", "try-restart", "reload-or-restart", "try-reload-or-restart"})
POWER_TARGETS = frozenset(
    {
        "poweroff",
        "reboot",
        "halt",
        "kexec",
        "rescue",
        "emergency",
        "shutdown",
        "suspend",
        "hibernate",
        "hybrid-sleep",
        "suspend-then-hibernate",
        "soft-reboot",
        "ctrl-alt-del",
        "sleep",
        "final",
    }
)
PARTITIONERS = frozenset({"fdisk", "sfdisk", "cfdisk", "parted", "gdisk", "sgdisk", "cgdisk"})
PARTITION_LISTING = frozenset({"-l", "--list", "-d", "--dump", "-J", "--json", "-s", "--show-size", "-V", "--verify", "-p", "--print"})
FORMATTERS = frozenset({"mke2fs", "mkswap", "wipefs", "mkdosfs", "mkntfs", "mkexfatfs"})
ROOTISH = frozenset({"/", "/*", "~", "~/", "~/*", "$HOME", "${HOME}", "$HOME/", "$HOME/*", "${HOME}/", "${HOME}/*", "/.", "/.."})
# find tests that narrow what -delete removes
FIND_FILTERS = frozenset(
    {
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-empty",
        "-newer",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-size",
        "-user",
        "-group",
        "-inum",
        "-links",
        "-samefile",
        "-lname",
        "-ilname",
        "-perm",
    }
)
BOXES = frozenset({"busybox", "toybox"})


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
    elif (
        name in POWER
        or (name in ("init", "telinit") and set(operands if loose else operands[:1]) & RUNLEVELS)
        or (name in ("systemctl", "loginctl") and _power_verb(operands))
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
    return bool(words & SYSTEMCTL_START_VERBS) and any((o[: -len(".target")] if o.endswith(".target") else o) in POWER_TARGETS for o in operands)


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
