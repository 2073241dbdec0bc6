"""``clawbot sessions list|show KEY|path KEY``.

What a transcript holds came from the model, tools and chat networks: it is printed with
control characters shown as ``\\uXXXX`` (``--json`` escapes everything outside ASCII), so a
stored reply cannot draw on the terminal of whoever reads it.
"""

from __future__ import annotations

import json
import sys

import click

from clawbot.cli.output import echo, echo_json
from clawbot.cli.state import CliState, config_option, user_errors


def _store(state: CliState):  # noqa: ANN202 - SessionStore, imported lazily
    from clawbot.paths import StatePaths
    from clawbot.sessions.store import SessionStore

    with user_errors():
        state.load()
    return SessionStore(StatePaths.resolve(state.env).sessions)


@click.group()
def sessions() -> None:
    """List sessions, show a transcript, or print its file."""


@sessions.command("list")
@click.option("--agent", "agent_id", default=None, help="Only this agent's sessions.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@config_option
@click.pass_obj
def list_sessions(state: CliState, agent_id: str | None, as_json: bool) -> None:
    """Every session, most recently updated first, with turns, token totals and cost."""
    store = _store(state)
    infos = store.list(agent_id)
    if as_json:
        echo_json([store.converter.unstructure(i) for i in infos], ensure_ascii=True)
        return
    if not infos:
        echo("no sessions yet")
        return
    for i in infos:
        u = i.usage
        cost = "-" if i.cost_usd is None else f"${i.cost_usd:.4f}"
        echo(f"{i.key}  {i.updated_at}  turns={i.turns}  in={u.prompt_tokens} out={u.output_tokens} "
             f"cache={u.cache_hit_share:.0%}  cost={cost}  model={i.model or '-'}")


def _session_path(state: CliState, key: str):  # noqa: ANN202
    from clawbot.sessions.store import agent_of

    store = _store(state)
    info = store.get(key)
    if info is None:
        echo(f"no session with key {key!r} (see `clawbot sessions list`)", err=True)
        sys.exit(1)
    return store, store.path_of(info, agent_of(key))


@sessions.command("path")
@click.argument("key")
@config_option
@click.pass_obj
def session_path(state: CliState, key: str) -> None:
    """Print the transcript file of session KEY."""
    echo(str(_session_path(state, key)[1]))


@sessions.command("show")
@click.argument("key")
@click.option("--json", "as_json", is_flag=True, help="Print the messages as JSON.")
@config_option
@click.pass_obj
def session_show(state: CliState, key: str, as_json: bool) -> None:
    """Print the conversation of session KEY (since its last compaction)."""
    from clawbot.sessions.transcript import load_transcript

    store, path = _session_path(state, key)
    loaded = load_transcript(path, store.converter)
    for warning in loaded.warnings:
        echo(f"warning: {warning}", err=True)
    messages = loaded.messages()
    if as_json:
        echo_json([store.converter.unstructure(m) for m in messages], ensure_ascii=True)
        return
    for m in messages:
        calls = "".join(f"\n  -> {c.name}({json.dumps(c.arguments)})" for c in m.tool_calls)
        echo(f"[{m.role.value}] {m.text}{calls}")
