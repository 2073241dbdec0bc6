"""Running the ``clawbot`` command line in the test's own process, as a user would run it.

``invoke_cli("config", "validate", home=tmp_path)`` runs exactly what the ``clawbot``
script runs (``clawbot.cli.main.main``: the default logging, then the click group) with the
user's view of the world: ``CLAWBOT_HOME`` and ``HOME`` in ``home``, no ``CLAWBOT_*`` or
provider key leaking in from the developer's environment, ``cwd`` as the working folder,
``stdin`` as standard input (not a terminal). It answers like ``subprocess.run`` does
(``returncode``, ``stdout``, ``stderr``), so a test reads the same either way.

In process it is about 20-50 times faster than a subprocess, which pays a fresh interpreter
and fresh imports per call. A subprocess is still what a test needs for signals, a
terminal (PTY), the real exit of a process, start-up import costs, or plugins installed
for that run only (entry points are read once per process).

An exception that escapes the command is re-raised, never turned into output: a traceback
must not reach a user, so the test fails with it.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path

import attrs

from clawbot.cli.logs import gateway_log_file

#: Variables a user's run must not inherit from the developer's shell.
LEAKY_VARIABLES = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "BRAVE_API_KEY")


@attrs.frozen
class CliRun:
    """What one run printed and how it ended (the fields of ``subprocess.CompletedProcess``)."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def user_env(home: Path, env: Mapping[str, str | None] | None = None) -> dict[str, str | None]:
    """Changes to ``os.environ`` for one run; ``None`` removes a variable."""
    changes: dict[str, str | None] = {name: None for name in os.environ if name.startswith("CLAWBOT_")}
    changes.update(dict.fromkeys(LEAKY_VARIABLES))
    changes.update({"CLAWBOT_HOME": str(home), "HOME": str(home), "NO_COLOR": "1", "COLUMNS": "200"})
    changes.update(env or {})
    return changes


def subprocess_env(home: Path, env: Mapping[str, str | None] | None = None, extra_path: Path | None = None) -> dict[str, str]:
    """The whole environment for ``clawbot`` run as a subprocess with the same user's view;
    ``extra_path`` goes first on ``PYTHONPATH`` (plugins installed for that run only)."""
    environment = dict(os.environ)
    if extra_path is not None:
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(extra_path), environment.get("PYTHONPATH")]))
    for name, value in user_env(home, env).items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    return environment


def gateway_log(home: Path) -> Path:
    """The log file a ``clawbot run`` whose state folder is ``home`` writes (what ``clawbot
    logs`` shows): a test of a gateway run as a subprocess reads what its plugins logged there."""
    return gateway_log_file(home)


@contextlib.contextmanager
def _own_logging():
    """The root logger as a fresh process has it, restored afterwards (pytest's capture
    handlers included), so the CLI configures logging exactly as it does for a user."""
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    root.handlers[:] = []
    try:
        yield
    finally:
        for handler in root.handlers:
            if handler not in saved_handlers:
                handler.close()
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
        logging.captureWarnings(False)


def invoke_cli(
    *args: str,
    home: Path,
    cwd: Path | None = None,
    env: Mapping[str, str | None] | None = None,
    stdin: str | None = "",
) -> CliRun:
    """``clawbot ARGS`` in this process; see the module docstring."""
    from click.testing import CliRunner

    from clawbot.cli.main import main

    home.mkdir(parents=True, exist_ok=True)
    runner = CliRunner()
    code = 0
    with _own_logging(), contextlib.chdir(cwd or home), runner.isolation(input=stdin, env=user_env(home, env)) as streams:
        try:
            main(list(args))
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        finally:
            import sys

            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = (stream.getvalue().decode("utf-8", "replace") for stream in streams[:2])
    return CliRun(tuple(args), code, stdout, stderr)


__all__ = ["CliRun", "invoke_cli", "subprocess_env", "user_env"]
