"""clawbot-control: the control API of a running gateway, HTTP and WebSocket on loopback, behind a token.

``clawbot run`` serves it as the channel ``api`` (:mod:`clawbot_control.api_channel`), which
reaches the gateway through ``sink.control`` (:class:`clawbot.types.GatewayControl`) and also
serves the plugins' pages and sockets (``clawbot_web_routes``). Its clients (``clawbot agent``,
``clawbot status``) are the kernel's: they find the gateway by the files under
``<state dir>/gateway/`` (:mod:`clawbot.control`) without loading any plugin. The endpoints are
described in docs/control-api.md.
"""
