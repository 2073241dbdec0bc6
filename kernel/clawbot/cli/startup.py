"""The one line ``clawbot run`` and ``clawbot agent`` print first: which configuration file,
workspace and model are in use, so a surprise (another file picked up, a detected model) shows."""

from __future__ import annotations

from typing import Any

from clawbot.paths import expand_user_path


def startup_line(kernel: Any, agent_id: str, model: Any, *, chosen: bool = False) -> str:
    """``chosen``: ``model`` is the session's ``/model`` choice rather than the configured one."""
    config = kernel.config.source or "defaults, no file"
    workspace = expand_user_path(kernel.config.agent_workspace(agent_id), kernel.env)
    note = " (chosen with /model)" if chosen else " (detected from the environment)" if model.detected else ""
    return f"clawbot: agent {agent_id} on {model.ref}{note}; config {config}; workspace {workspace}"
