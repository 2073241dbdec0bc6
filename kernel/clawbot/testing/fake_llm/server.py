"""Serving a :class:`FakeLLM` over loopback with uvicorn: in the running loop, in a thread, or blocking."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uvicorn

    from clawbot.testing.fake_llm.fake import FakeLLM

_STARTUP_TIMEOUT = 10.0


class _HideDroppedConnections(logging.Filter):
    """uvicorn logs an app exception with a traceback; a deliberate drop is not worth one."""

    def filter(self, record: logging.LogRecord) -> bool:
        from clawbot.testing.fake_llm.app import DroppedConnection

        error = record.exc_info[1] if record.exc_info else None
        while error is not None:
            if isinstance(error, DroppedConnection):
                return False
            if isinstance(error, BaseExceptionGroup):
                error = error.exceptions[0] if len(error.exceptions) == 1 else None
            else:
                error = error.__cause__ or error.__context__
        return True


_FILTER = _HideDroppedConnections()


def _make_server(fake: FakeLLM, host: str, port: int, log_level: str = "warning") -> uvicorn.Server:
    import uvicorn

    logger = logging.getLogger("uvicorn.error")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    config = uvicorn.Config(
        fake.app,
        host=host,
        port=port,
        log_config=None,
        log_level=log_level,
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
    )
    return uvicorn.Server(config)


def _bound_url(server: uvicorn.Server, host: str) -> str:
    port = server.servers[0].sockets[0].getsockname()[1]
    return f"http://{host}:{port}"


@asynccontextmanager
async def serve_async(fake: FakeLLM, *, host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[str]:
    """Run uvicorn as a task of the current event loop; yields the base URL."""
    server = _make_server(fake, host, port)
    task = asyncio.get_running_loop().create_task(server.serve())
    deadline = time.monotonic() + _STARTUP_TIMEOUT
    while not server.started:
        if task.done():
            task.result()  # raises the start-up error
            raise RuntimeError("the fake LLM server stopped during start-up")
        if time.monotonic() > deadline:
            task.cancel()
            raise TimeoutError("the fake LLM server did not start")
        await asyncio.sleep(0.005)
    url = _bound_url(server, host)
    previous, fake.base_url = fake.base_url, url
    try:
        yield url
    finally:
        fake.base_url = previous
        server.should_exit = True
        await task


@contextmanager
def serve_thread(fake: FakeLLM, *, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Run uvicorn in a daemon thread with its own event loop; yields the base URL."""
    server = _make_server(fake, host, port)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(server.serve())
        except BaseException as exc:  # noqa: BLE001 - reported to the caller
            errors.append(exc)

    thread = threading.Thread(target=run, name="fake-llm-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + _STARTUP_TIMEOUT
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError(f"the fake LLM server failed to start: {errors[0] if errors else 'unknown error'}")
        if time.monotonic() > deadline:
            server.should_exit = True
            raise TimeoutError("the fake LLM server did not start")
        time.sleep(0.005)
    url = _bound_url(server, host)
    previous, fake.base_url = fake.base_url, url
    try:
        yield url
    finally:
        fake.base_url = previous
        server.should_exit = True
        thread.join(timeout=10)


def run_server(
    port: int,
    script_path: str | Path | None = None,
    host: str = "127.0.0.1",
    *,
    fake: FakeLLM | None = None,
    on_ready: Callable[[str], Any] | None = None,
    stop: threading.Event | None = None,
    log_level: str = "info",
) -> FakeLLM:
    """Serve a fake loaded from ``script_path`` (or ``fake``) until interrupted; blocks.

    ``port=0`` picks a free port. ``on_ready(url)`` is called once listening; setting
    ``stop`` shuts the server down (for tests and embedding). Returns the fake, whose
    ``requests`` then hold everything received.
    """
    from clawbot.testing.fake_llm.fake import FakeLLM

    if fake is None:
        fake = FakeLLM.from_script(script_path) if script_path is not None else FakeLLM()
    server = _make_server(fake, host, port, log_level=log_level)

    async def main() -> None:
        task = asyncio.get_running_loop().create_task(server.serve())
        while not server.started and not task.done():
            await asyncio.sleep(0.005)
        if server.started:
            fake.base_url = _bound_url(server, host)
            if on_ready is not None:
                on_ready(fake.base_url)
        while stop is not None and not task.done() and not stop.is_set():
            await asyncio.sleep(0.02)
        if stop is not None and stop.is_set():
            server.should_exit = True
        await task

    asyncio.run(main())
    return fake
