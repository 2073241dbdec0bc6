"""``clawbot sessions list|show KEY|path KEY|reset KEY``.

KEY is written as for ``clawbot agent --session``: a full key, or a name of the agent's own
(``main``, ``work``; ``--agent`` says whose, the default agent otherwise).

What a transcript holds came from the model, tools and chat networks: it is printed with
control characters shown as ``\\uXXXX`` (``--json`` escapes everything outside ASCII), so a
stored reply cannot draw on the terminal of whoever reads it.
"""

from __future__ import annotations

import json
import sys

import click

from clawbot.agent.notices import quoted_line
from clawbot.cli.output import echo, echo_json
from clawbot.cli.state import CliState, config_option, run_async, user_errors
from clawbot.paths import StatePaths
from clawbot.sessions.keys import resolve_session_key
from clawbot.types import Role


def _store(state: CliState):  # noqa: ANN202 - SessionStore, imported lazily
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from clawbot.sessions.store import SessionStore

    with user_errors():
        state.load()
    return SessionStore(StatePaths.resolve(state.env).sessions)


def _key(state: CliState, key: str, agent_id: str | None) -> str:
    with user_errors():
        config = state.load().config
    return resolve_session_key(key, agent_id or config.default_agent_id())


agent_option = click.option("--agent", "agent_id", default=None, help="Agent a short KEY belongs to (default: the default agent).")


@click.group()
def sessions() -> None:
    """List sessions, show or reset one, or print its file."""


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
        echo(
            f"{i.key}  {i.updated_at}  turns={i.turns}  in={u.prompt_tokens} out={u.output_tokens} "
            f"cache={u.cache_hit_share:.0%}  cost={cost}  model={i.model or '-'}"
        )


def _session_path(state: CliState, key: str, agent_id: str | None):  # noqa: ANN202
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from clawbot.sessions.store import agent_of

    key = _key(state, key, agent_id)
    store = _store(state)
    info = store.get(key)
    if info is None:
        echo(f"no session with key {key!r} (see `clawbot sessions list`)", err=True)
        sys.exit(1)
    return store, store.path_of(info, agent_of(key))


@sessions.command("path")
@click.argument("key")
@agent_option
@config_option
@click.pass_obj
def session_path(state: CliState, key: str, agent_id: str | None) -> None:
    """Print the transcript file of session KEY."""
    echo(str(_session_path(state, key, agent_id)[1]))


@sessions.command("show")
@click.argument("key")
@agent_option
@click.option("--json", "as_json", is_flag=True, help="Print the messages as JSON.")
@click.option("--raw", is_flag=True, help="Show user messages as the model got them, metadata blocks included.")
@config_option
@click.pass_obj
def session_show(state: CliState, key: str, agent_id: str | None, as_json: bool, raw: bool) -> None:
    """Print the conversation of session KEY (since its last compaction): what the user
    wrote, without the metadata clawbot sends the model with it (--raw shows it)."""
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from clawbot.agent.user_turns import full_form, shown
    from clawbot.sessions.transcript import load_transcript

    store, path = _session_path(state, key, agent_id)
    loaded = load_transcript(path, store.converter)
    for warning in loaded.warnings:
        echo(f"warning: {warning}", err=True)
    messages = loaded.messages()
    if as_json:
        echo_json([store.converter.unstructure(m) for m in messages], ensure_ascii=True)
        return
    for m in messages:
        calls = "".join(f"\n  -> {c.name}({json.dumps(c.arguments)})" for c in m.tool_calls)
        who, text = shown(m) if m.role == Role.USER and not raw else (None, full_form(m).text)
        echo(f"[{m.role.value}{f': {who}' if who else ''}] {text}{calls}")


@sessions.command("reset")
@click.argument("key")
@agent_option
@config_option
@click.pass_obj
def session_reset(state: CliState, key: str, agent_id: str | None) -> None:
    """Start session KEY afresh, as /new does in a chat: its next message begins a new
    conversation, the old transcript stays on disk. Waits for a turn running in it."""
    sys.exit(run_async(_reset(state, _key(state, key, agent_id))) or 0)


async def _reset(state: CliState, key: str) -> int:
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from clawbot.agent.session_control import reset_session
    from clawbot.sessions.store import agent_of

    with user_errors():
        kernel = await state.kernel()
    try:
        if kernel.sessions.get(key) is None:
            echo(f"no session with key {key!r} (see `clawbot sessions list`)", err=True)
            return 1
        old, new = await reset_session(kernel, key, "clawbot sessions reset")
        kept = kernel.sessions.path_of(old, agent_of(key)) if old is not None else None

        chosen = f"; it still uses {quoted_line(new.model_override)}, chosen with /model" if new.model_override else ""
        echo(f"{key}: new session {new.session_id}" + (f"; the previous one is kept in {kept}" if kept else "") + chosen)
        return 0
    finally:
        await kernel.aclose()
