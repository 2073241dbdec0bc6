"""The ``automation`` tool group: the agent's own cron jobs.

Like every tool here, it reaches the kernel only through ``call.services``.
"""

from __future__ import annotations

from clawbot import Tool

from clawbot_tools.config import ToolsSettings


def tools(settings: ToolsSettings) -> list[Tool]:
    from clawbot_tools.automation import cron

    return [cron.make_tool()]
