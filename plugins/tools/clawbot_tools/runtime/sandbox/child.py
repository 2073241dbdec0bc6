"""What the forked child does before exec under Landlock: system calls prepared in the parent.

The child of a multi-threaded process may only make simple calls (no imports, logging or
locks), so everything is computed here first: ctypes functions, the uid/gid maps as bytes,
the seccomp program, the rlimit values. Any failing step writes its name and errno to a
pipe and raises, so Popen raises in the parent and the command never runs unconfined;
:meth:`ChildSetup.failure` then reads why.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os

from clawbot_tools.runtime.sandbox import limits as rlimits
from clawbot_tools.runtime.sandbox import seccomp

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_NEWIPC = 0x08000000
PR_SET_NO_NEW_PRIVS = 38
SYS_LANDLOCK_RESTRICT_SELF = 446  # the same number on every architecture
CAPABILITY_VERSION_3 = 0x20080522


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


@functools.lru_cache(maxsize=1)
def libc() -> ctypes.CDLL:
    library = ctypes.CDLL(None, use_errno=True)
    library.syscall.restype = ctypes.c_long
    return library


class ChildSetup:
    """One child's confinement steps; :meth:`run` is the ``preexec_fn``."""

    def __init__(
        self,
        *,
        ruleset_fd: int,
        namespaces: bool,
        new_net: bool,
        early_limits,
        late_limits,
        socket_filter: bool,
        deny_unix: bool,
        deny_network: bool,
        deny_metadata: bool = False,
    ) -> None:
        """``namespaces``: a user namespace of its own (and a network one when ``new_net``);
        without it every capability is dropped instead. ``socket_filter``: the seccomp filter
        of :mod:`.seccomp`, refusing vsock always and Unix sockets / the network / changes to
        files' metadata as asked."""
        lib = libc()
        self._unshare, self._prctl, self._syscall, self._capset = lib.unshare, lib.prctl, lib.syscall, lib.capset  # looked up here, not in the child
        self._ruleset_fd = ruleset_fd
        # an IPC namespace of its own: System V shared memory and queues of other programs out of reach
        self._flags = (CLONE_NEWUSER | CLONE_NEWIPC | (CLONE_NEWNET if new_net else 0)) if namespaces else 0
        self._cap_header, self._cap_data = CapHeader(CAPABILITY_VERSION_3, 0), (CapData * 2)()  # all zero: none
        self._no_capabilities = (ctypes.byref(self._cap_header), ctypes.byref(self._cap_data))
        self._early = rlimits.applier(early_limits)
        self._late = rlimits.applier(late_limits)
        self._filter = (
            seccomp.compiled(deny_unix=deny_unix, deny_network=deny_network, deny_sysv_ipc=not namespaces, deny_metadata=deny_metadata)
            if socket_filter
            else None
        )
        self._filter_ref = ctypes.byref(self._filter[0]) if self._filter else None
        self._read_end, self._write_end = os.pipe2(os.O_CLOEXEC)
        self._closed = False

    def run(self) -> None:
        # The same ids inside the user namespace, so files keep their owner. Read here, not
        # in the parent, in case the caller switched users after fork; before unshare, which
        # leaves them unmapped until the maps are written.
        uid, gid = os.geteuid(), os.getegid()
        self._step(b"resource limits", self._early)
        if self._flags:
            self._check(b"unshare(user, ipc, net namespaces)", self._unshare(self._flags))
            self._write(b"/proc/self/setgroups", b"deny")
            self._write(b"/proc/self/uid_map", b"%d %d 1" % (uid, uid))
            self._write(b"/proc/self/gid_map", b"%d %d 1" % (gid, gid))
        else:
            # No namespace to make capabilities count only inside: drop them all. With
            # no_new_privs below, exec cannot give them back, not even to root.
            self._check(b"dropping capabilities", self._capset(*self._no_capabilities))
        self._step(b"process limit", self._late)
        self._check(b"no_new_privs", self._prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        if self._filter_ref is not None:
            self._check(b"seccomp filter", self._prctl(seccomp.PR_SET_SECCOMP, seccomp.SECCOMP_MODE_FILTER, self._filter_ref))
        self._check(b"landlock_restrict_self", self._syscall(SYS_LANDLOCK_RESTRICT_SELF, self._ruleset_fd, 0))

    def _check(self, step: bytes, result: int) -> None:
        if result != 0:
            self._fail(step, ctypes.get_errno())

    def _step(self, step: bytes, action) -> None:
        try:
            action()
        except OSError as exc:
            self._fail(step, exc.errno or 0)

    def _write(self, path: bytes, data: bytes) -> None:
        try:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        except OSError as exc:
            self._fail(b"writing " + path, exc.errno or 0)

    def _fail(self, step: bytes, errno_value: int) -> None:
        with contextlib.suppress(OSError):
            os.write(self._write_end, step + b": " + os.strerror(errno_value).encode())
        raise OSError(errno_value, "sandbox setup failed")

    def failure(self) -> str | None:
        """What the child reported before it gave up (None if it said nothing)."""
        if self._closed:
            return None
        os.set_blocking(self._read_end, False)
        try:
            data = os.read(self._read_end, 4096)
        except BlockingIOError:
            return None
        return data.decode(errors="replace") or None

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self._read_end)
            os.close(self._write_end)
