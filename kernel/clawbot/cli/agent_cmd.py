"""``clawbot agent -m``: one turn from the command line."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import attrs
import click

from clawbot.cli.logs import configure_logging
from clawbot.cli.output import echo, echo_json
from clawbot.cli.state import CliState, config_option, user_errors, verbose_option
from clawbot.log_marks import FILE_ONLY
from clawbot.sessions.keys import resolve_session_key


@click.command()
@click.option("-m", "--message", required=True, help="What to say to the agent; '-' reads it from stdin.")
@click.option("--agent", "agent_id", default=None, help="Agent id (default: the default agent).")
@click.option("--session", "session_key", default=None, help="Session key (default: agent:<agent>:main).")
@click.option("--json", "as_json", is_flag=True, help="Print the reply, model and usage as JSON.")
@click.option("--local", is_flag=True, help="Run the turn in this process even when a gateway (clawbot run) is running.")
@verbose_option
@config_option
@click.pass_obj
def agent(state: CliState, message: str, agent_id: str | None, session_key: str | None, as_json: bool, local: bool, verbose: bool) -> None:
    """Send MESSAGE to the agent, print its reply.

    A session command (/status, /model [ref], /new [text], /reset, /whoami, /help,
    /commands, /context, /compact [instructions], and the plugins' chat commands) is
    answered here, as a chat answers it, without asking the model; you are the owner.

    A command the agent wants to run that needs approval is asked about here when stdin is a
    terminal (allow once, allow always or deny); otherwise it is denied, with a note. Ctrl-C
    stops the turn (exit status 130; the transcript records it as aborted).

    When a gateway (`clawbot run`) is running on this state directory, the turn runs there,
    through its control API, and is printed the same way (an approval is asked about here on
    a terminal; otherwise the note says how to answer it). --local runs it in this process.
    """
    if message == "-":
        if sys.stdin.isatty():
            echo("Type the message; end it with Ctrl-D on a line of its own.", err=True)
        message = sys.stdin.read().rstrip("\n")
        if not message.strip():
            echo("error: -m - reads the message from stdin, and stdin was empty", err=True)
            sys.exit(2)
    if not local:
        from clawbot.control.client import find_gateway

        client = find_gateway(state.paths().root)
        if client is not None:  # the running gateway answers: nothing to boot here
            from clawbot.cli.agent_remote import run_through_gateway

            through = run_through_gateway(client, message, agent_id, session_key, as_json)
            if through is not None:
                sys.exit(through)
        else:
            _refuse_beside_a_gateway_without_api(state.paths().root)
    with user_errors():
        loaded = state.load()

    logs = loaded.config.logging
    configure_logging(logs.level, state.env, state_root=state.paths().root, verbose=verbose, max_bytes=logs.file_max_bytes, backups=logs.file_backups)
    code = _run_until_ctrl_c(_turn(state, message, agent_id, session_key, as_json))
    if code is None:
        echo("interrupted; the turn is recorded as aborted", err=True)
        sys.exit(130)
    sys.exit(code or 0)


def _refuse_beside_a_gateway_without_api(root: Path) -> None:
    """A gateway runs on this state dir but has no control API to take the turn: a second
    agent in this process would answer from the same sessions behind its back."""
    from clawbot.control.endpoint import live_endpoint
    from clawbot.gateway.instance import gateway_holder

    pid = gateway_holder(root)
    if pid is None or live_endpoint(root) is not None:
        return
    echo(
        f"A gateway runs on {root} (pid {pid}) but has no control API (clawbot-control is blocked or not installed,"
        " or gateway.control_api = false), so this turn cannot go through it; running a second agent here would"
        " share its sessions. Unblock clawbot-control and restart the gateway, or pass --local to run the turn in this process anyway.",
        err=True,
    )
    sys.exit(2)


#: after Ctrl-C, how long the stopped turn may take to record itself and close before the
#: process exits anyway: Ctrl-C must end a one-shot run even when a provider or plugin hangs
STOP_GRACE_S = 5.0


def _run_until_ctrl_c(coro: Coroutine[Any, Any, int]) -> int | None:
    """Run ``coro``; the first Ctrl-C cancels it (the turn records itself as aborted) and
    returns ``None``, a second one, or a cancelled run that has not ended after
    :data:`STOP_GRACE_S`, exits with 130 at once."""

    def exit_now() -> None:
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()
        os._exit(130)

    # Armed by the first Ctrl-C and cancelled only once the loop has closed: closing waits for
    # worker threads (a tool's blocking handler), which must not keep Ctrl-C from ending the run.
    watchdog = threading.Timer(STOP_GRACE_S, exit_now)
    watchdog.daemon = True
    previous = signal.getsignal(signal.SIGINT)
    try:
        with asyncio.Runner() as runner:
            loop = runner.get_loop()
            task = loop.create_task(coro)

            def on_ctrl_c(signum: int, frame: object) -> None:
                if watchdog.is_alive():
                    exit_now()
                watchdog.start()
                loop.call_soon_threadsafe(task.cancel)

            signal.signal(signal.SIGINT, on_ctrl_c)
            try:
                return runner.run(_awaited(task))
            except asyncio.CancelledError:
                return None
    finally:
        watchdog.cancel()
        signal.signal(signal.SIGINT, previous)


async def _awaited(task: Any) -> int:
    return await task


async def _turn(state: CliState, text: str, agent_id: str | None, session_key: str | None, as_json: bool) -> int:
    try:
        with user_errors():
            kernel = await state.kernel()
    except SystemExit as exit_:  # the error is told already; raised inside a task, asyncio would log it again
        return exit_.code if isinstance(exit_.code, int) else 1
    try:
        return await _run_turn(kernel, text, agent_id, session_key, as_json)
    finally:
        await kernel.aclose()


def _one_line(error: BaseException) -> str:
    """An unexpected error as one line: its type and the first line of its message."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


async def _run_turn(kernel, text: str, agent_id: str | None, session_key: str | None, as_json: bool) -> int:  # noqa: ANN001
    # deferred: `clawbot agent --help`, and a turn sent through a running gateway, load neither the kernel nor the agent
    from clawbot.agent.runtime import AgentRuntime

    agent_id = agent_id or kernel.config.default_agent_id()
    if agent_id not in kernel.config.agent_ids():
        echo(f"unknown agent {agent_id!r}; configured: {', '.join(kernel.config.agent_ids())}", err=True)
        return 2
    session_key = resolve_session_key(session_key, agent_id)  # a bare name belongs to the chosen agent
    from clawbot.cli.oneshot import OneShotPort, local_user

    port = OneShotPort()
    runtime = AgentRuntime(kernel, port=port)
    runtime.services.local_origin = local_user()
    try:
        from clawbot.gateway.command_dispatch import command_of

        command = command_of(kernel, text)
        if command is not None:  # answered here as a chat answers it, never by the model
            follow_up = await _answer_command(kernel, runtime, command, text, agent_id, session_key, as_json)
            if follow_up is None:
                return 0
            text = follow_up
        return await _model_turn(kernel, runtime, port, text, agent_id, session_key, as_json)
    finally:
        await runtime.aclose()


async def _answer_command(kernel, runtime, command, text: str, agent_id: str, session_key: str, as_json: bool) -> str | None:  # noqa: ANN001
    """Answer a session command; returns what then goes to the model (``/new <text>``), if anything.
    The person at the terminal is the owner: they could edit the configuration themselves."""
    # deferred: `clawbot agent --help`, and a turn sent through a running gateway, load neither the kernel nor the agent
    from clawbot.agent.notices import outgoing_text
    from clawbot.cli.oneshot import local_user
    from clawbot.gateway.command_dispatch import answer_command

    reply = await answer_command(kernel, runtime, attrs.evolve(local_user(), text=text), session_key, command, None)
    if as_json:
        echo_json({"command": f"/{command.name}", "reply": reply.text or "", "agent": agent_id, "session": session_key}, ensure_ascii=True)
    elif reply.text:
        echo(outgoing_text(reply.text, notice=reply.notice))
    if reply.then is not None:
        reply.then()
    return reply.follow_up


async def _model_turn(kernel, runtime, port, text: str, agent_id: str, session_key: str, as_json: bool) -> int:  # noqa: ANN001
    # deferred: `clawbot agent --help`, and a turn sent through a running gateway, load neither the kernel nor the agent
    from clawbot.agent.models import ModelError
    from clawbot.agent.startup_line import startup_line
    from clawbot.cli.oneshot import CHANNEL, local_user, settle_approvals

    try:
        conversation = await runtime.conversation(agent_id)
    except ModelError as exc:
        echo(str(exc), err=True)
        return 1

    info = kernel.sessions.get(session_key)
    try:  # the model this turn uses: the session's /model choice wins over the configured one
        model, chosen = conversation.models_for(info)[0], info is not None and bool(info.model_override)
    except ModelError:
        model, chosen = conversation.model, False  # the turn itself says why the choice is unusable
    echo(startup_line(kernel, agent_id, model, chosen=chosen), err=True)  # stderr: the reply alone stays on stdout
    interactive = sys.stdin.isatty()
    from clawbot.gateway.turn_setup import setup_turn

    # the message's leading directives (/think high ...) apply to this turn, as in a chat
    turn = setup_turn(kernel, port, attrs.evolve(runtime.services.local_origin or local_user(), text=text), session_key)
    try:
        result = await conversation.send(session_key, turn.text, channel=CHANNEL, options=turn.options)
        result = attrs.evolve(result, text=await turn.finish(result) or "")
        _print_result(kernel, result, agent_id, session_key, as_json)
        # Approved commands and plugins' background work (sub-agents) report back as system
        # events, each answered in a follow-up turn: the run waits for them before it exits.
        while running := await settle_approvals(runtime, session_key, interactive=interactive) + runtime.services.take_expected_events(session_key):
            for event in await port.next_events(running):
                origin = attrs.evolve(runtime.services.local_origin, text=event, system_event=True)
                result = await conversation.send(session_key, event, channel=CHANNEL, origin=origin)
                _print_result(kernel, result, agent_id, session_key, as_json)
    except Exception as exc:  # the provider's short message; the traceback goes to the log file
        logging.getLogger(__name__).error("the turn on %s failed", session_key, exc_info=True, extra=FILE_ONLY)
        echo(f"error: {getattr(exc, 'user_message', None) or _one_line(exc)}", err=True)
        return 1
    return 0


def _print_result(kernel, result, agent_id: str, session_key: str, as_json: bool) -> None:  # noqa: ANN001

    # deferred: `clawbot agent --help`, and a turn sent through a running gateway, load neither the kernel nor the agent
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
            }
            if info
            else None,
        }
        echo_json(payload, ensure_ascii=True)
    else:
        # As a channel gets it: the model's reply cannot pass for one of clawbot's notices.
        echo(outgoing_text(result.text, notice=False))
