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
import sys

import pytest


def pytest_configure(config: pytest.Config) -> None:
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
