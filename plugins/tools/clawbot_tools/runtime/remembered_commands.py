"""Whether an exact command the user allowed always still covers what would run now.

A command remembered "always" (:mod:`~clawbot_tools.runtime.approvals_store`) runs again
unasked only while the files it runs or names that the agent can rewrite are as they were
when it was allowed (:mod:`~clawbot_tools.runtime.bound_files`). Otherwise it asks again,
and the notice says which file changed since it was allowed. An entry written before files
were bound counts as binding none.

A line whose files cannot all be named (``Binding.unsure``) that runs with more than the
sandbox gives (outside it, with network, with ``sandbox_write`` paths, or with no sandbox
confining it at all) is not offered "always": a rewritten file would run with those grants
unasked. It can still be allowed once, and the notice says why "always" is missing.

The files are compared when the command is about to start, not while it runs: a remembered
command with such grants does not run unasked while another command of the agent that no
approval covers is still running (it could rewrite a file between the check and the
moment the command reads it); it asks instead, and says so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import attrs

from clawbot_tools.runtime.bound_files import Binding, bind, changes
from clawbot_tools.runtime.context import Job, RuntimeContext
from clawbot_tools.runtime.exec_policy import Verdict

MAX_SHOWN = 3  # changed files named in the notice


@attrs.frozen
class Recall:
    runs: bool  # allowed always, and nothing it runs changed: it runs as approved
    verdict: Verdict  # otherwise: what to ask with


def binding_of(rt: RuntimeContext, job: Job) -> Binding:
    """The files ``job`` runs or names that a later turn could rewrite (reads and hashes them)."""
    return bind(job.command, cwd=job.cwd, roots=rt.sandbox.writable_roots(job), path_value=job.env["PATH"], home=rt.home)


def unapproved_running(rt: RuntimeContext, job: Job) -> list[str]:
    """The ids of the agent's commands still running that no approval covers (the sandbox
    lets them write the files a remembered command runs)."""
    return [p.id for p in rt.registry.live_of_agent(job.agent_id) if not p.approved]


def changed_since(asked: Binding, now: Binding, cwd: str) -> str | None:
    """What changed in the files of a job between asking and the answer (None: nothing)."""
    found = changes(asked.files, now.files)
    if not found:
        return None
    return "; ".join(f"{_relative(path, cwd)} {what}" for path, what in found[:MAX_SHOWN]) + ("; ..." if len(found) > MAX_SHOWN else "")


def recall(verdict: Verdict, binding: Binding, allowed: Sequence[Mapping[str, str] | None], *, extra_grants: bool, cwd: str) -> Recall:
    """``verdict`` for a line that asks, against ``allowed``: the files bound to each
    remembered approval of this exact command (None: one from before files were bound)."""
    trusted = binding.unsure is None or not extra_grants
    changed: list[str] = []
    for files in allowed:
        if dict(files or {}) == dict(binding.files) and trusted:
            return Recall(True, verdict)
        if files is None:
            changed.append("it was allowed always before clawbot compared the files commands run")
        else:
            found = changes(files, binding.files)
            changed += [f"since it was allowed always, {_relative(path, cwd)} {what}" for path, what in found]
            changed += [] if found else [f"it was allowed always, but with these grants it asks now: {binding.unsure}"]
    reasons = list(verdict.reasons)
    if changed:
        more = len(changed) - MAX_SHOWN
        reasons[:0] = changed[:MAX_SHOWN] + ([f"{more} more files changed since it was allowed always"] if more > 0 else [])
    if verdict.always == "command" and not trusted:
        return Recall(False, attrs.evolve(verdict, reasons=tuple(reasons), always=None, withheld=binding.unsure))
    return Recall(False, attrs.evolve(verdict, reasons=tuple(reasons)))


def _relative(path: str, cwd: str) -> str:
    """``path`` as seen from ``cwd`` when it lies below it (``build.py``), else in full."""
    return os.path.relpath(path, cwd) if path.startswith(cwd.rstrip("/") + "/") else path
