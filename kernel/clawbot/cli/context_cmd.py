"""``clawbot context``: what the system prompt of a session is made of, and its size."""

from __future__ import annotations

import sys

import click

from clawbot.cli.output import console, echo, echo_json
from clawbot.cli.state import CliState, config_option, run_async, user_errors


@click.command()
@click.option("--agent", "agent_id", default=None, help="Agent (default: the default agent).")
@click.option("--session", "session_key", default=None, help="Session key or name (default: the agent's main session).")
@click.option("--channel", default=None, help="Channel the turn would come from (changes the volatile part).")
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
@click.option("--show", is_flag=True, help="Also print the prompt itself.")
@config_option
@click.pass_obj
def context(state: CliState, agent_id: str | None, session_key: str | None, channel: str | None, as_json: bool, show: bool) -> None:
    """Size of the system prompt per section, injected file, skill and tool schema."""
    sys.exit(run_async(_context(state, agent_id, session_key, channel, as_json, show)) or 0)


async def _context(state: CliState, agent_id, session_key, channel, as_json: bool, show: bool) -> int:  # noqa: ANN001
    with user_errors():
        kernel = await state.kernel()
    try:
        # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
        from clawbot.agent.prompt_report import agent_prompt, prompt_report

        agent_id = agent_id or kernel.config.default_agent_id()
        if kernel.config.agent_ids() and agent_id not in kernel.config.agent_ids():
            echo(f"unknown agent {agent_id!r}; configured: {', '.join(kernel.config.agent_ids())}", err=True)
            return 2
        built = await agent_prompt(kernel, agent_id, session_key, channel)
        report = prompt_report(built)
        if as_json:
            echo_json(report)
        else:
            _print(report)
        if show:
            echo("\n" + built.system.stable + "\n\n<<< cache boundary >>>\n\n" + built.system.volatile)
        return 0
    finally:
        await kernel.aclose()


def _print(report: dict) -> None:  # noqa: ANN001
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from rich.markup import escape
    from rich.table import Table

    out = console()
    system = report["system_prompt"]
    out.print(
        f"[bold]{escape(report['session'])}[/bold] ({report['mode']} mode): {system['chars']:,} chars, ~{system['tokens_estimate']:,} tokens "
        f"({system['stable_chars']:,} before the cache boundary, {system['volatile_chars']:,} after)"
    )
    sections = Table("section", "chars", "part", title="Sections")
    for s in report["sections"]:
        sections.add_row(escape(s["key"]), f"{s['chars']:,}", "cached" if s["stable"] else "volatile")
    out.print(sections)
    if report["files"]:
        files = Table("file", "raw chars", "injected", "note", title="Workspace files")
        for f in report["files"]:
            note = "missing" if f["missing"] else ("truncated" if f["truncated"] else "")
            if f["not_loaded"]:
                note = escape(f"not loaded: {f['not_loaded']}")
            files.add_row(escape(f["name"]), f"{f['raw_chars']:,}", f"{f['injected_chars']:,}", note)
        out.print(files)
    if report["skills"]["entries"]:
        skills = Table("skill", "chars", title=f"Skills ({report['skills']['prompt_chars']:,} chars)")
        for s in report["skills"]["entries"]:
            skills.add_row(escape(s["name"]), f"{s['block_chars']:,}")
        out.print(skills)
    if report["skills"]["left_out"]:
        out.print(f"{len(report['skills']['left_out']):,} more skills left out of the prompt (skills.prompt_max_chars); `clawbot skills list` shows them.")
    tools = Table(
        "tool", "summary chars", "schema chars", "properties", title=f"Tools ({report['tools']['schema_chars']:,} chars of schemas sent with every request)"
    )
    for t in report["tools"]["entries"]:
        tools.add_row(escape(t["name"]), f"{t['summary_chars']:,}", f"{t['schema_chars']:,}", str(t["properties"]))
    out.print(tools)
