"""The test run caches bytecode, as an installed clawbot does.

Some machines set ``PYTHONDONTWRITEBYTECODE=1``: then every ``clawbot`` subprocess a test
starts (a terminal in a pty, a one-shot run, a gateway) compiles the kernel, the provider
SDKs and their dependencies from source again, 2-4 s each instead of well under one.
Switched off here, before any of those are imported, the first process writes the cache
and the others read it (writes are atomic, so parallel processes may share it). A test that
needs a process which writes nothing sets the variable for that process itself.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator

import pytest

# The test kit's fixtures (clawbot_home, make_kernel, fake_llm ...) for the kernel's tests and
# every bundled plugin's: installing clawbot adds them to no other project's test run.
pytest_plugins = ["clawbot.testing.pytest_plugin"]


def pytest_configure(config: pytest.Config) -> None:
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


@pytest.fixture(scope="session", autouse=True)
def users_gateway_on_the_default_port() -> Iterator[socket.socket | None]:
    """Hold the control API's default port for the whole run, as a gateway the user runs would.

    A test must bind an ephemeral port (``[gateway] port = 0``); one that falls back on the
    default then fails here every time instead of only on a machine where clawbot runs.
    Another test process (or the user's own gateway) holding it already serves as well.
    """
    # Imported here, after pytest_configure has turned bytecode writing back on.
    from clawbot.config.gateway_schema import DEFAULT_PORT

    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        holder.bind(("127.0.0.1", DEFAULT_PORT))
        holder.listen(1)
    except OSError:
        holder.close()
        yield None
        return
    try:
        yield holder
    finally:
        holder.close()
