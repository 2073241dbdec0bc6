"""``cron``: list, add, edit, remove and run now the owner's scheduled jobs.

A job asks its agent ``message`` on a schedule (a cron expression, one ``at`` time or
``every`` duration) and can deliver the reply to a chat (``deliver``: ``<channel>:<target>``).
Only the agent's main session may use it: the jobs are the owner's. It reaches them through
the :class:`~clawbot_automation.cron_access.CronJobs` capability, built by the kernel for this
call's agent, session and trust.
"""

from __future__ import annotations

from typing import Any

from clawbot import ServiceUnavailable, Tool, ToolCall, ToolResult

from clawbot_automation.cron_access import CronJobs
from clawbot_automation.records import CronJob, CronSchedule

GROUP = "automation"
ACTIONS = ("list", "add", "edit", "remove", "run")
KINDS = ("cron", "at", "every")


def _schedule(args: dict[str, Any]) -> CronSchedule | None | str:
    given = [kind for kind in KINDS if args.get(kind)]
    if not given:
        return None
    if len(given) > 1:
        return f"give one of cron, at or every, not {' and '.join(given)}"
    return CronSchedule(given[0], str(args[given[0]]), str(args.get("tz") or ""))  # type: ignore[arg-type]


def _job_line(job: CronJob) -> str:
    tz = f" ({job.schedule.tz})" if job.schedule.tz else ""
    state = "" if job.enabled else " [disabled]"
    target = f" -> {job.deliver}" if job.deliver else ""
    return f"- {job.name}{state}: {job.schedule.kind} {job.schedule.expr}{tz}, agent {job.agent_id or 'default'}, {job.session} session{target}: {job.message}"


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


async def cron_tool(call: ToolCall) -> ToolResult:
    if call.services is None:
        return ToolResult.error(f"{call.tool_name} is unavailable here: it only works inside an agent turn.")
    args = call.arguments
    action, name = args["action"], str(args.get("name") or "")
    if action != "list" and not name:
        return ToolResult.error(f"cron: {action} needs the job's name")
    schedule = _schedule(args)
    if isinstance(schedule, str):
        return ToolResult.error(f"cron: {schedule}")
    try:
        cron = call.services.capability(CronJobs)
        if action == "list":
            jobs = cron.jobs()
            text = "\n".join(_job_line(job) for job in jobs) if jobs else "No cron jobs."
            return ToolResult.text(text, jobs=[job.name for job in jobs])
        if action == "add":
            if schedule is None:
                return ToolResult.error("cron: add needs a schedule: cron (five fields), at (ISO 8601 time) or every (90s, 15m, 2h, 1d)")
            if not args.get("message"):
                return ToolResult.error("cron: add needs the message the agent is asked on every run")
            job = CronJob(
                name,
                schedule,
                str(args["message"]),
                agent_id=str(args.get("agent") or ""),
                session=args.get("session") or "isolated",
                deliver=str(args.get("deliver") or ""),
            )
            added = cron.add(job)
            return ToolResult.text(f"Added:\n{_job_line(added)}", name=added.name)
        if action == "edit":
            changes: dict[str, Any] = {key: args[key] for key in ("message", "session", "deliver", "enabled") if key in args}
            if "agent" in args:
                changes["agent_id"] = args["agent"]
            if schedule is not None:
                changes["schedule"] = schedule
            if not changes:
                return ToolResult.error("cron: edit needs something to change (a schedule, message, session, deliver or enabled)")
            edited = cron.edit(name, **changes)
            return ToolResult.text(f"Changed:\n{_job_line(edited)}", name=edited.name)
        if action == "remove":
            if not cron.remove(name):
                return ToolResult.error(f"cron: no job is named {name!r}")
            return ToolResult.text(f"Removed {name}.", name=name)
        run = await cron.run_now(name)
    except ServiceUnavailable as exc:
        return ToolResult.error(f"cron: {exc}")
    delivered = {None: "no delivery", True: "delivered", False: "not delivered"}[run.delivered]
    error = f": {run.error}" if run.error else ""
    return ToolResult.text(f"Ran {name}: {run.status}, {delivered}{error}", status=run.status, delivered=run.delivered)


def make_tool() -> Tool:
    return Tool(
        name="cron",
        description=(
            "Manage scheduled jobs: at set times the agent is asked a message, and the reply can be delivered to a chat. "
            "Actions: list; add (name, one of cron/at/every, message; optional tz, agent, session, deliver); "
            "edit (name and what changes); remove (name); run (name: run it now). Use it for reminders and recurring checks."
        ),
        parameters=_schema(
            {
                "action": {"type": "string", "enum": list(ACTIONS)},
                "name": {"type": "string", "description": "The job's name: lowercase letters, digits, '-' or '_'."},
                "cron": {"type": "string", "description": 'Five-field cron expression, e.g. "0 9 * * 1-5".'},
                "at": {"type": "string", "description": "One ISO 8601 time, e.g. 2026-12-01T09:00 (read in tz or the user's zone)."},
                "every": {"type": "string", "description": "Interval: 90s, 15m, 2h, 1d, 1h30m."},
                "tz": {"type": "string", "description": "IANA time zone for cron and at (default: the user's)."},
                "message": {"type": "string", "description": "What the agent is asked on every run."},
                "agent": {"type": "string", "description": "Agent id that runs it (default: this agent)."},
                "session": {"type": "string", "enum": ["isolated", "main"], "description": "isolated: its own session (default); main: the main session."},
                "deliver": {"type": "string", "description": "Where the reply goes: <channel>:<target>, e.g. telegram:123456; empty: nowhere."},
                "enabled": {"type": "boolean", "description": "edit: pause (false) or resume (true) the job."},
            },
            ["action"],
        ),
        handler=cron_tool,
        summary="List, add, edit, remove or run scheduled jobs",
        group=GROUP,
        order=700,
        timeout_s=3600,
        concurrent=False,
    )
