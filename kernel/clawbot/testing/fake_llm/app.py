"""The starlette app: routes, request recording, fault dispatch and reply rendering."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from clawbot.testing.fake_llm import anthropic_wire, openai_chat_wire, openai_embeddings_wire, openai_responses_wire
from clawbot.testing.fake_llm.errors import ErrorResponse, error_response, script_exhausted
from clawbot.testing.fake_llm.script import Api, Fault, RecordedRequest, Reply, new_id

if TYPE_CHECKING:
    from clawbot.testing.fake_llm.fake import FakeLLM


#: Faults that break an answer the server has begun (the others replace the answer).
_STREAM_FAULTS = ("dropped_stream", "broken_stream_json", "stalled_stream")


class DroppedConnection(Exception):
    """Raised inside the app after a partial response, so the server drops the connection."""


_RENDER_JSON: dict[str, Callable[[Reply, RecordedRequest], dict[str, Any]]] = {
    "anthropic": anthropic_wire.render_message,
    "openai-chat": openai_chat_wire.render_completion,
    "openai-responses": openai_responses_wire.render_response,
}
_RENDER_STREAM: dict[str, Callable[[Reply, RecordedRequest], list[bytes]]] = {
    "anthropic": anthropic_wire.render_stream,
    "openai-chat": openai_chat_wire.render_stream,
    "openai-responses": openai_responses_wire.render_stream,
}


def _id_header(api: Api) -> dict[str, str]:
    return {"request-id": new_id("req_011")} if api == "anthropic" else {"x-request-id": new_id("req_", 32)}


def _error(response: ErrorResponse) -> JSONResponse:
    return JSONResponse(response.body, status_code=response.status, headers=response.headers)


def _json_bytes(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


class _TruncatedBody(Response):
    """A JSON response that promises the whole body but sends half, then drops the connection."""

    def __init__(self, content: bytes, headers: dict[str, str]) -> None:
        super().__init__(content, status_code=200, headers=headers, media_type="application/json")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        await send({"type": "http.response.body", "body": self.body[: len(self.body) // 2], "more_body": True})
        raise DroppedConnection("fake LLM dropped the connection mid-body (dropped_stream fault)")


def _broken(frame: bytes) -> bytes:
    """``frame`` with its JSON data cut in half, as a faulty proxy or server might send it."""
    head, _, data = frame.rstrip(b"\n").rpartition(b"data: ")
    return head + b"data: " + data[: max(1, len(data) // 2)] + b"\n\n"


def _event_stream(frames: list[bytes], headers: dict[str, str], fault: Fault | None = None) -> StreamingResponse:
    # a garbled or stalled event is never the last one ([DONE] or the final event)
    at = None if fault is None else fault.after_events
    if fault is not None and fault.kind != "dropped_stream":
        at = min(fault.after_events, max(0, len(frames) - 2))

    async def body() -> AsyncIterator[bytes]:
        for index, frame in enumerate(frames):
            if fault is not None and index == at:
                if fault.kind == "dropped_stream":
                    raise DroppedConnection(f"fake LLM dropped the stream after {at} events (dropped_stream fault)")
                if fault.kind == "broken_stream_json":
                    yield _broken(frame)
                    return
                if fault.kind == "stalled_stream":
                    await anyio.sleep(fault.pause)
            yield frame
            await anyio.sleep(0)

    return StreamingResponse(body(), media_type="text/event-stream", headers={"cache-control": "no-cache", **headers})


def _invalid(api: Api, message: str) -> JSONResponse:
    if api == "anthropic":
        body: dict[str, Any] = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    else:
        body = {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
    return JSONResponse(body, status_code=400)


async def _record(fake: FakeLLM, request: Request, api: Api) -> RecordedRequest:
    raw = await request.body()
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = raw.decode("utf-8", "replace")
    model = body.get("model") if isinstance(body, dict) else None
    stream = bool(body.get("stream")) if isinstance(body, dict) else False
    recorded = RecordedRequest(
        api=api,
        method=request.method,
        path=request.url.path,
        headers=dict(request.headers),
        body=body,
        model=model,
        stream=stream,
    )
    fake._record(recorded)
    return recorded


async def _fault_for(fake: FakeLLM, api: Api, recorded: RecordedRequest) -> tuple[Fault | None, Response | None]:
    """The fault queued for this request: a slow one waits and is done; an error one is
    the response to send; a stream fault is left for the answer to act out."""
    fault: Fault | None = fake._take_fault(recorded.model)
    if fault is not None and fault.kind == "slow":
        await anyio.sleep(fault.pause)
        fault = None
    if fault is not None and fault.kind not in _STREAM_FAULTS:
        return fault, _error(error_response(api, fault, recorded.model))
    return fault, None


async def _generate(fake: FakeLLM, request: Request, api: Api) -> Response:
    recorded = await _record(fake, request, api)
    if not isinstance(recorded.body, dict):
        return _invalid(api, "the request body must be a JSON object")
    if not recorded.model:
        return _invalid(api, "model: Field required")
    fault, failed = await _fault_for(fake, api, recorded)
    if failed is not None:
        return failed

    # a broken or stalled answer leaves the reply queued, for the retry
    broken = fault is not None
    reply = fake._peek_reply(recorded) if broken else fake._next_reply(recorded)
    if reply is None:
        return _error(script_exhausted(api, len(fake.requests)))
    headers = _id_header(api)
    if recorded.stream:
        frames = _RENDER_STREAM[api](reply, recorded)
        return _event_stream(frames, headers, fault)
    content = _json_bytes(_RENDER_JSON[api](reply, recorded))
    if fault is not None and fault.kind == "stalled_stream":
        await anyio.sleep(fault.pause)
    elif fault is not None:
        return _TruncatedBody(content, headers)
    return Response(content, media_type="application/json", headers=headers)


async def _embeddings(fake: FakeLLM, request: Request) -> Response:
    """Vectors computed from the input (see openai_embeddings_wire); faults as for chat, no reply used."""
    api: Api = "openai-embeddings"
    recorded = await _record(fake, request, api)
    if not isinstance(recorded.body, dict):
        return _invalid(api, "the request body must be a JSON object")
    if not recorded.model:
        return _invalid(api, "you must provide a model parameter")
    texts = openai_embeddings_wire.inputs(recorded.body)
    if isinstance(texts, str):
        return _invalid(api, texts)
    fault, failed = await _fault_for(fake, api, recorded)
    if failed is not None:
        return failed
    content = _json_bytes(openai_embeddings_wire.render(recorded.body, texts, fake.embedding_dims))
    # the stream faults on a plain JSON answer, as for chat without streaming
    if fault is not None and fault.kind == "stalled_stream":
        await anyio.sleep(fault.pause)
    elif fault is not None:
        return _TruncatedBody(content, _id_header(api))
    return Response(content, media_type="application/json", headers=_id_header(api))


def build_app(fake: FakeLLM) -> Starlette:
    """The ASGI app serving ``fake``."""

    async def messages(request: Request) -> Response:
        return await _generate(fake, request, "anthropic")

    async def chat_completions(request: Request) -> Response:
        return await _generate(fake, request, "openai-chat")

    async def responses(request: Request) -> Response:
        return await _generate(fake, request, "openai-responses")

    async def embeddings(request: Request) -> Response:
        return await _embeddings(fake, request)

    async def count_tokens(request: Request) -> Response:
        recorded = await _record(fake, request, "anthropic")
        return JSONResponse(anthropic_wire.count_tokens(recorded.body), headers=_id_header("anthropic"))

    async def models(request: Request) -> Response:
        anthropic = "anthropic-version" in request.headers or "x-api-key" in request.headers
        api: Api = "anthropic" if anthropic else "openai-chat"
        await _record(fake, request, api)
        if anthropic:
            return JSONResponse(anthropic_wire.models_list(fake.model_names(anthropic_wire.DEFAULT_MODEL)))
        return JSONResponse(openai_chat_wire.models_list(fake.model_names(openai_chat_wire.DEFAULT_MODEL)))

    routes = [
        Route("/v1/messages", messages, methods=["POST"]),
        Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        Route("/v1/embeddings", embeddings, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
    ]
    return Starlette(routes=routes)
