"""Cron jobs and their runs, kept under the state dir so they survive restarts.

``<state>/cron/jobs.json`` holds the jobs; ``<state>/cron/state.json`` the last time each
job was due (what catch-up after a restart counts from); ``<state>/cron/runs/<name>.jsonl``
a job's last ``cron.history`` runs. The CLI and a running gateway both change them: every
read-modify-write holds the file's lock and every write is atomic (:mod:`clawbot.statefile`).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import cattrs

from clawbot.statefile import atomic_write_json, json_text, locked, make_private_dir, private_append, read_state, report_once
from clawbot.types import CronJob, CronRun

NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
converter = cattrs.Converter(forbid_extra_keys=False)


class CronStoreError(ValueError):
    """A job that cannot be stored (a bad or taken name, no such job)."""


def check_name(name: str) -> str:
    if not NAME.fullmatch(name or ""):
        raise CronStoreError(f"name: {name!r} is not a job name; use 1-40 lowercase letters, digits, '-' or '_', starting with a letter or digit")
    return name


def iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(text: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


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

    def _ensure(self) -> None:
        make_private_dir(self.root / "runs")

    # -- jobs ----------------------------------------------------------------------------------

    def jobs(self) -> list[CronJob]:
        raw = read_state(self.jobs_path, "ignored: no cron job runs until it is fixed or the jobs are added again")
        return self._decode_jobs(raw)

    def _decode_jobs(self, raw: Any) -> list[CronJob]:
        if raw is None:
            return []
        entries = raw.get("jobs") if isinstance(raw, dict) else None
        if not isinstance(entries, list):
            report_once(self.jobs_path, 'has no "jobs" list; ignored')
            return []
        found = []
        for entry in entries:
            try:
                found.append(converter.structure(entry, CronJob))
            except (cattrs.BaseValidationError, TypeError, ValueError):
                report_once(self.jobs_path, f"holds a job that cannot be read ({json_text(entry)[:80]}); it is skipped")
        return found

    def get(self, name: str) -> CronJob | None:
        return next((job for job in self.jobs() if job.name == name), None)

    def _write_jobs(self, jobs: list[CronJob]) -> None:
        atomic_write_json(self.jobs_path, {"version": 1, "jobs": [converter.unstructure(job) for job in sorted(jobs, key=lambda j: j.name)]}, readable=True)

    def add(self, job: CronJob, now: datetime) -> CronJob:
        check_name(job.name)
        self._ensure()
        with locked(self.jobs_path):
            jobs = self.jobs()
            if any(j.name == job.name for j in jobs):
                raise CronStoreError(f"name: a job named {job.name!r} exists already; remove it first or pick another name")
            if not job.created_at:
                job = attrs.evolve(job, created_at=iso(now))
            self._write_jobs([*jobs, job])
        return job

    def replace(self, job: CronJob) -> CronJob:
        self._ensure()
        with locked(self.jobs_path):
            jobs = self.jobs()
            if not any(j.name == job.name for j in jobs):
                raise CronStoreError(f"no cron job is named {job.name!r}")
            self._write_jobs([job if j.name == job.name else j for j in jobs])
        return job

    def remove(self, name: str) -> bool:
        if not self.jobs_path.exists():
            return False
        with locked(self.jobs_path):
            jobs = self.jobs()
            kept = [j for j in jobs if j.name != name]
            if len(kept) == len(jobs):
                return False
            self._write_jobs(kept)
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
        entries = raw.get("last_due") if isinstance(raw, dict) else None
        found = {}
        for name, text in (entries or {}).items():
            when = parse_iso(text) if isinstance(text, str) else None
            if when is not None:
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

    def append_run(self, run: CronRun) -> None:
        self._ensure()
        path = self.runs_path(run.job)
        line = json_text(converter.unstructure(run)) + "\n"
        with locked(path):
            with private_append(path) as out:
                out.write(line)
            lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
            if len(lines) > self.history:  # kept short: only the last runs are worth reading
                from clawbot.statefile import atomic_write_text

                atomic_write_text(path, "".join(lines[-self.history :]))

    def runs(self, name: str) -> list[CronRun]:
        """The job's recorded runs, oldest first."""
        path = self.runs_path(name)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        found = []
        for line in lines:
            try:
                found.append(converter.structure(json.loads(line), CronRun))
            except (ValueError, TypeError, cattrs.BaseValidationError):
                report_once(path, "holds a line that is not a run; it is skipped")
        return found
