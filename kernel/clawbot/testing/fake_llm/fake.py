"""The :class:`FakeLLM` object: the reply script, the fault queue and the request log."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawbot.testing.fake_llm.script import (
    Api,
    Fault,
    RecordedRequest,
    Reply,
    ToolCallSpec,
    Usage,
    load_script,
    reply_from,
)

if TYPE_CHECKING:
    import httpx2

ReplyLike = Reply | str | Mapping[str, Any] | Callable[[RecordedRequest], Any]

IN_PROCESS_URL = "http://fake-llm.test"


class FakeLLM:
    """A fake Anthropic / OpenAI server holding a script of replies and a queue of faults.

    ``replies`` may hold :class:`Reply` objects, plain texts, script mappings or callables
    ``(RecordedRequest) -> Reply`` for dynamic answers. When the script runs out the fake
    answers ``default_text``, or HTTP 500 when ``strict``.
    """

    def __init__(
        self,
        replies: Iterable[ReplyLike] = (),
        *,
        faults: Iterable[Fault] = (),
        strict: bool = False,
        default_text: str = "ok",
        models: Iterable[str] | None = None,
        embedding_dims: int = 64,
    ) -> None:
        self.strict = strict
        self.default_text = default_text
        self.models: list[str] | None = list(models) if models is not None else None
        self.embedding_dims = embedding_dims
        """Size of the vectors ``/v1/embeddings`` answers (a request's ``dimensions`` wins)."""
        self.requests: list[RecordedRequest] = []
        self.base_url: str | None = None
        """Set by the fixtures / callers while the fake is served over loopback."""
        self.on_request: Callable[[RecordedRequest], Any] | None = None
        """Called with each request as it is recorded (``--record`` writes it to a file)."""
        self._lock = threading.Lock()
        self._replies: deque[Reply | Callable[[RecordedRequest], Any]] = deque()
        self._faults: list[list[Any]] = []  # [fault, remaining]
        self.queue(*replies)
        for fault in faults:
            self._faults.append([fault, fault.times])
        from clawbot.testing.fake_llm.app import build_app

        self.app = build_app(self)

    @classmethod
    def from_script(cls, path: str | Path, **kwargs: Any) -> FakeLLM:
        """A fake loaded from a JSON / TOML script file (see the package docstring)."""
        script = load_script(path)
        kwargs.setdefault("strict", script.strict)
        kwargs.setdefault("default_text", script.default_text)
        return cls(script.replies, faults=script.faults, **kwargs)

    # -- scripting -------------------------------------------------------------------------

    def queue(self, *replies: ReplyLike) -> FakeLLM:
        """Append replies to the script; returns the fake for chaining."""
        with self._lock:
            for reply in replies:
                self._replies.append(reply if callable(reply) and not isinstance(reply, Reply) else reply_from(reply))
        return self

    def reply(
        self,
        text: str = "",
        *,
        thinking: str | None = None,
        tool_calls: Iterable[ToolCallSpec | Mapping[str, Any]] = (),
        usage: Usage | Mapping[str, Any] | None = None,
        stop_reason: str | None = None,
        model: str | None = None,
    ) -> FakeLLM:
        """Append one :class:`Reply` built from these fields."""
        return self.queue(
            Reply(
                text=text,
                thinking=thinking,
                tool_calls=tuple(tool_calls),
                usage=usage,
                stop_reason=stop_reason,
                model=model,
            )
        )

    def tool_call(self, name: str, arguments: dict[str, Any] | str | None = None, **reply: Any) -> FakeLLM:
        """Append a reply asking for one tool call."""
        call = ToolCallSpec(name=name, arguments={} if arguments is None else arguments)
        return self.reply(tool_calls=[call], **reply)

    def fail(self, kind: str, times: int = 1, **opts: Any) -> Fault:
        """Queue a fault served to the next ``times`` matching requests, before any reply.

        ``kind``: rate_limit, server_error, overloaded, auth, billing, context_length,
        unknown_model, dropped_stream, broken_stream_json, stalled_stream or slow. Options are the fields of :class:`Fault` (``model=``,
        ``retry_after=``, ``status=``, ``message=``, ``delay=``, ``after_events=``, ...).
        """
        fault = Fault(kind, times, **opts)
        with self._lock:
            self._faults.append([fault, times])
        return fault

    def reset(self) -> None:
        """Forget the script, the faults and the recorded requests."""
        with self._lock:
            self._replies.clear()
            self._faults.clear()
            self.requests.clear()

    @property
    def pending_replies(self) -> int:
        return len(self._replies)

    @property
    def pending_faults(self) -> int:
        return sum(remaining for _, remaining in self._faults)

    @property
    def last_request(self) -> RecordedRequest:
        if not self.requests:
            raise LookupError("the fake LLM has received no request")
        return self.requests[-1]

    def requests_for(self, api: Api) -> list[RecordedRequest]:
        return [r for r in self.requests if r.api == api]

    def model_names(self, default: str) -> list[str]:
        """The names ``GET /v1/models`` lists."""
        if self.models is not None:
            return list(self.models)
        with self._lock:
            names = [r.model for r in self._replies if isinstance(r, Reply) and r.model]
            names += [f.model for f, _ in self._faults if f.model]
        return list(dict.fromkeys(names)) or [default]

    # -- used by the app -----------------------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)
            if self.on_request is not None:
                self.on_request(request)

    def _take_fault(self, model: str | None) -> Fault | None:
        with self._lock:
            for entry in self._faults:
                fault, remaining = entry
                if fault.matches(model):
                    if remaining <= 1:
                        self._faults.remove(entry)
                    else:
                        entry[1] = remaining - 1
                    return fault
        return None

    def _resolve(self, item: Reply | Callable[[RecordedRequest], Any], request: RecordedRequest) -> Reply:
        return item if isinstance(item, Reply) else reply_from(item(request))

    def _next_reply(self, request: RecordedRequest) -> Reply | None:
        with self._lock:
            item = self._replies.popleft() if self._replies else None
        if item is None:
            return None if self.strict else Reply(text=self.default_text)
        return self._resolve(item, request)

    def _peek_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            item = self._replies[0] if self._replies else None
        return Reply(text=self.default_text) if item is None else self._resolve(item, request)

    # -- transports ------------------------------------------------------------------------------

    def http_client(self, *, base_url: str = IN_PROCESS_URL, streaming: bool = True, **kwargs: Any) -> httpx2.AsyncClient:
        """An ``httpx2.AsyncClient`` wired straight to :attr:`app`, for the SDKs' ``http_client=``.

        ``streaming=True`` (default) uses :class:`StreamingASGITransport` (events arrive as
        sent; a dropped stream fails mid-iteration; read timeouts apply). ``streaming=False``
        uses the stock, buffering ``httpx2.ASGITransport``.
        """
        import httpx2

        if streaming:
            from clawbot.testing.fake_llm.transport import StreamingASGITransport

            transport: httpx2.AsyncBaseTransport = StreamingASGITransport(app=self.app)
        else:
            transport = httpx2.ASGITransport(app=self.app)
        return httpx2.AsyncClient(transport=transport, base_url=base_url, **kwargs)

    def serve(self, *, host: str = "127.0.0.1", port: int = 0) -> AbstractAsyncContextManager[str]:
        """``async with fake.serve() as url``: uvicorn on ``host:port`` (0 = a free port) in this loop."""
        from clawbot.testing.fake_llm.server import serve_async

        return serve_async(self, host=host, port=port)

    def serve_in_thread(self, *, host: str = "127.0.0.1", port: int = 0) -> AbstractContextManager[str]:
        """``with fake.serve_in_thread() as url``: uvicorn in a background thread (for sync code)."""
        from clawbot.testing.fake_llm.server import serve_thread

        return serve_thread(self, host=host, port=port)

    def __repr__(self) -> str:
        return f"<FakeLLM replies={self.pending_replies} faults={self.pending_faults} requests={len(self.requests)}>"
