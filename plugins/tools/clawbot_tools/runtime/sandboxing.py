"""How ``exec`` puts each command into the OS sandbox: which mechanism, with what policy.

One :class:`Sandboxing` per plugin instance. It chooses the mechanism once (the
``[plugins.tools.exec] sandbox`` setting; probing may start a process, so the first
:meth:`Sandboxing.choice` runs in a worker thread), keeps a private temp dir per session
(removed when the kernel closes), and turns a :class:`~clawbot_tools.runtime.context.Job`
into the :class:`~clawbot_tools.runtime.sandbox.Launch` the process registry starts:

* read (and run) the system, the skills this agent may read and ``sandbox_read``;
* read and write the workspace, the session's temp dir and ``sandbox_write``; in a turn the
  owner did not start, only read the workspace and ``sandbox_write`` (the temp dir stays
  writable), so nothing that feeds the owner's turns changes;
* nothing of clawbot's state dir or the rest of the home directory, even where an
  allowed tree contains them;
* no network unless the approval granted it; the resource limits in every case;
* a job approved to run outside the sandbox gets the limits and nothing else.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading

from clawbot.paths import inside

from clawbot_tools.runtime.config import ExecSettings
from clawbot_tools.runtime.context import Job
from clawbot_tools.runtime.sandbox import Choice, Launch, Limits, SandboxPolicy, choose
from clawbot_tools.runtime.sandbox.off import OffMechanism

SHELL = "/bin/sh"


class Sandboxing:
    def __init__(self, settings: ExecSettings, home: str | None, state_dir: str | None) -> None:
        self.settings = settings
        self.home = home
        # hidden even where an allowed tree contains them (bwrap masks them, Landlock refuses)
        self.protected = tuple(p for p in (state_dir, home) if p and os.path.isdir(p))
        self._choice: Choice | None = None
        self._lock = threading.Lock()
        self._temp: dict[str, str] = {}
        self._told = False

    def choice(self) -> Choice:
        """The mechanism commands run in (probed on first use, then kept)."""
        with self._lock:
            if self._choice is None:
                self._choice = choose(self.settings.sandbox)
            return self._choice

    @property
    def limits(self) -> Limits:
        settings = self.settings
        return Limits(memory_mb=settings.memory_limit_mb, processes=settings.process_limit, file_size_mb=settings.file_size_limit_mb)

    def problem(self) -> str | None:
        """Why exec must refuse: the sandbox the user named explicitly cannot be used here."""
        choice = self.choice()
        wanted = self.settings.sandbox
        if wanted in ("auto", "off") or choice.mechanism.name == wanted:
            return None
        why = "; ".join(choice.problems) or "it is not available"
        return (
            f'the sandbox "{wanted}" set in [plugins.tools.exec] sandbox cannot be used here ({why}). '
            'Nothing ran. Ask the user to set sandbox = "auto", or "off" to run commands unconfined'
        )

    def notice_once(self) -> str | None:
        """The one-time note that commands run unconfined because nothing usable was found."""
        choice = self.choice()
        if self._told or choice.mechanism.confines or self.settings.sandbox == "off":
            return None
        self._told = True
        why = "; ".join(choice.problems) or "no sandbox mechanism is available on this system"
        return (
            f"Note: no OS sandbox is usable here ({why}), so commands run unconfined and exec asks the user "
            "before any command reads, lists or writes files by name. `clawbot doctor` explains how to enable one."
        )

    def hidden_path_entries(self, path_value: str, opened: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The ``PATH`` directories the sandbox hides (under the home folder or the state dir,
        opened neither by ``sandbox_read``/``sandbox_write`` nor as one of ``opened``, such as
        the workspace): programs found there do not run inside it (pyenv's shims,
        ~/.local/bin, ~/.cargo/bin ...)."""
        if not self.choice().mechanism.confines:
            return ()
        opened = tuple(map(os.path.realpath, opened)) + self._expanded(self.settings.sandbox_read) + self._expanded(self.settings.sandbox_write)
        hidden = []
        for entry in dict.fromkeys(path_value.split(os.pathsep)):
            real = os.path.realpath(entry) if os.path.isabs(entry) else None
            if real is None or not os.path.isdir(real):
                continue
            if any(inside(p, real) for p in self.protected) and not any(inside(tree, real) for tree in opened):
                hidden.append(entry)
        return tuple(hidden)

    def not_found_hint(self, job: Job) -> str | None:
        """For ``job``, which ended with 126 or 127 (not found, not runnable) in the sandbox."""
        hidden = self.hidden_path_entries(job.env["PATH"], (job.workspace, *job.readable))
        if not hidden:
            return None
        return (
            f"Note: the sandbox hides these PATH directories, so programs found there do not run in it: {', '.join(hidden)}. "
            "If the command needs one, ask the user to add it (or its tree, e.g. ~/.pyenv) to [plugins.tools.exec] sandbox_read."
        )

    def extra_reads(self) -> tuple[str, ...]:
        """The trees ``sandbox_read`` opens to every command, as they exist now (real paths)."""
        return self._expanded(self.settings.sandbox_read)

    def extra_writes(self) -> tuple[str, ...]:
        """The trees ``sandbox_write`` opens to every command, as they exist now (real paths)."""
        return self._expanded(self.settings.sandbox_write)

    def prepare(self, job: Job) -> Launch:
        """``job`` as the registry starts it; raises ``SandboxError`` when the sandbox cannot be built."""
        mechanism = self.choice().mechanism if job.sandboxed else OffMechanism()
        granted = self.extra_writes()
        writable = granted if job.workspace_writable else ()
        policy = SandboxPolicy(
            workspace=job.workspace,
            workspace_writable=job.workspace_writable,
            # a temp dir of its own, so nothing the owner's commands of this session leave there
            # (a script they run again) can be changed by a command of someone else's turn
            temp_dir=self._temp_dir(job.session_key if job.workspace_writable else f"{job.session_key} (not the owner's)"),
            read_only=tuple(job.readable) + self.extra_reads() + (() if job.workspace_writable else granted),
            read_write=writable,
            network=job.network,
            limits=self.limits,
            protected=self.protected,
        )
        return mechanism.prepare((SHELL, "-c", job.command), env=job.env, cwd=job.cwd, policy=policy)

    def writable_roots(self, job: Job) -> tuple[str, ...]:
        """The trees a later turn can rewrite without asking: the workspace, ``sandbox_write``
        and the session's temp dir (what "allow always" binds by content)."""
        with self._lock:
            temp = self._temp.get(job.session_key)
        return (job.workspace, *self._expanded(self.settings.sandbox_write), *((temp,) if temp else ()))

    def grants_writes(self) -> bool:
        """Whether sandboxed commands may write outside the workspace (``sandbox_write``)."""
        return bool(self._expanded(self.settings.sandbox_write))

    def _expanded(self, paths: list[str]) -> tuple[str, ...]:
        out = []
        for path in paths:
            if path == "~" or path.startswith("~/"):
                if not self.home:
                    continue
                path = self.home + path[1:]
            if os.path.isabs(path) and os.path.exists(path):
                out.append(os.path.realpath(path))
        return tuple(out)

    def _temp_dir(self, session_key: str) -> str:
        with self._lock:
            path = self._temp.get(session_key)
            if path is None or not os.path.isdir(path):
                path = tempfile.mkdtemp(prefix="clawbot-exec-")  # mode 0700
                self._temp[session_key] = path
            return path

    def close(self) -> None:
        with self._lock:
            for path in self._temp.values():
                shutil.rmtree(path, ignore_errors=True)
            self._temp.clear()
