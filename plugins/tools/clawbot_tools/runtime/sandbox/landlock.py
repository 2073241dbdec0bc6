"""The Landlock mechanism: the command keeps the host's view, but the kernel refuses access
outside the trees the policy opens.

The ruleset is built in the parent (the ``landlockpy`` bindings: rights tables for every
ABI); the child only makes system calls prepared beforehand (see :mod:`.child`):

* a user namespace, so capabilities count only inside it: root's CAP_SYS_PTRACE would
  otherwise let the command read ``/proc/<clawbot>/environ`` (the API keys) through
  Landlock's ptrace check;
* a network namespace unless the policy allows the network: no interface up, so no TCP or
  UDP anywhere, the gateway's loopback API included;
* no_new_privs (setuid programs gain nothing), the Unix-socket filter of :mod:`.seccomp`
  below ABI 9, then the ruleset, which also scopes signals and abstract sockets (ABI 6) and,
  from ABI 4, refuses TCP itself when the network is off.

Where user namespaces are disabled (hardened distributions, containers), the same ruleset
runs without them (``namespaces=False``): every capability is dropped instead, and the
seccomp filter refuses every socket family but Unix, so the network stays out of reach.

Landlock cannot hide a folder inside an allowed tree, so a protected folder (clawbot's
state, the home folder) inside one is refused with :class:`SandboxError`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from clawbot_tools.runtime.sandbox import limits as rlimits
from clawbot_tools.runtime.sandbox import paths, seccomp
from clawbot_tools.runtime.sandbox.child import ChildSetup
from clawbot_tools.runtime.sandbox.policy import Launch, Mechanism, SandboxError, SandboxPolicy

MIN_ABI = 3  # truncate(2) is mediated from ABI 3; before it a read-only file could be emptied
SCOPE_ABI = 6  # signals and abstract Unix sockets scoped to the sandbox
RESOLVE_UNIX_ABI = 9  # connecting to a socket path is mediated
RESOLV_CONF = "/etc/resolv.conf"


class LandlockMechanism(Mechanism):
    name = "landlock"
    confines = True
    hides_names = False  # stat() is not mediated: `test -e ~/.ssh/id_rsa` still answers
    guards_metadata = False  # chmod, chown, utimes and xattrs are not mediated either

    def __init__(self, abi: int, *, namespaces: bool = True) -> None:
        """``namespaces=False`` needs a seccomp filter for this machine (:func:`seccomp.supported`)."""
        self.abi = abi
        self.namespaces = namespaces
        self.unix_filter = abi < RESOLVE_UNIX_ABI and seccomp.supported()

    def prepare(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: str, policy: SandboxPolicy) -> Launch:
        real_cwd = paths.check_required(policy, cwd)
        exposed = paths.exposures(policy)
        paths.refuse_equal(exposed)
        if exposed:
            protected, label, tree = exposed[0]
            raise SandboxError(
                f"{label} {tree} contains the protected folder {protected} (clawbot's state or your home), and "
                "Landlock cannot hide a folder inside an allowed one. Use a workspace that does not contain it, "
                "or the bwrap sandbox"
            )
        if not policy.workspace_writable and not seccomp.supported():
            raise SandboxError(
                "the workspace must stay read-only to this command (a turn the owner did not start), and Landlock "
                "cannot keep its files' modes, times and attributes from changing without a seccomp filter for this "
                "machine; use the bwrap sandbox"
            )
        ruleset = self._ruleset(policy)
        setup = ChildSetup(
            ruleset_fd=ruleset.fileno(),
            namespaces=self.namespaces,
            new_net=not policy.network,
            early_limits=rlimits.rlimits(policy.limits, with_processes=False),
            late_limits=rlimits.process_rlimit(policy.limits),
            socket_filter=seccomp.supported(),
            deny_unix=self.unix_filter,
            deny_network=not policy.network,
            deny_metadata=not policy.workspace_writable,  # Landlock leaves chmod, chown, utimes, xattrs to the filter
        )

        def cleanup() -> None:
            ruleset.close()
            setup.close()

        child_env = dict(env)
        child_env["TMPDIR"] = policy.temp_dir
        return Launch(
            argv=tuple(argv),
            env=child_env,
            cwd=real_cwd,
            preexec_fn=setup.run,
            pass_fds=(),
            cleanup=cleanup,
            explain=setup.failure,
        )

    def _ruleset(self, policy: SandboxPolicy):
        import landlockpy
        from landlockpy import AccessFS

        handled = landlockpy.fs_for_abi(self.abi)
        read = AccessFS.EXECUTE | AccessFS.READ_FILE | AccessFS.READ_DIR
        device = AccessFS.READ_FILE | AccessFS.WRITE_FILE | AccessFS.TRUNCATE | AccessFS.IOCTL_DEV
        try:
            # Handled with no rule: refused everywhere (TCP from ABI 4), whatever else keeps the network out.
            handled_net = landlockpy.AccessNet.NONE if policy.network else landlockpy.net_for_abi(self.abi)
            ruleset = landlockpy.Ruleset(handled_fs=handled, handled_net=handled_net, scoped=landlockpy.scope_for_abi(self.abi))
        except OSError as exc:
            raise SandboxError(f"the Landlock ruleset could not be created: {exc.strerror or exc}") from exc
        try:
            for tree in paths.system_trees():
                _allow(ruleset, tree, read)
            writable = (policy.workspace, policy.temp_dir) if policy.workspace_writable else (policy.temp_dir,)
            for tree in (*policy.read_only, *(() if policy.workspace_writable else (policy.workspace,))):
                _allow(ruleset, tree, read)
            for tree in (*writable, *policy.read_write):
                _allow(ruleset, tree, handled)
            for device_path in paths.DEVICES:
                _allow(ruleset, device_path, device)
            _allow(ruleset, "/proc", AccessFS.READ_FILE | AccessFS.READ_DIR)
            if policy.network:
                _allow(ruleset, os.path.realpath(RESOLV_CONF), AccessFS.READ_FILE)
        except BaseException:
            ruleset.close()
            raise
        return ruleset

    def describe(self) -> tuple[str, ...]:
        lines = [
            f"landlock (ABI {self.abi}): the command may read and run only the system trees and the configured "
            "read-only trees, and write only the workspace, its temp dir and the read-write trees; home, /run, "
            "/var, /tmp and clawbot's state are refused",
            *(self._with_namespaces() if self.namespaces else self._without_namespaces()),
            "gap: names are visible: stat() is not mediated, so `test -e ~/.ssh/id_rsa` answers (the exec gate asks about test operands)",
            "gap: other processes stay visible in /proc (their command lines too; their environment and memory do not)",
            "gap: a protected folder inside an allowed tree cannot be hidden, so such a policy is refused",
            "gap: changing a file's mode, owner, times or extended attributes is not mediated by Landlock: a command "
            "can make a file outside it cannot read readable by others (chmod), and as root change system files' "
            "modes (the exec gate never remembers chmod, touch and the like for any arguments here); a command of a "
            "turn the owner did not start (the workspace read-only) cannot: the seccomp filter refuses them all "
            "(EPERM), in its temp dir too",
            "gap: no /dev/shm (POSIX shared memory and semaphores fail) and no terminals; programs that write to /tmp instead of $TMPDIR fail",
            "gap: as root, root-only files in the system trees (/etc/shadow) stay readable",
        ]
        if seccomp.supported():
            lines.append(
                "no vsock sockets (they would reach a virtual machine's host), no io_uring, no kernel keyrings "
                "(the user's Kerberos tickets)" + ("" if self.namespaces else ", no System V shared memory or queues")
            )
            lines.append("gap: 32-bit programs do not run (the filter refuses system calls of other ABIs)")
        if self.unix_filter:
            lines.append(
                "Unix sockets cannot be created (a seccomp filter below ABI 9 keeps the command away from the "
                "user's D-Bus bus and other sockets); stream socket pairs work"
            )
        elif self.abi < RESOLVE_UNIX_ABI:
            lines.append("gap: connecting to Unix socket paths is not mediated on this machine (D-Bus is reachable)")
        if self.abi < SCOPE_ABI:
            lines.append("gap: signals are not scoped below ABI 6: the command can signal the user's other processes")
        return tuple(lines)

    def _with_namespaces(self) -> tuple[str, ...]:
        return (
            "no network: a network namespace of its own with no interface up, unless network is on",
            "a user namespace of its own: no capability counts outside it (clawbot's /proc/<pid>/environ stays "
            "unreadable, also for root); no setuid gains (no_new_privs); an IPC namespace of its own (System V "
            "shared memory of other programs is out of reach)",
            "resource limits apply: memory (RLIMIT_DATA: private memory; shared mappings are not counted), file "
            "size, processes (counted inside its own user namespace; not for root), no core dumps",
        )

    def _without_namespaces(self) -> tuple[str, ...]:
        return (
            "without user namespaces (disabled here): the same Landlock rules, with these in their place:",
            "no network: a seccomp filter refuses every socket but Unix ones (TCP, UDP, raw), unless network is on",
            "no capabilities, also for root; no setuid gains (no_new_privs); clawbot's /proc/<pid>/environ stays unreadable (Landlock's ptrace scope)",
            "resource limits apply: memory (RLIMIT_DATA: private memory; shared mappings are not counted), file "
            "size, processes (counted with all of the user's processes; not for root), no core dumps",
        )


def _allow(ruleset, path: str, access) -> None:
    """Grant ``access`` beneath ``path`` (only the file rights when it is a file); missing paths are skipped."""
    from landlockpy import AccessFS

    try:
        is_dir = os.path.isdir(path)
        if not os.path.exists(path):
            return
        if not is_dir:
            access &= AccessFS.EXECUTE | AccessFS.WRITE_FILE | AccessFS.READ_FILE | AccessFS.TRUNCATE | AccessFS.IOCTL_DEV
        ruleset.allow_path(path, access)
    except OSError as exc:
        raise SandboxError(f"Landlock could not open {path} for its rule: {exc.strerror}") from exc
