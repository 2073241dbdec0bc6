"""What every CLI command shares: the options of the root group and the lazily booted kernel."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import click

from clawbot.cli.output import echo
from clawbot.paths import StatePaths

if TYPE_CHECKING:  # deferred: annotations only; `--help` answers without loading the kernel
    from clawbot.boot import Loaded
    from clawbot.kernel import Kernel
    from clawbot.paths import StatePaths

EXIT_CONFIG = 2


@attrs.define
class CliState:
    """``click.get_current_context().obj`` for every clawbot command, plugin ones included."""

    config_path: str | None
    env: Mapping[str, str]
    _loaded: Loaded | None = None

    def load(self) -> Loaded:
        """Validate the configuration and load the plugins (once per process)."""
        if self._loaded is None:
            # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
            from clawbot.boot import load

            self._loaded = load(self.config_path, env=self.env)
            for notice in self._loaded.notices:
                echo(notice, err=True)
        return self._loaded

    def paths(self) -> StatePaths:
        return StatePaths.resolve(self.env)

    async def kernel(self) -> Kernel:
        # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
        from clawbot.kernel import bootstrap

        return await bootstrap(self.load())


def config_option(command: Any) -> Any:
    """``--config FILE`` after the subcommand too (``clawbot run --config FILE``)."""

    def remember(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        if value is None:
            return
        state = ctx.find_object(CliState)
        if state is None:  # the clawbot group makes it; a command run outside the group has none
            raise click.UsageError("--config works only under the clawbot command", ctx)
        state.config_path = value

    return click.option(
        "--config",
        type=click.Path(dir_okay=False),
        default=None,
        expose_value=False,
        is_eager=True,
        callback=remember,
        help="Configuration file (same as `clawbot --config FILE`).",
    )(command)


def verbose_option(command: Any) -> Any:
    """``--verbose``: tracebacks on the terminal too (they always go to the log file)."""
    return click.option(
        "--verbose",
        is_flag=True,
        default=False,
        help="Show error tracebacks on the terminal (always kept in <state dir>/logs/: clawbot.log, gateway.log for clawbot run).",
    )(command)


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Turn configuration and plugin-conflict errors into one message and exit code 2."""
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from clawbot.config import ConfigError
    from clawbot.kernel import PluginConflictError

    try:
        yield
    except (ConfigError, PluginConflictError) as exc:
        echo(str(exc), err=True)
        sys.exit(EXIT_CONFIG)


def run_async(coro: Any) -> Any:
    """Run a coroutine for a command; Ctrl-C ends it quietly."""
    try:
        import asyncio  # deferred: asyncio (ssl, subprocess) only once a command runs, never for `--help`

        return asyncio.run(coro)
    except KeyboardInterrupt:
        return None
