"""``clawbot skills list`` and ``clawbot skills check``."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

import attrs
import click

from clawbot.cli.output import console, echo, echo_json
from clawbot.cli.state import EXIT_CONFIG, CliState, config_option, run_async, user_errors

if TYPE_CHECKING:  # deferred: annotations only; `--help` answers without loading the kernel
    from clawbot.skills.catalog import SkillSnapshot

EXIT_MALFORMED = 1


@click.group()
def skills() -> None:
    """List the skills each agent has, or check them for problems."""


def _snapshots(state: CliState, agent_id: str | None, *, with_prompt: bool = False) -> dict[str, SkillSnapshot]:
    """Boot the kernel (plugin skill sources included) and read the skills of the agents.

    ``with_prompt``: also build each agent's system prompt, so skills offered to it but left
    out of its catalogue (``skills.prompt_max_chars``) are excluded with that reason.
    """
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from clawbot.agent.prompt_report import agent_prompt, prompt_report
    from clawbot.skills.catalog import SkillCatalog

    logging.getLogger("clawbot.skills").setLevel(logging.ERROR)  # this command prints the problems itself

    async def snapshot(kernel, catalog: SkillCatalog, agent: str) -> SkillSnapshot:  # noqa: ANN001
        found = catalog.snapshot(agent)
        if not with_prompt:
            return found
        left_out = prompt_report(await agent_prompt(kernel, agent))["skills"]["left_out"]
        reason = "left out of the prompt: the catalogue is full (skills.prompt_max_chars)"
        return attrs.evolve(
            found,
            prompt=tuple(entry for entry in found.prompt if entry.name not in left_out),
            excluded={**found.excluded, **dict.fromkeys(left_out, reason)},
        )

    async def read() -> dict[str, SkillSnapshot]:
        kernel = await state.kernel()
        try:
            config = kernel.config
            if agent_id is not None and config.agent(agent_id) is None:
                known = ", ".join(config.agent_ids()) or "none"
                echo(f"error: no agent {agent_id!r} in the configuration (agents: {known})", err=True)
                sys.exit(EXIT_CONFIG)
            catalog = SkillCatalog(kernel)
            ids = [agent_id] if agent_id is not None else config.agent_ids() or [config.default_agent_id()]
            return {one: await snapshot(kernel, catalog, one) for one in ids}
        finally:
            await kernel.aclose()

    with user_errors():
        return run_async(read()) or {}


def _default_agent(state: CliState, agent_id: str | None) -> str:
    if agent_id is not None:
        return agent_id
    with user_errors():
        return state.load().config.default_agent_id()


def _skill_json(snapshot: SkillSnapshot, entry: Any) -> dict[str, Any]:
    document = snapshot.documents.get(entry.name)
    why = snapshot.excluded.get(entry.name, "")
    data: dict[str, Any] = {
        "name": entry.name,
        "description": entry.description,
        "source": entry.source,
        "location": str(entry.location),
        "eligible": entry.eligible,
        "reasons": list(entry.reasons),
        "in_prompt": not why,
        "excluded_because": why or None,
        "emoji": entry.emoji,
        "homepage": entry.homepage,
        "user_invocable": entry.user_invocable,
        "disable_model_invocation": entry.disable_model_invocation,
        "always": entry.always,
        "primary_env": entry.primary_env,
    }
    if document is not None:
        requires = document.requires
        data["os"] = list(document.os)
        data["requires"] = {
            "bins": list(requires.bins),
            "any_bins": list(requires.any_bins),
            "env": list(requires.env),
            "config": list(requires.config),
        }
        data["install"] = [dict(spec) for spec in document.install]
    return data


def _console(soft_wrap: bool = False) -> Any:
    """Tables fit the terminal (160 columns when piped); ``soft_wrap`` lines are never broken."""
    return console(soft_wrap=soft_wrap, width=None if sys.stdout.isatty() else 160, highlight=False)


@skills.command("list")
@click.option("--agent", "agent_id", default=None, help="The agent whose skills to list (default: the default agent).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@config_option
@click.pass_obj
def list_skills(state: CliState, agent_id: str | None, as_json: bool) -> None:
    """Every skill the agent can see: where it comes from, whether it can run here and
    whether it reaches the prompt (and if not, why: not eligible, not allowed, only for
    users, or shadowed by a skill of the same name)."""
    agent = _default_agent(state, agent_id)
    snapshot = _snapshots(state, agent, with_prompt=True)[agent]
    if as_json:
        payload = {
            "agent": agent,
            "skills": [_skill_json(snapshot, entry) for entry in snapshot.entries],
            "shadowed": [
                {
                    "name": s.name,
                    "source": s.source,
                    "location": str(s.location),
                    "shadowed_by": {"source": s.winner_source, "location": str(s.winner_location)},
                }
                for s in snapshot.shadowed
            ],
            "problems": [{"path": str(p.path), "line": p.line, "message": p.message, "severity": p.severity} for p in snapshot.problems],
        }
        echo_json(payload)
        return
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"skills of agent {agent}", title_justify="left")
    for column in ("skill", "source", "eligible", "in prompt", "description"):
        table.add_column(column, overflow="fold")
    rows: list[tuple[str, tuple[str, ...]]] = []
    for entry in snapshot.entries:
        eligible = "[green]yes[/]" if entry.eligible else "[red]no[/]: " + escape("; ".join(entry.reasons))
        why = snapshot.excluded.get(entry.name, "")
        if not why:
            prompt = "[green]yes[/]"
        elif not entry.eligible:
            prompt = "[red]no[/]"
        else:
            prompt = "[yellow]no[/]: " + escape(why)
        description = entry.description if len(entry.description) <= 80 else entry.description[:79] + "…"
        rows.append((entry.name, (escape(entry.name), escape(entry.source), eligible, prompt, escape(description))))
    for s in snapshot.shadowed:
        prompt = f"[yellow]no[/]: shadowed by {escape(s.winner_source)} ({escape(str(s.winner_location))})"
        rows.append((s.name, (f"[dim]{escape(s.name)}[/]", escape(s.source), "-", prompt, "")))
    for _, cells in sorted(rows, key=lambda row: row[0]):
        table.add_row(*cells)
    console = _console()
    if rows:
        console.print(table)
    else:
        console.print("no skills found (see `clawbot skills check`)")
    in_prompt = len(snapshot.prompt)
    console.print(f"{len(snapshot.entries)} skills, {in_prompt} in the prompt of agent {escape(agent)}")
    errors = sum(1 for p in snapshot.problems if p.severity == "error")
    if errors:
        console.print(f"[red]{errors} skill file(s) could not be read[/]: run `clawbot skills check`")


def _unknown_names(state: CliState, snapshots: dict[str, SkillSnapshot]) -> list[str]:
    """Names in ``skills.allow`` / ``deny`` / an agent's allow that match no skill."""
    config = state.load().config
    known = {entry.name for snapshot in snapshots.values() for entry in snapshot.entries}
    lists = [("skills.allow", config.skills.allow), ("skills.deny", config.skills.deny)]
    for agent_id in snapshots:
        agent = config.agent(agent_id)
        if agent is not None and agent.skills is not None and agent.skills.allow is not None:
            lists.append((f"skills.allow of agent {agent_id!r}", agent.skills.allow))
    return [f"{where} names {name!r}, which matches no skill" for where, names in lists for name in names if name not in known]


@skills.command("check")
@click.option("--agent", "agent_id", default=None, help="Check this agent's skills only (default: every agent).")
@config_option
@click.pass_obj
def check_skills(state: CliState, agent_id: str | None) -> None:
    """Report malformed SKILL.md files (with their line), shadowed names and skills that
    cannot run here, with the reason. Exit code 1 when a skill file could not be read."""
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from rich.markup import escape

    snapshots = _snapshots(state, agent_id)
    problems = list(dict.fromkeys(p for snapshot in snapshots.values() for p in snapshot.problems))
    ineligible = {entry.location: entry for snapshot in snapshots.values() for entry in snapshot.entries if not entry.eligible}
    console = _console(soft_wrap=True)
    errors = [p for p in problems if p.severity == "error"]
    for p in errors:
        console.print(f"[red]error[/]: {escape(str(p))}\n  the skill is skipped until this is fixed")
    for p in problems:
        if p.severity != "error":
            console.print(f"[yellow]warning[/]: {escape(str(p))}")
    for text in _unknown_names(state, snapshots):
        console.print(f"[yellow]warning[/]: {escape(text)}")
    for entry in sorted(ineligible.values(), key=lambda e: e.name):
        console.print(f"[yellow]not eligible[/]: {escape(entry.name)} ({escape(entry.source)}): {escape('; '.join(entry.reasons))}")
    total = len({entry.location for snapshot in snapshots.values() for entry in snapshot.entries})
    agents = ", ".join(snapshots)
    if errors:
        console.print(f"{len(errors)} malformed skill file(s); {total} skills read (agents: {escape(agents)})")
        sys.exit(EXIT_MALFORMED)
    console.print(f"{total} skills read, {len(ineligible)} not eligible here (agents: {escape(agents)})")
