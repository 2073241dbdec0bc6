"""The control API of a running gateway: HTTP and WebSocket on loopback, behind a token.

``clawbot run`` serves it as the kernel channel ``api`` (:mod:`clawbot.control.api_channel`);
``clawbot agent`` and ``clawbot status`` reach it with the stdlib client
(:mod:`clawbot.control.client`), which imports neither aiohttp nor the kernel. Where it
listens and its token live under ``<state dir>/gateway/`` (:mod:`clawbot.control.endpoint`,
:mod:`clawbot.control.token`). The endpoints are described in docs/control-api.md.
"""
