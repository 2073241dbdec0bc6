"""``clawbot agent -m``: one turn from the command line."""

from __future__ import annotations

import sys

import click

from clawbot.cli.output import echo, echo_json
from clawbot.cli.state import CliState, config_option, run_async, user_errors, verbose_option


@click.command()
@click.option("-m", "--message", required=True, help="What to say to the agent.")
@click.option("--agent", "agent_id", default=None, help="Agent id (default: the default agent).")
@click.option("--session", "session_key", default=None, help="Session key (default: agent:<agent>:main).")
@click.option("--json", "as_json", is_flag=True, help="Print the reply, model and usage as JSON.")
@verbose_option
@config_option
@click.pass_obj
def agent(state: CliState, message: str, agent_id: str | None, session_key: str | None, as_json: bool, verbose: bool) -> None:
    """Send MESSAGE to the agent, print its reply."""
    with user_errors():
        loaded = state.load()
    from clawbot.cli.logs import configure_logging

    configure_logging(loaded.config.logging.level, state.env, state_root=state.paths().root, verbose=verbose)
    sys.exit(run_async(_turn(state, message, agent_id, session_key, as_json)) or 0)


async def _turn(state: CliState, text: str, agent_id: str | None, session_key: str | None, as_json: bool) -> int:
    with user_errors():
        kernel = await state.kernel()
    try:
        return await _run_turn(kernel, text, agent_id, session_key, as_json)
    finally:
        await kernel.aclose()


def _one_line(error: BaseException) -> str:
    """An unexpected error as one line: its type and the first line of its message."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


async def _run_turn(kernel, text: str, agent_id: str | None, session_key: str | None, as_json: bool) -> int:  # noqa: ANN001
    import attrs

    from clawbot.agent.conversation import Conversation
    from clawbot.agent.models import ModelError, choose_chain
    from clawbot.agent.runtime import AgentRuntime
    from clawbot.sessions.keys import main_key

    agent_id = agent_id or kernel.config.default_agent_id()
    if agent_id not in kernel.config.agent_ids():
        echo(f"unknown agent {agent_id!r}; configured: {', '.join(kernel.config.agent_ids())}", err=True)
        return 2
    # A bare --session name belongs to the chosen agent: agent:<agent>:<name>.
    if session_key is None:
        session_key = main_key(agent_id)
    elif not session_key.startswith("agent:"):
        session_key = f"agent:{agent_id}:{session_key}"
    try:
        chain = await choose_chain(kernel, agent_id)
        model = chain[0]
    except ModelError as exc:
        echo(str(exc), err=True)
        return 1
    from clawbot.cli.startup import startup_line

    echo(startup_line(kernel, agent_id, model), err=True)  # stderr: the reply alone stays on stdout
    runtime = AgentRuntime(kernel)
    conversation = runtime.adopt(Conversation(kernel, model, agent_id, fallbacks=chain[1:]))
    try:
        result = await conversation.send(session_key, text, channel="cli")
    except Exception as exc:  # the provider's short message; the traceback goes to the log file
        import logging

        from clawbot.cli.logs import FILE_ONLY

        logging.getLogger(__name__).error("the turn on %s failed", session_key, exc_info=True, extra=FILE_ONLY)
        echo(f"error: {getattr(exc, 'user_message', None) or _one_line(exc)}", err=True)
        return 1
    finally:
        await runtime.aclose()
    from clawbot.agent.notices import outgoing_text

    for notice in result.notices:  # clawbot's own, kept apart from the reply on stdout
        echo(outgoing_text(notice, notice=True), err=True)
    if as_json:
        key = session_key
        info = kernel.sessions.get(key)
        payload = {
            "reply": result.text,
            "notices": list(result.notices),
            "model": result.model,
            "agent": agent_id,
            "session": key,
            "iterations": result.iterations,
            "tool_calls": result.tool_calls,
            "usage": {**attrs.asdict(result.usage), "cache_hit_share": round(result.usage.cache_hit_share, 4)},
            "cost_usd": result.cost_usd,
            "session_totals": {
                "turns": info.turns,
                "usage": attrs.asdict(info.usage),
                "cost_usd": info.cost_usd,
            } if info else None,
        }
        echo_json(payload, ensure_ascii=True)
    else:
        # As a channel gets it: the model's reply cannot pass for one of clawbot's notices.
        echo(outgoing_text(result.text, notice=False))
    return 0
