"""A seccomp filter that keeps a Landlocked command off sockets (and metadata changes) it must not use, built in the parent.

Two reasons to refuse ``socket(2)``, each switched on separately:

* **Unix sockets** (``deny_unix``): before Landlock ABI 9 (LANDLOCK_ACCESS_FS_RESOLVE_UNIX) a
  Landlocked command can still connect to a socket path it cannot read, and the user's D-Bus
  session bus (/run/user/<uid>/bus) starts anything outside the sandbox (``systemd-run
  --user``). AF_UNIX sockets are refused (EACCES); stream socket pairs stay possible (they
  cannot be pointed at a path).
* **The network** (``deny_network``): every other address family is refused, so where no
  network namespace can be made (user namespaces disabled) neither TCP nor UDP nor raw
  sockets reach the host's loopback (the gateway's control API) or anywhere else.
* **What no namespace confines** (:data:`ALWAYS_DENIED`): vsock sockets reach the hypervisor
  of a virtual machine whatever the network namespace, so every sandbox refuses them.

* **File metadata** (``deny_metadata``, :data:`METADATA`): where a command may only read a
  folder Landlock still lets it chmod, chown, touch and set extended attributes there; a
  command of a turn the owner did not start (the workspace read-only) gets EPERM for all of
  them, in its temp dir too.

Either way io_uring is refused (its socket operation would pass by the filter), and so are
the kernel keyrings (:data:`KEYRINGS`), System V IPC where no IPC namespace keeps it private
(:data:`SYSV_IPC`), and every system call of another ABI (32-bit ``socketcall`` hides its
arguments; x32 numbers), so the checked numbers are the only way in.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import platform

# struct seccomp_data offsets
NR = 0
ARCH = 4
ARG0 = 16  # low 32 bits of args[0] (little-endian)
ARG1 = 24

BPF_LD_W_ABS = 0x20
BPF_JEQ_K = 0x15
BPF_JGE_K = 0x35
BPF_AND_K = 0x54
BPF_RET_K = 0x06

RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
AF_UNIX = 1
AF_VSOCK = 40
ALWAYS_DENIED = (AF_VSOCK,)
SOCK_TYPE_MASK = 0xF
SOCK_STREAM = 1
X32_BIT = 0x40000000

PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

# machine -> (audit arch, socket, socketpair, io_uring_setup)
SYSCALLS = {
    "x86_64": (0xC000003E, 41, 53, 425),
    "aarch64": (0xC00000B7, 198, 199, 425),
}
# add_key, request_key, keyctl: the user's keys (a Kerberos ticket, an ecryptfs key) are
# reachable from any process of the user through the session and persistent keyrings
KEYRINGS = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}
# System V shared memory, semaphores and message queues: a Landlocked command without an IPC
# namespace of its own could read and change other programs' segments (X11 MIT-SHM images)
SYSV_IPC = {
    "x86_64": (29, 30, 31, 64, 65, 66, 67, 68, 69, 70, 71, 220),
    "aarch64": (186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197),
}

# chmod, chown, utime(s) and the xattr calls that change a file: Landlock does not mediate
# them, so a command that may only read a folder could still change its files' modes, owners,
# times and extended attributes. Refused (EPERM) where a command must leave a folder as it is.
# x86_64: chmod fchmod fchmodat fchmodat2, chown fchown lchown fchownat, utime utimes futimesat
# utimensat, setxattr lsetxattr fsetxattr removexattr lremovexattr fremovexattr setxattrat
# removexattrat; aarch64 has only the *at and f* forms.
METADATA = {
    "x86_64": (90, 91, 268, 452, 92, 93, 94, 260, 132, 235, 261, 280, 188, 189, 190, 197, 198, 199, 463, 466),
    "aarch64": (52, 53, 452, 54, 55, 88, 5, 6, 7, 14, 15, 16, 463, 466),
}


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(SockFilter))]


def supported() -> bool:
    return platform.machine() in SYSCALLS


def program(*, deny_unix: bool, deny_network: bool, deny_sysv_ipc: bool = False, deny_metadata: bool = False) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) instructions for this machine. ``deny_metadata``:
    refuse changing files' modes, owners, times and extended attributes (:data:`METADATA`)."""
    machine = platform.machine()
    metadata = METADATA[machine] if deny_metadata else ()
    arch, socket_nr, socketpair_nr, io_uring_nr = SYSCALLS[machine]
    unsupported = (io_uring_nr, *KEYRINGS[machine], *(SYSV_IPC[machine] if deny_sysv_ipc else ()))
    deny = (BPF_RET_K, 0, 0, RET_ERRNO | errno.EACCES)
    allow = (BPF_RET_K, 0, 0, RET_ALLOW)
    # socket(domain, ...): the families refused everywhere, then Unix sockets, then the rest
    socket_check = [(BPF_LD_W_ABS, 0, 0, ARG0)]
    for position, family in enumerate(ALWAYS_DENIED):
        socket_check.append((BPF_JEQ_K, len(ALWAYS_DENIED) - position + 2, 0, family))  # to the deny at the end
    socket_check += [
        (BPF_JEQ_K, 0, 1, AF_UNIX),
        deny if deny_unix else allow,
        deny if deny_network else allow,
        deny,
    ]
    # socketpair(domain, type, ...): Unix stream pairs only (other families have no pairs)
    pair_check = (
        [
            (BPF_LD_W_ABS, 0, 0, ARG0),
            (BPF_JEQ_K, 0, 4, AF_UNIX),
            (BPF_LD_W_ABS, 0, 0, ARG1),
            (BPF_AND_K, 0, 0, SOCK_TYPE_MASK),
            (BPF_JEQ_K, 1, 0, SOCK_STREAM),
            deny,
            allow,
        ]
        if deny_unix
        else [allow]
    )
    return [
        (BPF_LD_W_ABS, 0, 0, ARCH),
        (BPF_JEQ_K, 1, 0, arch),
        (BPF_RET_K, 0, 0, RET_ERRNO | errno.EPERM),  # another ABI
        (BPF_LD_W_ABS, 0, 0, NR),
        (BPF_JGE_K, 0, 1, X32_BIT),
        (BPF_RET_K, 0, 0, RET_ERRNO | errno.EPERM),  # x32 numbering
        # "not supported here": programs fall back (plain I/O for io_uring) or say so
        *(insn for number in unsupported for insn in ((BPF_JEQ_K, 0, 1, number), (BPF_RET_K, 0, 0, RET_ERRNO | errno.ENOSYS))),
        # "not permitted": what chmod, touch or setfattr says on a file that is not theirs
        *(insn for number in metadata for insn in ((BPF_JEQ_K, 0, 1, number), (BPF_RET_K, 0, 0, RET_ERRNO | errno.EPERM))),
        (BPF_JEQ_K, 2, 0, socket_nr),  # to the socket check
        (BPF_JEQ_K, len(socket_check) + 1, 0, socketpair_nr),  # to the pair check
        allow,
        *socket_check,
        *pair_check,
    ]


@functools.cache  # a handful of flag combinations; the array stays alive with the cache
def compiled(*, deny_unix: bool, deny_network: bool, deny_sysv_ipc: bool, deny_metadata: bool = False) -> tuple[SockFprog, ctypes.Array]:
    """The ``sock_fprog`` for prctl and the instruction array it points to (keep both alive)."""
    array = _array(program(deny_unix=deny_unix, deny_network=deny_network, deny_sysv_ipc=deny_sysv_ipc, deny_metadata=deny_metadata))
    return SockFprog(len(array), ctypes.cast(array, ctypes.POINTER(SockFilter))), array


@functools.cache
def raw(*, deny_unix: bool, deny_network: bool) -> bytes:
    """The filter as the bytes of a ``sock_filter`` array (what ``bwrap --seccomp FD`` reads)."""
    return bytes(_array(program(deny_unix=deny_unix, deny_network=deny_network)))


def _array(insns: list[tuple[int, int, int, int]]) -> ctypes.Array:
    return (SockFilter * len(insns))(*(SockFilter(*insn) for insn in insns))
