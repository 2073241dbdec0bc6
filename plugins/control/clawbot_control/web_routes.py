"""Plugins' pages and sockets (``clawbot_web_routes``), served by the control API.

The kernel collects them (:meth:`clawbot.types.GatewayControl.web_routes`) once when the API
starts, and they are checked here: a path must start with ``/``, may not
lie under ``/v1/`` (the API's own), and may be offered once; any of those wrong is a startup
error naming the plugin(s). They are served by :mod:`clawbot_control.plugin_pages`.
"""

from __future__ import annotations

from clawbot.types import WebPage, WebRoute, WebSocketRoute

from clawbot_control.settings import ControlApiError

RESERVED = "/v1/"


def checked_routes(offered: list[tuple[str, object]]) -> list[tuple[str, WebRoute]]:
    """(plugin, route) for every route the plugins offer; :class:`ControlApiError` on a clash."""
    chosen: dict[str, tuple[str, WebRoute]] = {}
    problems = []
    for plugin, route in offered:
        if not isinstance(route, WebPage | WebSocketRoute):
            problems.append(f"plugin {plugin!r} offered {type(route).__name__}, not a WebPage or WebSocketRoute")
            continue
        path = route.path
        if not isinstance(path, str) or not path.startswith("/") or path == "/v1" or path.startswith(RESERVED):
            problems.append(f"plugin {plugin!r} offered the path {path!r}: paths start with / and {RESERVED} belongs to the API")
            continue
        if path in chosen:
            problems.append(f"the path {path!r} is offered by two plugins: {chosen[path][0]!r} and {plugin!r}")
            continue
        chosen[path] = (plugin, route)
    if problems:
        raise ControlApiError("web routes: " + "; ".join(problems))
    return list(chosen.values())
