"""Logging for CLI commands: warnings to stderr; hook tracing when asked for."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from clawbot.plugins.tracing import tracing_enabled


def configure_logging(level: str, env: Mapping[str, str]) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("clawbot")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False
    if tracing_enabled(env):
        logging.getLogger("clawbot.trace").setLevel(logging.INFO)
