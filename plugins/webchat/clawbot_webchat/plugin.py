"""Entry point of the web chat plugin: the ``webchat`` channel and the page and socket the
control API serves for it (``/chat/``, ``/chat/ws``).

Only ``hookimpl`` is imported at module level: plugin discovery must stay cheap, so the
channel and the page load when their hooks are called.

The channel (from ``clawbot_channels``) and the socket (from ``clawbot_web_routes``) are
one chat surface, but the kernel calls the two hooks with separate contexts: the channel is
kept in the plugin's per-kernel ``ctx.state``, so a test's kernels never share one and a
finished kernel's channel goes away with it.
"""

from __future__ import annotations

from typing import Any

from clawbot import hookimpl

SECTION = "channels.webchat"


def _channel(ctx: Any) -> Any:
    """This kernel's webchat channel, made by whichever of the two hooks runs first."""
    from clawbot_webchat.channel import WebchatChannel
    from clawbot_webchat.config import WebchatConfig

    if "channel" not in ctx.state:
        ctx.state["channel"] = WebchatChannel(ctx.section(SECTION) or WebchatConfig())
    return ctx.state["channel"]


@hookimpl
def clawbot_config_schema():
    from clawbot import ConfigSection

    from clawbot_webchat.config import WebchatConfig

    return ConfigSection(SECTION, WebchatConfig)


@hookimpl
def clawbot_channels(ctx):
    return [_channel(ctx)]


@hookimpl
def clawbot_web_routes(ctx):
    from clawbot_webchat.pages import routes

    channel = _channel(ctx)
    if not channel.config.enabled:
        return []
    return routes(channel.serve)
