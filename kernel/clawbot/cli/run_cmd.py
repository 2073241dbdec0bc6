"""``clawbot run``: start the gateway with the enabled channels."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys

import click

from clawbot.agent.startup_line import startup_line
from clawbot.cli.logs import configure_logging
from clawbot.cli.output import echo
from clawbot.cli.state import CliState, config_option, run_async, user_errors, verbose_option
from clawbot.doctor_unserved import CONTROL_API_OFF, control_api_unserved
from clawbot.gateway.instance import GatewayRunning, only_gateway
from clawbot.log_marks import FILE_ONLY

logger = logging.getLogger(__name__)


@click.command()
@click.option("--agent", "agent_id", default=None, help="Default agent: answers what no [[bindings]] entry routes elsewhere (default: agents.list's default).")
@verbose_option
@config_option
@click.pass_obj
def run(state: CliState, agent_id: str | None, verbose: bool) -> None:
    """Start the gateway: every enabled channel, answered by your agent.

    Ctrl-C (or Ctrl-D at the terminal) stops it. SIGTERM stops it gracefully: running turns
    get gateway.shutdown_grace_s to finish, then are cancelled and recorded as interrupted
    (a second SIGTERM ends it at once). Without a terminal (stdin closed or /dev/null, as
    under a service manager) the terminal chat does not run and the other channels serve."""
    with user_errors():
        loaded = state.load()

    logs = loaded.config.logging
    configure_logging(
        logs.level,
        state.env,
        state_root=state.paths().root,
        verbose=verbose,
        log_name="gateway",
        max_bytes=logs.file_max_bytes,
        backups=logs.file_backups,
        chat_terminal=True,  # the terminal chat (and a service's journal) gets replies; gateway.log the log lines
    )
    sys.exit(run_async(_run(state, agent_id)) or 0)


async def _run(state: CliState, agent_id: str | None) -> int:
    try:
        with only_gateway(state.paths().root):
            with user_errors():
                kernel = await state.kernel()
            try:
                return await _serve(kernel, agent_id)
            finally:
                await kernel.aclose()
    except GatewayRunning as exc:
        echo(str(exc), err=True)
        return 2


async def _serve(kernel, agent_id: str | None) -> int:  # noqa: ANN001 - Kernel, imported lazily
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
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
    gateway = Gateway(kernel, runtime.respond, agent_id, runtime=runtime)
    channels = enabled_channels(kernel)  # the control API among them: the clawbot-control plugin's channel `api`
    if not channels:
        echo("No channel is enabled: enable one in clawbot.toml, e.g. [channels.terminal] enabled = true", err=True)
        return 1
    from clawbot.gateway.supervisor import unavailable

    runnable = [c for c in channels if unavailable(c) is None]
    if not runnable:
        reasons = "; ".join(f"{c.name}: {unavailable(c)}" for c in channels)
        echo(f"No enabled channel can run here ({reasons}): enable another one in clawbot.toml", err=True)
        return 1
    names = ", ".join(c.name for c in runnable)

    echo(f"{startup_line(kernel, agent_id, model)}; channels: {names}. Ctrl-D or Ctrl-C to quit.", err=True)
    if control_api_unserved(kernel):
        # else the gateway looks dead to `clawbot status` and `clawbot agent`
        logger.warning(CONTROL_API_OFF, extra=FILE_ONLY)  # the line below is the terminal's
        echo(f"clawbot: {CONTROL_API_OFF}", err=True)
    try:
        with _ctrl_c_to(gateway), _sigterm_stops(gateway):
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

    with _on_signal(signal.SIGINT, on_ctrl_c):
        yield


@contextlib.contextmanager
def _sigterm_stops(gateway):  # noqa: ANN001, ANN202 - Gateway, imported lazily
    """SIGTERM (a service manager stopping clawbot, ``kill``): a graceful stop, so running
    turns finish or are recorded as interrupted; a second SIGTERM ends the process at once."""
    loop = asyncio.get_running_loop()

    def on_sigterm() -> None:
        loop.remove_signal_handler(signal.SIGTERM)
        gateway.stop()

    with _on_signal(signal.SIGTERM, on_sigterm):
        yield


@contextlib.contextmanager
def _on_signal(sig: signal.Signals, handler):  # noqa: ANN001, ANN202 - a callable
    """``handler`` for ``sig`` while the block runs (nothing where the loop takes no signal
    handlers: Windows, a thread)."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(sig, handler)
    except (NotImplementedError, RuntimeError, ValueError):
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(sig)
