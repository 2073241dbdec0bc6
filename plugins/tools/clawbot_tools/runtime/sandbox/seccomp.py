"""A seccomp filter that stops a command from opening Unix sockets, built in the parent.

Before Landlock ABI 9 (LANDLOCK_ACCESS_FS_RESOLVE_UNIX), a Landlocked command can still
connect to a socket path it cannot read, and the user's D-Bus session bus
(/run/user/<uid>/bus) starts anything outside the sandbox (``systemd-run --user``). The
filter refuses to create AF_UNIX sockets (EACCES); stream socket pairs stay possible (they
cannot be pointed at a path). It also refuses io_uring (its socket operation would pass by
the filter) and every system call of another ABI (32-bit ``socketcall`` hides its
arguments; x32 numbers), so the checked numbers are the only way in.
"""

from __future__ import annotations

import ctypes
import errno
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


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(SockFilter))]


def supported() -> bool:
    return platform.machine() in SYSCALLS


def program() -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) instructions for this machine."""
    arch, socket_nr, socketpair_nr, io_uring_nr = SYSCALLS[platform.machine()]
    deny = RET_ERRNO | errno.EACCES
    insns = [
        (BPF_LD_W_ABS, 0, 0, ARCH),
        (BPF_JEQ_K, 1, 0, arch),
        (BPF_RET_K, 0, 0, RET_ERRNO | errno.EPERM),  # another ABI
        (BPF_LD_W_ABS, 0, 0, NR),
        (BPF_JGE_K, 0, 1, X32_BIT),
        (BPF_RET_K, 0, 0, RET_ERRNO | errno.EPERM),  # x32 numbering
        (BPF_JEQ_K, 0, 1, io_uring_nr),
        (BPF_RET_K, 0, 0, RET_ERRNO | errno.ENOSYS),  # programs fall back to plain I/O
        (BPF_JEQ_K, 2, 0, socket_nr),
        (BPF_JEQ_K, 5, 0, socketpair_nr),
        (BPF_RET_K, 0, 0, RET_ALLOW),
        # socket(domain, ...): refuse AF_UNIX
        (BPF_LD_W_ABS, 0, 0, ARG0),
        (BPF_JEQ_K, 0, 1, AF_UNIX),
        (BPF_RET_K, 0, 0, deny),
        (BPF_RET_K, 0, 0, RET_ALLOW),
        # socketpair(domain, type, ...): AF_UNIX only as a stream pair
        (BPF_LD_W_ABS, 0, 0, ARG0),
        (BPF_JEQ_K, 0, 4, AF_UNIX),
        (BPF_LD_W_ABS, 0, 0, ARG1),
        (BPF_AND_K, 0, 0, SOCK_TYPE_MASK),
        (BPF_JEQ_K, 1, 0, SOCK_STREAM),
        (BPF_RET_K, 0, 0, deny),
        (BPF_RET_K, 0, 0, RET_ALLOW),
    ]
    return insns


def compiled() -> tuple[SockFprog, ctypes.Array]:
    """The ``sock_fprog`` for prctl and the instruction array it points to (keep both alive)."""
    insns = program()
    array = (SockFilter * len(insns))(*(SockFilter(*insn) for insn in insns))
    return SockFprog(len(insns), ctypes.cast(array, ctypes.POINTER(SockFilter))), array
