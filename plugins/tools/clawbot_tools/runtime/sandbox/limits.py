"""Resource limits as setrlimit calls prepared in the parent, applied in the child.

Soft and hard limits are both set, so the command cannot raise them again. A limit above
the inherited hard limit keeps the inherited one (an ordinary user cannot raise it).
Core dumps are always off: a dump writes the process's memory into the workspace.
"""

from __future__ import annotations

import resource

from clawbot_tools.runtime.sandbox.policy import Limits

MIB = 1024 * 1024


def _capped(kind: int, value: int) -> tuple[int, int]:
    _soft, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    return value, value


def rlimits(limits: Limits, *, with_processes: bool = True) -> tuple[tuple[int, tuple[int, int]], ...]:
    """``(resource, (soft, hard))`` pairs for ``limits``; RLIMIT_NPROC left out unless ``with_processes``."""
    pairs = [(resource.RLIMIT_CORE, (0, 0))]
    if limits.memory_mb is not None:
        pairs.append((resource.RLIMIT_DATA, _capped(resource.RLIMIT_DATA, limits.memory_mb * MIB)))
    if limits.file_size_mb is not None:
        pairs.append((resource.RLIMIT_FSIZE, _capped(resource.RLIMIT_FSIZE, limits.file_size_mb * MIB)))
    if with_processes:
        pairs.extend(process_rlimit(limits))
    return tuple(pairs)


def process_rlimit(limits: Limits) -> tuple[tuple[int, tuple[int, int]], ...]:
    if limits.processes is None:
        return ()
    return ((resource.RLIMIT_NPROC, _capped(resource.RLIMIT_NPROC, limits.processes)),)


def applier(pairs: tuple[tuple[int, tuple[int, int]], ...]):
    """A function for the forked child: only setrlimit calls on values computed here."""
    setrlimit = resource.setrlimit

    def apply() -> None:
        for kind, values in pairs:
            setrlimit(kind, values)

    return apply
