"""Cron jobs and their runs, kept under the state dir so they survive restarts.

``<state>/cron/jobs.json`` holds the jobs; ``<state>/cron/state.json`` the last time each
job was due (what catch-up after a restart counts from); ``<state>/cron/runs/<name>.jsonl``
a job's last ``cron.history`` runs, one JSON line each. The CLI and a running gateway both
change them: every read-modify-write holds the file's lock and every write is atomic
(:mod:`clawbot.statefile`).

A run is written to its history before it starts (status ``running``, fsynced) and replaced
by how it ended; a ``running`` record whose job nobody runs (:mod:`~clawbot_automation.run_lock`)
is left over from a process that was killed, and is marked ``interrupted`` by the next one.

The files never lock a user out: every field is type-checked on read, and a malformed job,
due time or history line is skipped (the others kept) and reported once, naming the file.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import cattrs
from clawbot.records import record_converter, record_problem
from clawbot.statefile import append_line, atomic_write_json, json_text, locked, make_private_dir, read_state, replace_file, report_once, shown

from clawbot_automation.records import CronJob, CronRun

NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
converter = record_converter()
"""Strict: a field of the wrong type makes its entry unreadable instead of being coerced
(``str(5)``, ``bool("no")``); a field a newer clawbot added is ignored."""
#: stands for a jobs file that cannot be read at all among its unreadable entries
_UNREADABLE = object()
#: how a started run's record is told apart from finished ones without parsing every line
_RUNNING_MARK = b'"status":"running"'


class CronStoreError(ValueError):
    """A job that cannot be stored (a bad or taken name, no such job)."""


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise CronStoreError(f"name: {name!r} is not a job name; use 1-40 lowercase letters, digits, '-' or '_', starting with a letter or digit")
    return name


def iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(text: str) -> datetime | None:
    """The instant ``text`` names (UTC), or ``None`` for anything else (a year 1 time with an
    offset overflows when moved to UTC: ``None`` too)."""
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return when.astimezone(UTC) if when.tzinfo is not None else when.replace(tzinfo=UTC)
    except (ValueError, AttributeError, OverflowError):
        return None


def _problem(exc: BaseException) -> str:
    """The first thing cattrs found wrong in an entry, with its field: "schedule.kind: ..."."""
    return record_problem(exc)[:160]


def _structure(entry: Any, cls: type[Any]) -> Any:
    """``entry`` as a ``cls``, or a string saying what is wrong with it."""
    if not isinstance(entry, dict):
        return f"{shown(entry)} is not an object"
    try:
        return converter.structure(entry, cls)
    except (cattrs.BaseValidationError, TypeError, ValueError, KeyError) as exc:
        return _problem(exc)


@attrs.define
class CronStore:
    root: Path
    """``<state>/cron``."""
    history: int = 50

    @property
    def jobs_path(self) -> Path:
        return self.root / "jobs.json"

    @property
    def state_path(self) -> Path:
        return self.root / "state.json"

    def runs_path(self, name: str) -> Path:
        return self.root / "runs" / f"{check_name(name)}.jsonl"

    def lock_path(self, name: str) -> Path:
        """The lock a process holds while it runs the job (:mod:`~clawbot_automation.run_lock`)."""
        return self.root / "locks" / f"{check_name(name)}.lock"

    def _ensure(self) -> None:
        make_private_dir(self.root / "runs")

    # -- jobs ----------------------------------------------------------------------------------

    def jobs(self) -> list[CronJob]:
        return self._read_jobs()[0]

    def _read_jobs(self) -> tuple[list[CronJob], list[Any]]:
        """The jobs that can be read, and the entries that cannot (kept as they are by every
        change, so the user can still fix them); a file that is there but cannot be read at
        all makes a change raise :class:`CronStoreError` rather than replace it."""
        what = "ignored: no cron job runs until it is fixed"
        raw = read_state(self.jobs_path, what)
        if raw is None:
            return [], [] if not self.jobs_path.exists() else [_UNREADABLE]
        entries = raw.get("jobs") if isinstance(raw, dict) else None
        if not isinstance(entries, list):
            report_once(self.jobs_path, f'has no "jobs" list; {what}')
            return [], [_UNREADABLE]
        found: dict[str, CronJob] = {}
        unreadable = []
        for number, entry in enumerate(entries, 1):
            job = _structure(entry, CronJob)
            if isinstance(job, CronJob) and not NAME.fullmatch(job.name):
                job = f"name: {shown(job.name)} is not a job name"
            elif isinstance(job, CronJob) and job.name in found:
                job = f"name: a job named {job.name!r} came before"
            if isinstance(job, str):
                report_once(self.jobs_path, f"job {number} cannot be read ({job}); it is skipped, the other jobs run")
                unreadable.append(entry)
                continue
            found[job.name] = job
        return list(found.values()), unreadable

    def _jobs_to_change(self) -> tuple[list[CronJob], list[Any]]:
        jobs, unreadable = self._read_jobs()
        if _UNREADABLE in unreadable:
            raise CronStoreError(f"{self.jobs_path} cannot be read (see the warning above); fix it or move it away first: nothing was changed")
        return jobs, unreadable

    def get(self, name: str) -> CronJob | None:
        return next((job for job in self.jobs() if job.name == name), None)

    def _write_jobs(self, jobs: list[CronJob], unreadable: list[Any]) -> None:
        entries = [converter.unstructure(job) for job in sorted(jobs, key=lambda j: j.name)]
        atomic_write_json(self.jobs_path, {"version": 1, "jobs": [*entries, *unreadable]}, readable=True)

    def add(self, job: CronJob, now: datetime) -> CronJob:
        check_name(job.name)
        self._ensure()
        with locked(self.jobs_path):
            jobs, unreadable = self._jobs_to_change()
            if any(j.name == job.name for j in jobs):
                raise CronStoreError(f"name: a job named {job.name!r} exists already; remove it first or pick another name")
            if not job.created_at:
                job = attrs.evolve(job, created_at=iso(now))
            self._write_jobs([*jobs, job], unreadable)
        return job

    def replace(self, job: CronJob) -> CronJob:
        self._ensure()
        with locked(self.jobs_path):
            jobs, unreadable = self._jobs_to_change()
            if not any(j.name == job.name for j in jobs):
                raise CronStoreError(f"no cron job is named {job.name!r}")
            self._write_jobs([job if j.name == job.name else j for j in jobs], unreadable)
        return job

    def remove(self, name: str) -> bool:
        if not self.jobs_path.exists():
            return False
        with locked(self.jobs_path):
            jobs, unreadable = self._jobs_to_change()
            kept = [j for j in jobs if j.name != name]
            if len(kept) == len(jobs):
                return False
            self._write_jobs(kept, unreadable)
        self.runs_path(name).unlink(missing_ok=True)
        self.set_due({name: None})
        return True

    def version(self) -> tuple[int, int] | None:
        """What changes when the jobs file does (its mtime and size): a gateway rereads it then."""
        try:
            stat = self.jobs_path.stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    # -- when each job was last due ------------------------------------------------------------

    def last_due(self) -> dict[str, datetime]:
        raw = read_state(self.state_path, "ignored: missed runs are counted from when each job was added")
        if raw is None:
            return {}
        entries = raw.get("last_due") if isinstance(raw, dict) else None
        if not isinstance(entries, dict):
            report_once(self.state_path, 'has no "last_due" object; ignored: missed runs are counted from when each job was added')
            return {}
        found = {}
        for name, text in entries.items():
            when = parse_iso(text) if isinstance(text, str) else None
            if when is None or not NAME.fullmatch(name):
                what = f"the job name {shown(name)} is not a job name" if when is not None else f"last_due of {shown(name)} is {shown(text)}, not a time"
                report_once(self.state_path, f"{what}; ignored: that job's missed runs are counted from when it was added")
                continue
            found[name] = when
        return found

    def set_due(self, changes: dict[str, datetime | None]) -> None:
        """Record when jobs were last due (``None``: forget the job); one write for many."""
        if not changes:
            return
        self._ensure()
        with locked(self.state_path):
            current = {name: iso(when) for name, when in self.last_due().items()}
            for name, when in changes.items():
                if when is None:
                    current.pop(name, None)
                else:
                    current[name] = iso(when)
            atomic_write_json(self.state_path, {"version": 1, "last_due": current})

    # -- run history ---------------------------------------------------------------------------

    def begin_run(self, run: CronRun) -> None:
        """Record ``run`` (status ``running``) before it starts, durably: a process killed
        while it runs leaves this record for the next one to find."""
        self._ensure()
        path = self.runs_path(run.job)
        with locked(path):
            append_line(path, _line(run), durable=True)

    def append_run(self, run: CronRun) -> None:
        """Record how ``run`` ended, in place of its ``running`` record when there is one;
        only the last ``history`` lines are kept."""
        self._ensure()
        path = self.runs_path(run.job)
        with locked(path):
            lines = _raw_lines(path)
            place = next((i for i in range(len(lines) - 1, -1, -1) if _run_id_of(lines[i]) == run.run_id), None)
            if place is None:
                lines.append(_line(run).rstrip(b"\n"))
            else:
                lines[place] = _line(run).rstrip(b"\n")
            replace_file(path, b"".join(line + b"\n" for line in lines[-self.history :]), durable=True)

    def interrupt(self, name: str, now: datetime, note: str) -> list[CronRun]:
        """Mark the job's ``running`` records ``interrupted`` (``note`` says why and what
        follows); the runs so marked. Only for the holder of the job's run lock: nobody else
        can be running them."""
        path = self.runs_path(name)
        if not self._may_hold_running(path):
            return []
        with locked(path):
            lines = _raw_lines(path)
            marked = []
            for number, line in enumerate(lines):
                run = _decode_run(line, name) if _RUNNING_MARK in line else None
                if isinstance(run, CronRun) and run.status == "running":
                    run = attrs.evolve(run, status="interrupted", finished_at=iso(now), error=note)
                    lines[number] = _line(run).rstrip(b"\n")
                    marked.append(run)
            if marked:
                replace_file(path, b"".join(line + b"\n" for line in lines), durable=True)
        return marked

    def with_running_records(self, names: list[str]) -> list[str]:
        """Those of ``names`` whose history holds a ``running`` record (cheap: a byte search)."""
        return [name for name in names if self._may_hold_running(self.runs_path(name))]

    @staticmethod
    def _may_hold_running(path: Path) -> bool:
        try:
            return _RUNNING_MARK in path.read_bytes()
        except OSError:
            return False

    def runs(self, name: str) -> list[CronRun]:
        """The job's recorded runs, oldest first; a line that is not one is skipped and
        reported once, naming the file."""
        path = self.runs_path(name)
        try:
            payload = path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            report_once(path, f"cannot be read ({exc.strerror or exc}); the runs of {name} are not shown")
            return []
        lines = payload.split(b"\n")
        torn = lines[-1] != b""
        found = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            run = _decode_run(line, name)
            if isinstance(run, CronRun):
                found.append(run)
            elif torn and number == len(lines):
                report_once(path, f"line {number}: skipped a torn last line (the process stopped while writing it)")
            else:
                report_once(path, f"line {number}: skipped, not a run of {name} ({run})")
        return found


def _line(run: CronRun) -> bytes:
    return (json_text(converter.unstructure(run), separators=(",", ":")) + "\n").encode("utf-8")


def _raw_lines(path: Path) -> list[bytes]:
    """The lines of a history (without line ends, blank ones dropped) as they are, good or not:
    a rewrite keeps what it cannot read. Missing: none; unreadable: ``OSError``."""
    try:
        payload = path.read_bytes()
    except FileNotFoundError:
        return []
    return [line for line in payload.split(b"\n") if line.strip()]


def _decode_run(line: bytes, name: str) -> CronRun | str:
    """The run on ``line`` (of job ``name``), or what is wrong with it."""
    try:
        record = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        return "not UTF-8 text"
    except ValueError:
        return "not JSON"
    run = _structure(record, CronRun)
    if isinstance(run, CronRun) and run.job != name:
        return f"job: {shown(run.job)} is another job"
    return run


def _run_id_of(line: bytes) -> str | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record.get("run_id") if isinstance(record, dict) else None
