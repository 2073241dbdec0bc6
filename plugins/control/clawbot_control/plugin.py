"""Entry point of the control API plugin: the ``api`` channel of ``clawbot run``.

Only ``hookimpl`` is imported at module level: plugin discovery must stay cheap, so the
channel loads when the hook is called, and aiohttp only once the API starts.
"""

from __future__ import annotations

from clawbot import hookimpl


@hookimpl
def clawbot_channels(ctx):
    from clawbot_control.api_channel import ApiChannel
    from clawbot_control.settings import settings_for

    if not ctx.clawbot.gateway_control_api:  # `gateway.control_api = false`: the channels run without it
        return []
    return [ApiChannel(lambda: settings_for(ctx.clawbot, ctx.state_dir))]
