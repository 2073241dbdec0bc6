"""Cron's state files never stop the scheduler or the commands that read them.

Every field of every file cron keeps (``cron/jobs.json``, ``cron/state.json``,
``cron/runs/<job>.jsonl``) is written with each wrong value in turn (wrong types, null,
huge numbers, negative, NaN, NUL), and each file whole as something that is not it (not
UTF-8, truncated JSON, a torn last line, empty, a directory). Then, as a user would meet it:

* ``clawbot cron list`` and ``clawbot cron runs`` (the real CLI, in process) print the good
  entries, one line naming the bad file when something in it was wrong, and no traceback;
* the real scheduler on the same files (a restart) runs the other job, runs the damaged one
  at its next due time whenever its job is still readable, and records those runs so they
  read back, past a torn or corrupt line.

Each case gets fresh copies of the files per reader: the report is once per process and
file, and a user runs each command in a process of its own.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from clawbot.testing.cli import invoke_cli
from clawbot_automation.config import CronConfig
from clawbot_automation.cron_store import CronStore, iso
from clawbot_automation.scheduler import Scheduler

from .test_scheduler import T0, Clock, Recorder

# Written as JSON text: 1e400 loads as infinity, the long integer as an exact huge int.
WRONG = {
    "text": '"soon"',
    "int": "5",
    "negative": "-1",
    "fraction": "1.5",
    "bool": "true",
    "null": "null",
    "list": "[]",
    "object": "{}",
    "huge": "1e400",
    "huge-int": "1" + "0" * 400,
    "nan": "NaN",
    "nul": '"\\u0000"',
}
MARK = "\u2063MARK\u2063"
STARTED = iso(T0 - timedelta(hours=5))


def job(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "schedule": {"kind": "every", "expr": "1h", "tz": ""},
        "message": f"{name}, please",
        "agent_id": "",
        "session": "isolated",
        "deliver": "",
        "enabled": True,
        "created_at": iso(T0),
    }


def run(name: str) -> dict[str, Any]:
    return {
        "job": name,
        "run_id": f"{name}000001",
        "scheduled_at": STARTED,
        "started_at": STARTED,
        "finished_at": STARTED,
        "status": "ok",
        "delivered": None,
        "error": "",
        "session_key": f"agent:main:cron:{name}",
        "reason": "schedule",
    }


def jobs_text(bad: dict[str, Any] | str) -> str:
    return json.dumps({"version": 1, "jobs": [job("good"), bad]})


def run_line(record: dict[str, Any]) -> str:
    return json.dumps(record) + "\n"


# -- how each case damages a file: (the file, its bytes, or None for a directory in its place)

Damage = Callable[[Path, str], tuple[Path, bytes | None]]


def jobs_field(field: str) -> Damage:
    def build(cron: Path, wrong: str) -> tuple[Path, bytes | None]:
        if field == "file":
            text = wrong
        elif field == "jobs":
            text = json.dumps({"version": 1, "jobs": MARK}).replace(json.dumps(MARK), wrong)
        elif field == "job":
            text = jobs_text(MARK).replace(json.dumps(MARK), wrong)
        else:
            bad = job("bad")
            if field.startswith("schedule."):
                bad["schedule"][field.split(".")[1]] = MARK
            else:
                bad[field] = MARK
            text = jobs_text(bad).replace(json.dumps(MARK), wrong)
        return cron / "jobs.json", text.encode()

    return build


def state_field(field: str) -> Damage:
    def build(cron: Path, wrong: str) -> tuple[Path, bytes | None]:
        if field == "file":
            text = wrong
        elif field == "last_due":
            text = json.dumps({"version": 1, "last_due": MARK}).replace(json.dumps(MARK), wrong)
        else:
            text = json.dumps({"version": 1, "last_due": {"good": iso(T0), "bad": MARK}}).replace(json.dumps(MARK), wrong)
        return cron / "state.json", text.encode()

    return build


def runs_field(field: str) -> Damage:
    def build(cron: Path, wrong: str) -> tuple[Path, bytes | None]:
        record: Any = run("bad")
        if field == "line":
            record = MARK
        else:
            record = {**record, "run_id": "bad000002", field: MARK}
        line = json.dumps(record).replace(json.dumps(MARK), wrong) + "\n"
        return cron / "runs" / "bad.jsonl", (run_line(run("bad")) + line).encode()

    return build


RUN_FIELDS = ("job", "run_id", "scheduled_at", "started_at", "finished_at", "status", "delivered", "error", "session_key", "reason")
JOB_FIELDS = (
    "file",
    "jobs",
    "job",
    "name",
    "schedule",
    "schedule.kind",
    "schedule.expr",
    "schedule.tz",
    "message",
    "agent_id",
    "session",
    "deliver",
    "enabled",
    "created_at",
)
CASES: dict[str, Damage] = {
    **{f"jobs.json:{f}": jobs_field(f) for f in JOB_FIELDS},
    **{f"state.json:{f}": state_field(f) for f in ("file", "last_due", "last_due.bad")},
    **{f"runs:{f}": runs_field(f) for f in ("line", *RUN_FIELDS)},
}

#: per field, the values of WRONG that are right for it after all (no report expected)
VALID = {
    "jobs.json:jobs": {"list"},  # no jobs at all
    "jobs.json:name": {"text"},  # "soon" is a job name
    "state.json:last_due": {"object"},  # nothing due yet
    "runs:delivered": {"bool", "null"},
    **{f"jobs.json:{f}": {"text", "nul"} for f in ("schedule.expr", "schedule.tz", "message", "agent_id", "deliver", "created_at")},
    **{f"runs:{f}": {"text", "nul"} for f in RUN_FIELDS if f not in ("job", "status", "delivered")},
    "jobs.json:enabled": {"bool"},
}


def expected_runs(case: str, kind: str) -> set[str]:
    """The jobs the scheduler runs at their next due time with this damage."""
    if case in ("jobs.json:file", "jobs.json:jobs"):
        return set()  # the good job's own entry is gone too
    if not case.startswith("jobs.json:"):
        return {"good", "bad"}
    if kind not in VALID.get(case, set()):
        return {"good"}  # the damaged job is skipped, the other runs
    if case == "jobs.json:name":
        return {"good", "soon"}
    if case in ("jobs.json:schedule.expr", "jobs.json:schedule.tz"):
        return {"good"}  # readable, but never due: it is not scheduled (and says why)
    return {"good", "bad"}


# -- whole files that are not what they should be

SOME_JOBS = jobs_text(job("bad")).encode()
SOME_STATE = json.dumps({"version": 1, "last_due": {"good": iso(T0), "bad": iso(T0)}}).encode()
WHOLE_FILES: dict[str, Callable[[Path], tuple[Path, bytes | None]]] = {
    "jobs.json:not-utf8": lambda cron: (cron / "jobs.json", SOME_JOBS.replace(b"please", b"pl\xe9ase")),
    "jobs.json:truncated": lambda cron: (cron / "jobs.json", SOME_JOBS[: len(SOME_JOBS) // 2]),
    "jobs.json:empty": lambda cron: (cron / "jobs.json", b""),
    "jobs.json:directory": lambda cron: (cron / "jobs.json", None),
    "state.json:not-utf8": lambda cron: (cron / "state.json", SOME_STATE + b"\xff"),
    "state.json:truncated": lambda cron: (cron / "state.json", SOME_STATE[:-9]),
    "state.json:empty": lambda cron: (cron / "state.json", b""),
    "state.json:directory": lambda cron: (cron / "state.json", None),
    "runs:not-utf8": lambda cron: (
        cron / "runs" / "bad.jsonl",
        (run_line(run("bad")) + run_line({**run("bad"), "run_id": "x2", "error": "caf-"})).encode().replace(b"caf-", b"caf\xe9"),
    ),
    "runs:torn-last-line": lambda cron: (cron / "runs" / "bad.jsonl", (run_line(run("bad")) + '{"job": "bad", "run_id": "x2", "sta').encode()),
    "runs:empty": lambda cron: (cron / "runs" / "bad.jsonl", b""),
    "runs:directory": lambda cron: (cron / "runs" / "bad.jsonl", None),
    "locks:directory": lambda cron: (cron / "locks" / "bad.lock", None),  # the job's run lock cannot be taken
}


def lay_out(home: Path, damage: tuple[Path, bytes | None]) -> Path:
    """A state dir with jobs good and bad, a run of each, and then ``damage`` done to one file."""
    cron = home / "cron"
    (cron / "runs").mkdir(parents=True)
    (home / "clawbot.toml").write_text("[channels.terminal]\nenabled = false\n", encoding="utf-8")
    (cron / "jobs.json").write_text(jobs_text(job("bad")), encoding="utf-8")
    for name in ("good", "bad"):
        (cron / "runs" / f"{name}.jsonl").write_text(run_line(run(name)), encoding="utf-8")
    path, payload = damage
    path.parent.mkdir(exist_ok=True)
    if payload is None:
        path.unlink(missing_ok=True)
        path.mkdir()
    else:
        path.write_bytes(payload)
    return path


def naming(text: str, path: Path) -> list[str]:
    return [line for line in text.splitlines() if str(path) in line]


async def check(tmp_path: Path, label: str, build: Callable[[Path], tuple[Path, bytes | None]], reported: bool, runs_expected: set[str]) -> None:
    # `clawbot cron list`: every readable job, one line naming the bad file
    home = tmp_path / label / "list"
    path = lay_out(home, build(home / "cron"))
    listed = invoke_cli("cron", "list", home=home)
    assert listed.returncode == 0, (label, listed.stderr)
    assert "Traceback" not in listed.stdout + listed.stderr, label
    if "good" in runs_expected:
        assert any(line.startswith("good  every 1h") for line in listed.stdout.splitlines()), (label, listed.stdout)
    assert len(naming(listed.stderr, path)) == (1 if reported else 0), (label, listed.stderr)

    # `clawbot cron runs bad`: every readable run, one line naming the bad file
    home = tmp_path / label / "runs"
    path = lay_out(home, build(home / "cron"))
    shown = invoke_cli("cron", "runs", "bad", home=home)
    assert "Traceback" not in shown.stdout + shown.stderr, label
    if label.startswith("runs:"):
        assert shown.returncode == 0, (label, shown.stderr)
        if not label.endswith(("directory", "empty")):
            assert shown.stdout.splitlines()[0].startswith(f"{STARTED}  ok"), (label, shown.stdout)  # the good run before the bad line
        assert len(naming(shown.stderr, path)) == (1 if reported else 0), (label, shown.stderr)
    else:
        assert shown.returncode in (0, 1), (label, shown.stderr)  # 1: the job is gone with its entry

    # a restart of the scheduler on the same files: the others run, the damaged one at its next due time
    home = tmp_path / label / "scheduler"
    path = lay_out(home, build(home / "cron"))
    clock = Clock(T0 + timedelta(minutes=30))
    recorder = Recorder(clock)
    store = CronStore(home / "cron")
    scheduler = Scheduler(store, recorder, CronConfig(), "UTC", clock)
    scheduler.load()
    clock.now = T0 + timedelta(hours=2)
    scheduler.tick()
    await scheduler.settle()
    await scheduler.aclose()
    ran = sorted(name for name, _, _ in recorder.calls)
    assert ran == sorted(runs_expected), (label, ran)
    for name in runs_expected:
        if label == "runs:directory" and name == "bad":
            continue  # ran, but there is no history file to record it in (reported)
        latest = store.runs(name)[-1]
        assert (latest.status, latest.reason, latest.scheduled_at > STARTED) == ("ok", "schedule", True), (label, name, store.runs(name))
    if label.startswith("runs:") and not label.endswith(("directory", "empty")):
        assert store.runs("bad")[0].run_id == "bad000001", label  # the good run before the bad line is kept


@pytest.mark.parametrize("case", sorted(CASES))
async def test_a_wrong_value_in_any_field_of_a_cron_state_file(case: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    for kind, wrong in WRONG.items():
        reported = kind not in VALID.get(case, set())
        with caplog.at_level(logging.WARNING):
            await check(tmp_path, f"{case}:{kind}", lambda cron, case=case, wrong=wrong: CASES[case](cron, wrong), reported, expected_runs(case, kind))
        assert all(record.exc_info is None for record in caplog.records), (case, kind, caplog.text)
        caplog.clear()


@pytest.mark.parametrize("case", sorted(WHOLE_FILES))
async def test_a_cron_state_file_that_is_not_one(case: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    reported = case not in ("runs:empty", "locks:directory")  # an empty history is a job that has not run; the commands take no lock
    expected = {"good", "bad"} if not case.startswith("jobs.json") else set()
    with caplog.at_level(logging.WARNING):
        await check(tmp_path, case, WHOLE_FILES[case], reported, expected)
    assert all(record.exc_info is None for record in caplog.records), (case, caplog.text)


def test_a_change_keeps_the_entries_it_cannot_read_and_never_replaces_a_file_it_cannot(tmp_path: Path) -> None:
    cron = tmp_path / "cron"
    (cron / "runs").mkdir(parents=True)
    (tmp_path / "clawbot.toml").write_text("[channels.terminal]\nenabled = false\n", encoding="utf-8")
    broken = {**job("bad"), "enabled": "yes"}
    (cron / "jobs.json").write_text(jobs_text(broken), encoding="utf-8")
    added = invoke_cli("cron", "add", "--name", "new", "--every", "2h", "--message", "m", home=tmp_path)
    assert added.returncode == 0, added.stderr
    assert "enabled: expected true or false" in added.stderr  # said once, naming the file
    kept = json.loads((cron / "jobs.json").read_text(encoding="utf-8"))["jobs"]
    assert [entry["name"] for entry in kept] == ["good", "new", "bad"] and kept[-1] == broken  # the user can still fix it
    assert invoke_cli("cron", "rm", "good", home=tmp_path).returncode == 0
    assert json.loads((cron / "jobs.json").read_text(encoding="utf-8"))["jobs"][-1] == broken

    unreadable = b'{"version": 1, "jobs": [' + json.dumps(job("precious")).encode() + b", {"  # truncated
    (cron / "jobs.json").write_bytes(unreadable)
    for command in (["add", "--name", "other", "--every", "1h", "--message", "m"], ["rm", "precious"]):
        refused = invoke_cli("cron", *command, home=tmp_path)
        assert refused.returncode in (1, 2) and "fix it or move it away first: nothing was changed" in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr
    assert (cron / "jobs.json").read_bytes() == unreadable
