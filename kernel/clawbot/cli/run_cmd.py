"""``clawbot run``: start the gateway with the enabled channels."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys

import click

from clawbot.cli.output import echo
from clawbot.cli.state import CliState, config_option, run_async, user_errors, verbose_option


@click.command()
@click.option("--agent", "agent_id", default=None, help="Default agent: answers what no [[bindings]] entry routes elsewhere (default: agents.list's default).")
@verbose_option
@config_option
@click.pass_obj
def run(state: CliState, agent_id: str | None, verbose: bool) -> None:
    """Start the gateway: every enabled channel, answered by your agent. Ctrl-C stops it."""
    with user_errors():
        loaded = state.load()
    from clawbot.cli.logs import configure_logging

    configure_logging(loaded.config.logging.level, state.env, state_root=state.paths().root, verbose=verbose)
    sys.exit(run_async(_run(state, agent_id)) or 0)


async def _run(state: CliState, agent_id: str | None) -> int:
    with user_errors():
        kernel = await state.kernel()
    try:
        return await _serve(kernel, agent_id)
    finally:
        await kernel.aclose()


async def _serve(kernel, agent_id: str | None) -> int:  # noqa: ANN001 - Kernel, imported lazily
    from clawbot.agent.models import ModelError
    from clawbot.agent.runtime import AgentRuntime
    from clawbot.gateway.runner import Gateway, enabled_channels

    agent_id = agent_id or kernel.config.default_agent_id()
    runtime = AgentRuntime(kernel)
    try:
        model = (await runtime.conversation(agent_id)).model
    except ModelError as exc:
        echo(str(exc), err=True)
        return 1
    channels = enabled_channels(kernel)
    if not channels:
        echo("No channel is enabled: enable one in clawbot.toml, e.g. [channels.terminal] enabled = true", err=True)
        return 1
    names = ", ".join(c.name for c in channels)
    from clawbot.cli.startup import startup_line

    echo(f"{startup_line(kernel, agent_id, model)}; channels: {names}. Ctrl-D or Ctrl-C to quit.", err=True)
    gateway = Gateway(kernel, runtime.respond, agent_id, runtime=runtime)
    try:
        with _ctrl_c_to(gateway):
            await gateway.run(channels)
    finally:
        await runtime.aclose()
    return 0


@contextlib.contextmanager
def _ctrl_c_to(gateway):  # noqa: ANN001, ANN202 - Gateway, imported lazily
    """Ctrl-C goes to the channels (the terminal stops its running turn) instead of ending the
    process; when no channel takes it, the gateway stops and the process exits 0. A second
    Ctrl-C while it stops interrupts at once, as usual."""
    loop = asyncio.get_running_loop()

    def on_ctrl_c() -> None:
        if not gateway.interrupt():
            loop.remove_signal_handler(signal.SIGINT)

    try:
        loop.add_signal_handler(signal.SIGINT, on_ctrl_c)
    except (NotImplementedError, RuntimeError, ValueError):  # no signal handlers here (Windows, a thread)
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
