"""What a sandboxed command may touch, and what a mechanism hands back to start it.

The exec gate's shell analysis only decides when to ask the user; a :class:`Mechanism`
enforces what the command can reach, so a mistake in the analysis no longer reaches the
user's keys. The caller builds a :class:`SandboxPolicy` per command, asks the chosen
mechanism to :meth:`~Mechanism.prepare` a :class:`Launch`, starts the child from it and
calls :meth:`Launch.close` afterwards.
"""

from __future__ import annotations

import abc
import os
from collections.abc import Callable, Mapping, Sequence

import attrs

# Defaults chosen so everyday builds fit and a runaway ends in seconds:
# `tail /dev/zero` reaches 2 GiB of heap in about 2 s and fails with "memory exhausted".
DEFAULT_MEMORY_MB = 2048
# Counted per user (see Limits); high enough for a desktop user's other processes.
DEFAULT_PROCESSES = 4096
DEFAULT_FILE_SIZE_MB = 8192


class SandboxError(Exception):
    """No sandbox could be built for this command; ``str(exc)`` says why, for the model."""


def _positive_or_none(instance: object, attribute: attrs.Attribute, value: int | None) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ValueError(f"{attribute.name} must be a positive integer or None, got {value!r}")


@attrs.frozen
class Limits:
    """Resource limits for the command and everything it starts, in every mode ("off" too).

    ``memory_mb`` is RLIMIT_DATA (heap, anonymous and private writable mappings), not
    RLIMIT_AS: node, Go and Java reserve large address ranges they never touch (Java's
    compressed class space alone is 1 GiB), so an address-space cap breaks them long before
    they use memory. RLIMIT_DATA counts what is mapped writable, which is what grows.

    ``processes`` is RLIMIT_NPROC: processes and threads of the user. The kernel exempts
    root from it (uid 0 outside a user namespace, and inside one whose uid 0 maps to
    root), so it binds only ordinary users; under Landlock it is set inside the command's
    own user namespace and counts only the command's processes, elsewhere it counts all of
    the user's. ``file_size_mb`` is RLIMIT_FSIZE (a bigger write fails with SIGXFSZ).
    None leaves a limit as inherited.
    """

    memory_mb: int | None = attrs.field(default=DEFAULT_MEMORY_MB, validator=_positive_or_none)
    processes: int | None = attrs.field(default=DEFAULT_PROCESSES, validator=_positive_or_none)
    file_size_mb: int | None = attrs.field(default=DEFAULT_FILE_SIZE_MB, validator=_positive_or_none)


def _real_path(value: str) -> str:
    if not isinstance(value, str) or not value or "\x00" in value:
        raise ValueError(f"a sandbox path must be a non-empty string, got {value!r}")
    return os.path.realpath(value)


def _real_paths(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(_real_path(value) for value in values)


@attrs.frozen
class SandboxPolicy:
    """What one command may touch. Paths are made real (symlinks resolved) on construction."""

    workspace: str = attrs.field(converter=_real_path)  # read-write, unless workspace_writable is False
    temp_dir: str = attrs.field(converter=_real_path)  # private (0700), read-write; TMPDIR points there
    read_only: tuple[str, ...] = attrs.field(default=(), converter=_real_paths)  # skills folders, user config
    read_write: tuple[str, ...] = attrs.field(default=(), converter=_real_paths)
    network: bool = False  # False: no network at all, the host's loopback included
    limits: Limits = Limits()
    # Trees that must stay unreadable even where an allowed tree contains them: clawbot's
    # state dir (keys, sessions, approvals) and the user's home. An allowed tree inside one
    # of them stays allowed; one containing one is masked (bwrap) or refused (Landlock).
    protected: tuple[str, ...] = attrs.field(default=(), converter=_real_paths)
    # False: the workspace is mounted (bwrap) or granted (Landlock) for reading only, for a
    # command of a turn the owner did not start; the temp dir stays writable.
    workspace_writable: bool = True


@attrs.define
class Launch:
    """What to hand to ``loop.subprocess_exec`` / ``subprocess.Popen`` (with
    ``start_new_session=True``: the sandbox relies on the command having no terminal and
    its own process group).

    If the child cannot be confined, ``preexec_fn`` raises and Popen raises
    ``subprocess.SubprocessError`` in the parent: the command did not run, and
    :meth:`explain` says what failed.
    """

    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: str
    preexec_fn: Callable[[], None] | None
    pass_fds: tuple[int, ...] = ()
    _cleanup: Callable[[], None] | None = None
    _explain: Callable[[], str | None] | None = None

    def close(self) -> None:
        """Release what the parent kept for the child (fds); call it once the child started or failed to."""
        cleanup, self._cleanup = self._cleanup, None
        if cleanup is not None:
            cleanup()

    def explain(self) -> str | None:
        """After Popen raised: which step of setting up the sandbox failed, and why (call before close)."""
        return self._explain() if self._explain is not None else None


class Mechanism(abc.ABC):
    """One way of confining a command."""

    name: str  # "bwrap" | "landlock" | "off"
    confines: bool  # False for "off" (limits only)
    hides_names: bool  # True: paths outside the policy do not exist for the command (no stat oracle)
    # True: the mode, owner, times and extended attributes of files outside cannot change either
    guards_metadata: bool

    @abc.abstractmethod
    def prepare(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: str, policy: SandboxPolicy) -> Launch:
        """The launch of ``argv`` under ``policy``; :class:`SandboxError` when it cannot be confined."""

    @abc.abstractmethod
    def describe(self) -> tuple[str, ...]:
        """One line per guarantee and per known gap, for doctor and the docs."""

    def __repr__(self) -> str:
        return f"<sandbox {self.name}>"
