"""The ``messaging`` tool group: ``message`` sends through the gateway's running channels."""

from __future__ import annotations

from clawbot import Tool

from clawbot_tools.config import ToolsSettings


def tools(settings: ToolsSettings) -> list[Tool]:
    from clawbot_tools.messaging import message

    return [message.make_tool()]
