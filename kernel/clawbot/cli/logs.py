"""Logging for CLI commands: warnings to stderr; hook tracing when asked for.

Log lines quote paths, skill names and errors that may come from the workspace or a
provider, so they are written with control characters shown as ``\\uXXXX``, like
everything else a command prints (:mod:`clawbot.cli.output`).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping

from clawbot.plugins.tracing import tracing_enabled
from clawbot.safetext import visible


class VisibleFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return visible(super().format(record))


def default_logging() -> None:
    """What Python would print without any set-up (warnings, the bare message), made visible."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(VisibleFormatter("%(message)s"))
        handler.setLevel(logging.WARNING)
        root.addHandler(handler)
    logging.captureWarnings(True)  # warnings.warn text goes through the same handler


def configure_logging(level: str, env: Mapping[str, str]) -> None:
    """clawbot's loggers at ``level``; every other one (plugins log under their own package
    names, libraries under theirs) at warning. All end in one handler that makes them visible."""
    handler = logging.StreamHandler()
    handler.setFormatter(VisibleFormatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    ours = logging.getLogger("clawbot")
    ours.handlers.clear()
    ours.setLevel(level.upper())
    ours.propagate = True
    logging.captureWarnings(True)
    if tracing_enabled(env):
        logging.getLogger("clawbot.trace").setLevel(logging.INFO)
