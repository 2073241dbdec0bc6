"""Work the gateway runs beside its channels while it runs (heartbeats, cron jobs).

Each service is started once the channels are, and cancelled when the gateway stops; a
service that fails is logged and never takes the channels down with it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

log = logging.getLogger("clawbot.gateway.runner")  # one logger name for the gateway's records


class BackgroundService(Protocol):
    async def serve(self, gateway: Any) -> None:
        """Run until cancelled (the gateway stopping); ``gateway`` is the running Gateway."""


async def serving(service: BackgroundService, gateway: Any) -> None:
    try:
        await service.serve(gateway)
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("the gateway's %s stopped", type(service).__name__)
