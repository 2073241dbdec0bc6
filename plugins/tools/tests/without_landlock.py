"""Run a command as on a kernel without Landlock: ``python without_landlock.py PROGRAM ARGS...``.

A seccomp filter makes Landlock's three system calls fail with ENOSYS, as they do where the
kernel lacks Landlock, then the program replaces this one (the filter stays on it and its
children). Used with a sandbox that disables user namespaces, it gives a machine where no
sandbox mechanism can run.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys

LANDLOCK_CALLS = (444, 445, 446)  # create_ruleset, add_rule, restrict_self: the same on every architecture
BPF_LD_W_ABS, BPF_JEQ_K, BPF_RET_K = 0x20, 0x15, 0x06
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(SockFilter))]


def main() -> None:
    insns = [(BPF_LD_W_ABS, 0, 0, 0)]
    for position, number in enumerate(LANDLOCK_CALLS):
        insns.append((BPF_JEQ_K, len(LANDLOCK_CALLS) - position, 0, number))
    insns += [(BPF_RET_K, 0, 0, RET_ALLOW), (BPF_RET_K, 0, 0, RET_ERRNO | errno.ENOSYS)]
    array = (SockFilter * len(insns))(*(SockFilter(*insn) for insn in insns))
    program = SockFprog(len(insns), ctypes.cast(array, ctypes.POINTER(SockFilter)))
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    if prctl(38, 1, 0, 0, 0) != 0 or prctl(22, 2, ctypes.byref(program)) != 0:  # no_new_privs, seccomp filter
        raise SystemExit(f"could not install the filter: {os.strerror(ctypes.get_errno())}")
    os.execvp(sys.argv[1], sys.argv[1:])


if __name__ == "__main__":
    main()
