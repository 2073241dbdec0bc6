"""``clawbot cron add|list|rm|run|runs``: the user's cron jobs.

Jobs live in ``<state>/cron/jobs.json``; a running gateway picks up changes within seconds.
``run`` runs a job now: in the running gateway when there is one (its channels deliver the
reply), else in this process (a reply meant for a channel then cannot be delivered, and the
run is recorded as failed for that reason). A job runs once at a time across processes: a
job running elsewhere is not started again here, and when the gateway dies while it runs
the job for ``run``, the job is not run again here (the model would be asked twice): the
command says so, and the run is handled as interrupted (``cron.catch_up``) when the gateway
starts again, or run here by the next ``clawbot cron run``.
"""

from __future__ import annotations

import sys
from datetime import datetime

import click
from clawbot.commandkit import CliState, GatewayAnswerLost, agent_host, call_gateway, config_option, echo, echo_json, load_config, load_settings, run_async

from clawbot_automation.config import CronConfig
from clawbot_automation.cron_store import CronStore, CronStoreError, converter, parse_iso
from clawbot_automation.jobs import JobError, add_job
from clawbot_automation.records import CronJob, CronRun, CronSchedule
from clawbot_automation.run_lock import JobRunning
from clawbot_automation.schedule import ScheduleError, safe_next_due
from clawbot_automation.service import cron_scheduler, cron_store


def _cron(state: CliState) -> CronConfig:
    """The ``[cron]`` table (its defaults when this plugin's claim on it is not loaded)."""
    table = load_config(state).section("cron")
    return table if isinstance(table, CronConfig) else CronConfig()


def _store(state: CliState) -> CronStore:
    return cron_store(state.paths().root, _cron(state))


def _fail(message: str, code: int = 2) -> None:
    echo(f"error: {message}", err=True)
    sys.exit(code)


def _schedule_text(job: CronJob) -> str:
    tz = f" ({job.schedule.tz})" if job.schedule.tz else ""
    return f"{job.schedule.kind} {job.schedule.expr}{tz}"


@click.group()
def cron() -> None:
    """Add, list, remove and run cron jobs: messages your agent acts on at set times."""


@cron.command("add")
@click.option("--name", required=True, help="A short name: lowercase letters, digits, '-' or '_'.")
@click.option("--cron", "cron_expr", default=None, help='A five-field cron expression, e.g. "0 9 * * 1-5".')
@click.option("--tz", default="", help="The time zone --cron and --at are read in (default: agents.defaults.timezone).")
@click.option("--at", "at", default=None, help="Once, at this ISO 8601 time, e.g. 2026-12-01T09:00.")
@click.option("--every", default=None, help="Repeatedly, this far apart: 90s, 15m, 2h, 1d, 1h30m.")
@click.option("--message", required=True, help="What the agent is asked on every run.")
@click.option("--agent", "agent_id", default="", help="The agent that runs it (default: the default agent).")
@click.option("--session", type=click.Choice(["isolated", "main"]), default="isolated", help="isolated: the job's own session; main: the agent's main session.")
@click.option("--deliver", default="", help="Where the reply goes, <channel>:<target>, e.g. telegram:123456 (default: nowhere).")
@config_option
@click.pass_obj
def add(
    state: CliState, name: str, cron_expr: str | None, tz: str, at: str | None, every: str | None, message: str, agent_id: str, session: str, deliver: str
) -> None:
    """Add a job: exactly one of --cron, --at or --every says when it runs."""

    given = [(kind, expr) for kind, expr in (("cron", cron_expr), ("at", at), ("every", every)) if expr is not None]
    if len(given) != 1:
        _fail("give exactly one of --cron, --at or --every")
    if tz and given[0][0] == "every":
        _fail("--tz: an --every job runs at fixed intervals; a time zone means nothing to it")
    kind, expr = given[0]
    store = _store(state)
    job = CronJob(name, CronSchedule(kind, expr, tz), message, agent_id=agent_id, session=session, deliver=deliver)  # type: ignore[arg-type]
    try:
        added = add_job(store, job, load_settings(state), datetime.now().astimezone())
    except JobError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"{store.jobs_path} cannot be written ({exc.strerror or exc})", 1)
    echo(f"added cron job {added.name}: {_schedule_text(added)}")


@cron.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@config_option
@click.pass_obj
def list_jobs(state: CliState, as_json: bool) -> None:
    """Every job, with its schedule, next run and last run."""

    store = _store(state)
    jobs = store.jobs()
    last = store.last_due()
    tz = load_settings(state).timezone
    rows = []
    for job in jobs:
        try:
            after = max(filter(None, [last.get(job.name), datetime.now().astimezone()]))
            due = safe_next_due(job.schedule, after, tz) if job.enabled else None
        except ScheduleError:
            due = None
        runs = store.runs(job.name)
        rows.append((job, due, runs[-1] if runs else None))
    if as_json:
        shown = [
            {**converter.unstructure(job), "next_run": due.isoformat() if due else None, "last_run": converter.unstructure(run) if run else None}
            for job, due, run in rows
        ]
        echo_json(shown, ensure_ascii=True)
        return
    if not rows:
        echo("no cron jobs yet: add one with `clawbot cron add`")
        return
    for job, due, run in rows:
        nxt = due.astimezone().strftime("%Y-%m-%d %H:%M") if due else "-"
        ran = f"{run.status} at {run.started_at}" if run else "never ran"
        echo(f"{job.name}  {_schedule_text(job)}  next: {nxt}  last: {ran}  -> {job.deliver or '(no delivery)'}")


@cron.command("rm")
@click.argument("name")
@config_option
@click.pass_obj
def remove(state: CliState, name: str) -> None:
    """Remove a job and its run history."""

    store = _store(state)
    try:
        removed = store.remove(name)
    except CronStoreError as exc:
        _fail(str(exc), 1)
    except OSError as exc:
        _fail(f"{store.jobs_path} cannot be written ({exc.strerror or exc})", 1)
    if not removed:
        _fail(f"no cron job is named {name!r}", 1)
    echo(f"removed cron job {name}")


@cron.command("runs")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@config_option
@click.pass_obj
def runs(state: CliState, name: str, as_json: bool) -> None:
    """A job's last runs: when, status, how long, delivered or not."""

    store = _store(state)
    try:
        found = store.runs(name)
    except CronStoreError as exc:
        _fail(str(exc))
    if store.get(name) is None and not found:
        _fail(f"no cron job is named {name!r}", 1)
    if as_json:
        echo_json([converter.unstructure(run) for run in found], ensure_ascii=True)
        return
    if not found:
        echo(f"{name} has not run yet")
    for run in found:
        echo(_run_line(run))


def _run_line(run: CronRun) -> str:

    start, end = parse_iso(run.started_at), parse_iso(run.finished_at)
    took = f"{(end - start).total_seconds():.1f}s" if start and end else "-"
    delivered = {None: "no delivery", True: "delivered", False: "not delivered"}[run.delivered]
    error = f"  {run.error}" if run.error else ""
    return f"{run.started_at}  {run.status}  {took}  {delivered}  ({run.reason}){error}"


@cron.command("run")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@config_option
@click.pass_obj
def run_now(state: CliState, name: str, as_json: bool) -> None:
    """Run a job now, in the running gateway when there is one."""
    try:  # a run is a whole agent turn
        answered = call_gateway(state, "POST", f"/v1/cron/{name}/run", timeout=3600.0)
    except GatewayAnswerLost as exc:  # the gateway took the run and died: running it here would ask the model twice
        _fail(
            f"{exc}; the run of {name} it started was cut off and is not run again here. "
            f"The gateway marks it interrupted and follows cron.catch_up for it when it starts again; "
            f"to run it here instead, run `clawbot cron run {name}` again while the gateway is down",
            1,
        )
    answer = None  # no gateway (or gone since its endpoint file was written): run it here
    if answered is not None:
        status, answer = answered
        if status != 200:
            _fail((answer or {}).get("error") or f"the gateway answered {status}", 1)
    if answer is None:
        store = _store(state)
        job = store.get(name)
        if job is None:
            _fail(f"no cron job is named {name!r}", 1)
        answer = run_async(_run_here(state, job))
        if answer is None:
            sys.exit(130)
        if isinstance(answer, str):
            _fail(answer, 1)
    _print_run(answer, as_json)


async def _run_here(state: CliState, job: CronJob) -> dict | str:
    """The run as a dict, or why it did not run."""
    async with agent_host(state) as host:
        try:
            run = await cron_scheduler(host, _cron(state)).run_now(job)  # the job's lock and records, as in a gateway
        except JobRunning as exc:
            return f"{exc}; it is not started twice (`clawbot cron runs {job.name}` shows how it ends)"
    return converter.unstructure(run)


def _print_run(run: dict, as_json: bool) -> None:
    if as_json:
        echo_json(run, ensure_ascii=True)
    else:
        echo(_run_line(converter.structure(run, CronRun)))
    if run.get("status") != "ok":
        sys.exit(1)
