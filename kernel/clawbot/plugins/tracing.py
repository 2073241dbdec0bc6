"""``CLAWBOT_TRACE_PLUGINS=1``: log every hook call with its plugin and duration."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

TRACE_ENV = "CLAWBOT_TRACE_PLUGINS"
trace_log = logging.getLogger("clawbot.trace")


def tracing_enabled(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return env.get(TRACE_ENV, "").strip().lower() not in ("", "0", "false", "no", "off")


def log_call(hook: str, plugin: str, seconds: float, outcome: str = "ok") -> None:
    trace_log.info("hook %s plugin=%s %.3f ms %s", hook, plugin, seconds * 1000, outcome)
