"""Which host paths a sandboxed command sees, shared by the mechanisms.

System trees are what programs need to run: merged-/usr distributions make /bin, /lib ...
symlinks into /usr; Nix and Guix keep every program in their store; snaps live in /snap.
Not readable: /home, /root, /run (the user's D-Bus bus and runtime secrets), /var, /tmp,
/mnt, /media, /srv, /sys.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterable

from clawbot.paths import inside

from clawbot_tools.runtime.sandbox.policy import SandboxError, SandboxPolicy

SYSTEM_TREES = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix/store",
    "/gnu/store",
    "/snap",
)
# The devices a command may open (read and write): what shells, pipelines and language
# runtimes expect. Terminals are left out: the command has none (its own session).
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
# Files under /etc only root may read (password hashes, host keys): hidden where the
# mechanism can hide single files, because a command run by root could read them.
ROOT_ONLY_DIRS = ("/etc", "/etc/ssh")


def system_trees() -> tuple[str, ...]:
    """The system trees present here, as given (a symlink stays a symlink: see :func:`symlink_target`)."""
    return tuple(tree for tree in SYSTEM_TREES if os.path.lexists(tree))


def symlink_target(path: str) -> str | None:
    """The relative target of a top-level symlink such as /bin -> usr/bin, else None."""
    if not os.path.islink(path):
        return None
    return os.readlink(path)


@functools.lru_cache(maxsize=1)
def root_only_files() -> tuple[str, ...]:
    """Regular files directly in :data:`ROOT_ONLY_DIRS` that others may not read (``/etc/shadow``)."""
    found = []
    for folder in ROOT_ONLY_DIRS:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and not info.st_mode & stat.S_IROTH:
                found.append(entry.path)
    return tuple(sorted(found))


def allowed_trees(policy: SandboxPolicy) -> tuple[tuple[str, str], ...]:
    """``(label, real path)`` of every tree the policy opens, system trees included."""
    trees = [("system tree", os.path.realpath(tree)) for tree in system_trees()]
    trees.append(("the workspace", policy.workspace))
    trees.append(("the temp dir", policy.temp_dir))
    trees += [("the read-only tree", tree) for tree in policy.read_only]
    trees += [("the read-write tree", tree) for tree in policy.read_write]
    return tuple(trees)


def check_required(policy: SandboxPolicy, cwd: str) -> str:
    """The real ``cwd``, after checking the workspace and temp dir exist and ``cwd`` is inside an allowed tree."""
    for label, path in (("workspace", policy.workspace), ("temp dir", policy.temp_dir)):
        if not os.path.isdir(path):
            raise SandboxError(f"the sandbox's {label} {path} is not an existing directory")
    real_cwd = os.path.realpath(cwd)
    writable = (policy.workspace, policy.temp_dir, *policy.read_write, *policy.read_only)
    if not any(inside(tree, real_cwd) for tree in writable):
        raise SandboxError(f"the working directory {real_cwd} is outside the workspace, so the sandbox would hide it")
    return real_cwd


def exposures(policy: SandboxPolicy) -> tuple[tuple[str, str, str], ...]:
    """``(protected, label, tree)`` for each protected tree an allowed tree contains or equals.

    An allowed tree *inside* a protected one is fine (a workspace under the home folder).
    """
    found = []
    for protected in policy.protected:
        if not os.path.lexists(protected):
            continue
        for label, tree in allowed_trees(policy):
            if inside(tree, protected):
                found.append((protected, label, tree))
    return tuple(found)


def refuse_equal(exposed: Iterable[tuple[str, str, str]]) -> None:
    """No mechanism can open a tree and hide it at once: a protected tree that *is* an allowed one."""
    for protected, label, tree in exposed:
        if protected == tree:
            raise SandboxError(
                f"{label} {tree} is a protected folder (clawbot's state or your home), so the sandbox cannot hide "
                "your keys and sessions from the command. Use a workspace folder of its own"
            )
