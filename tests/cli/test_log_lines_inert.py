"""Whatever logs it (clawbot, a plugin under its own package name, a library, a Python
warning), a log line reaches the terminal with control characters made visible, in each way
the CLI sets up logging."""

from __future__ import annotations

import subprocess
import sys

import pytest
from clawbot.plugins.tracing import TRACE_ENV

SCRIPT = r"""
import logging, os, sys, warnings
import clawbot.cli.logs as logs
setup = sys.argv[1]
if setup == "default":
    logs.default_logging()
else:
    logs.configure_logging("warning", os.environ)
hostile = "x\x1b]0;PWNED\x07y\x9b2J"
for name in ("clawbot.agent", "clawbot_tools.runtime.approvals_store", "httpx", "some_plugin"):
    logging.getLogger(name).warning("cannot read %s", hostile)
warnings.warn(hostile)
"""


@pytest.mark.parametrize(("setup", "tracing"), [("default", ""), ("configured", ""), ("configured", "1")])
def test_every_log_line_is_written_with_control_characters_visible(setup: str, tracing: str) -> None:
    env = {"PATH": "/usr/bin:/bin", TRACE_ENV: tracing}
    done = subprocess.run([sys.executable, "-c", SCRIPT, setup], env=env, capture_output=True, text=True, check=True)
    assert not any(char in done.stderr for char in "\x1b\x07\x9b"), repr(done.stderr)
    assert done.stderr.count("x\\u001b]0;PWNED\\u0007y") == 5, done.stderr  # four loggers and the warning
