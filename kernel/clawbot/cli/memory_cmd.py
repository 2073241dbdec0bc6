"""``clawbot memory status|index|search``: the agents' long-term memory index, from the shell.

Whatever memory provider is active does the work; these commands only ask it. ``status``
and ``index`` cover every configured agent unless ``--agent`` names one; ``search`` asks the
default agent's memory. ``search --stdin`` reads one query per line and answers each on one
line, with the kernel, the index and the embedder loaded once (for scripts and evaluations).

Snippets are the user's files, which the model writes too: they are printed visible (no
escape sequence reaches the terminal), and ``--json`` escapes what is hidden.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import TYPE_CHECKING, Any

import attrs
import click

from clawbot.cli.output import console, echo, echo_json
from clawbot.cli.state import CliState, config_option, run_async, user_errors

if TYPE_CHECKING:  # deferred: annotations only; `--help` answers without loading the kernel
    from clawbot.kernel import Kernel
    from clawbot.types import MemoryHit, MemoryProvider, MemorySearch, MemoryStatus

log = logging.getLogger(__name__)

EXIT_FAILED = 1
EXIT_USAGE = 2


class _Stop(Exception):
    """End the command with ``code`` after the message was printed."""

    def __init__(self, code: int) -> None:
        self.code = code


@click.group()
def memory() -> None:
    """Show, rebuild or search the agents' long-term memory index (MEMORY.md, memory/*.md)."""


def _agent_option(help_text: str) -> Any:
    return click.option("--agent", "agent_id", default=None, help=help_text)


async def _with_provider(state: CliState, agent_id: str | None, every_agent: bool, work: Any) -> int:
    """Boot the kernel, find the provider and the agents, run ``work(provider, agents)``,
    close the kernel; a missing provider, an unknown agent or a provider failure is one line
    on stderr and an exit code, never a traceback."""
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from clawbot.agent.memory import NO_PROVIDER, memory_agents, unknown_agent

    with user_errors():
        kernel = await state.kernel()
    try:
        provider = kernel.memory_provider
        if provider is None:
            echo(NO_PROVIDER, err=True)
            return EXIT_FAILED
        config = kernel.config
        if agent_id is not None and (problem := unknown_agent(config, agent_id)):
            echo(problem, err=True)
            return EXIT_USAGE
        agents = [agent_id] if agent_id else (memory_agents(config) if every_agent else [config.default_agent_id()])
        try:
            return await work(kernel, provider, agents) or 0
        except _Stop as stop:
            return stop.code
    finally:
        await kernel.aclose()


def _failed(what: str, exc: Exception) -> _Stop:
    log.debug("%s failed", what, exc_info=exc)  # the traceback goes to the log file only
    echo(f"{what} failed: {type(exc).__name__}: {exc}", err=True)
    return _Stop(EXIT_FAILED)


# --------------------------------------------------------------------------- status


@memory.command("status")
@_agent_option("Only this agent (default: every configured agent).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one object per agent.")
@config_option
@click.pass_obj
def status(state: CliState, agent_id: str | None, as_json: bool) -> None:
    """How each agent's memory index stands: search mode and why, files, chunks, index file,
    embedder, sqlite driver, last sync and last error."""

    async def work(kernel: Kernel, provider: MemoryProvider, agents: list[str]) -> int:
        found = []
        for agent in agents:
            try:
                found.append(await provider.status(agent_id=agent))
            except Exception as exc:
                raise _failed(f"memory status of agent {agent!r}", exc) from None
        if as_json:
            # a backend's ``details`` may hold any value: shown as its text rather than failing
            echo_json(json.loads(json.dumps([attrs.asdict(s, recurse=True) for s in found], default=str)))
        else:
            _print_statuses(found)
        return 0

    sys.exit(run_async(_with_provider(state, agent_id, True, work)) or 0)


def _detail_text(value: object) -> str:
    """A backend's figure as a reader wants it: a list one item a line (a pair as "a: b"),
    an empty one as "none"."""
    if isinstance(value, list | tuple):
        if not value:
            return "none"
        return "\n".join(": ".join(map(str, item)) if isinstance(item, list | tuple) else str(item) for item in value)
    return str(value)


def _print_statuses(statuses: list[MemoryStatus]) -> None:
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from rich.markup import escape
    from rich.table import Table

    from clawbot.agent.memory import mode_text

    out = console(highlight=False)
    for number, s in enumerate(statuses):
        out.print(("\n" if number else "") + f"[bold]{escape(f'agent {s.agent_id}: {mode_text(s)}')}[/bold] {escape(f'(provider {s.provider})')}")
        table = Table(show_header=False, box=None, padding=(0, 2, 0, 2))
        table.add_column(style="bold")
        table.add_column()
        rows = [
            ("why", "\n".join(s.reasons)),
            ("files", f"{s.files:,}"),
            ("chunks", f"{s.chunks:,}"),
            ("index", f"{s.index_path} ({s.index_bytes:,} bytes)" if s.index_path else ""),
            ("embedder", s.embedder or ""),
            ("vectors", s.vector_backend or ""),
            ("keywords", s.keyword_backend or ""),
            ("driver", s.driver or ""),
            ("last sync", (s.last_sync or "never") + ("; files changed since" if s.dirty else "")),
            ("watching", "yes" if s.watching else "no"),
            ("last error", s.last_error or ""),
            *((str(key).replace("_", " "), _detail_text(value)) for key, value in s.details.items()),
        ]
        for label, value in rows:
            if value:
                table.add_row(escape(label), escape(value))
        out.print(table)


# --------------------------------------------------------------------------- index


@memory.command("index")
@_agent_option("Only this agent (default: every configured agent).")
@click.option("--force", is_flag=True, help="Re-chunk and re-index every file, changed or not.")
@config_option
@click.pass_obj
def index(state: CliState, agent_id: str | None, force: bool) -> None:
    """Bring the memory index up to date with the files (only what changed, unless --force)."""

    async def work(kernel: Kernel, provider: MemoryProvider, agents: list[str]) -> int:
        # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        out = console(stderr=True, highlight=False)
        for agent in agents:
            with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=out, transient=True) as bar:
                task = bar.add_task(f"indexing {agent}", total=None)

                def progress(step: Any, bar: Any = bar, task: Any = task, agent: str = agent) -> None:
                    bar.update(task, total=step.total, completed=step.done, description=f"{agent}: {step.path}"[:60])

                try:
                    report = await provider.sync(agent_id=agent, force=force, progress=progress)
                except Exception as exc:
                    raise _failed(f"indexing the memory of agent {agent!r}", exc) from None
            for path, why in report.skipped:
                echo(f"warning: {agent}: skipped {path}: {why}", err=True)
            echo(
                f"{agent}: {report.files_indexed} files indexed, {report.files_unchanged} unchanged, {report.files_removed} removed; "
                f"{report.chunks} chunks ({report.embedded} embedded, {report.cache_hits} from the cache) in {report.seconds:.1f} s"
            )
        return 0

    sys.exit(run_async(_with_provider(state, agent_id, True, work)) or 0)


# --------------------------------------------------------------------------- search


def hit_json(hit: MemoryHit) -> dict[str, Any]:
    return {"path": hit.path, "start_line": hit.start_line, "end_line": hit.end_line, "score": round(hit.score, 6), "snippet": hit.snippet}


@memory.command("search")
@click.argument("query", required=False)
@_agent_option("Whose memory (default: the default agent).")
@click.option("--max-results", type=click.IntRange(1, 1000), default=None, help="Most hits (default: the provider's setting).")
@click.option("--json", "as_json", is_flag=True, help='Print a JSON list of hits {"path", "start_line", "end_line", "score", "snippet"}.')
@click.option("--stdin", "from_stdin", is_flag=True, help="Read one query per line from stdin; answer each on its own line.")
@config_option
@click.pass_obj
def search(state: CliState, query: str | None, agent_id: str | None, max_results: int | None, as_json: bool, from_stdin: bool) -> None:
    """Search the memory for QUERY, best hits first (paths relative to the workspace, lines
    1-based and inclusive)."""
    if from_stdin == (query is not None):
        raise click.UsageError("give either QUERY or --stdin (one query per line)")

    async def work(kernel: Kernel, provider: MemoryProvider, agents: list[str]) -> int:
        (agent,) = agents
        queries = (line.rstrip("\r\n") for line in sys.stdin) if from_stdin else iter([query or ""])
        for text in queries:
            found = await _search(provider, agent, text, max_results) if text.strip() else None
            if found is not None and found.notice:
                echo(f"note: {found.notice}", err=True)
            hits = list(found.hits) if found is not None else []
            if as_json:
                echo_json([hit_json(h) for h in hits], indent=None if from_stdin else 2)
            else:
                _print_hits(text, hits, found, heading=from_stdin)
        return 0

    sys.exit(run_async(_with_provider(state, agent_id, False, work)) or 0)


async def _search(provider: MemoryProvider, agent: str, text: str, max_results: int | None) -> MemorySearch:
    try:
        return await provider.search(text.strip(), agent_id=agent, max_results=max_results)
    except Exception as exc:
        raise _failed(f"memory search of agent {agent!r}", exc) from None


def _print_hits(query: str, hits: list[MemoryHit], found: MemorySearch | None, *, heading: bool) -> None:
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from rich.markup import escape
    from rich.table import Table

    out = console(highlight=False)
    mode = f" ({found.mode} search)" if found is not None else ""
    if not hits:
        out.print(escape(f"no hits for {query!r}{mode}"))
        return
    table = Table("score", "where", "snippet", title=escape(f"{query}{mode}") if heading else None, title_justify="left")
    for hit in hits:
        snippet = " ".join(hit.snippet.split())
        snippet = snippet if len(snippet) <= 160 else snippet[:159] + "\u2026"
        table.add_row(f"{hit.score:.3f}", escape(f"{hit.path}:{hit.start_line}-{hit.end_line}"), escape(snippet))
    out.print(table)
