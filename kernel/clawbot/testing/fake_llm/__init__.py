"""A fake LLM server the real ``anthropic`` and ``openai`` SDKs talk to unmodified.

It speaks three wire APIs, streaming and not: Anthropic Messages (``POST /v1/messages``,
``POST /v1/messages/count_tokens``), OpenAI Chat Completions (``POST /v1/chat/completions``)
and OpenAI Responses (``POST /v1/responses``), plus ``GET /v1/models`` and OpenAI Embeddings
(``POST /v1/embeddings``: deterministic hashed bag-of-words vectors of
``FakeLLM(embedding_dims=64)`` dimensions, no script needed; faults apply as for chat). A :class:`FakeLLM`
holds a script of provider-neutral :class:`Reply` objects; each is rendered in whichever API
the request arrives on. Every request is recorded (``fake.requests``), and faults can be
queued (``fake.fail("rate_limit", retry_after=2, model="m")``) with each API's real error
shape, so the SDKs raise their own exception classes.

In process::

    fake = FakeLLM()
    fake.tool_call("read", {"path": "a.txt"}).reply("done")
    client = anthropic.AsyncAnthropic(api_key="test", base_url=IN_PROCESS_URL,
                                      http_client=fake.http_client(), max_retries=0)

Over loopback: ``async with fake.serve() as url`` (Anthropic ``base_url=url``, OpenAI
``base_url=url + "/v1"``), or ``with fake.serve_in_thread() as url`` from sync code.
From a shell: ``clawbot dev fake-llm --port 8765 --script script.toml``.

Script files (JSON, or TOML for any other suffix)::

    {
      "strict": false,            # optional: HTTP 500 once the replies run out
      "default_text": "ok",       # optional: the reply once they run out (not strict)
      "replies": [
        {"text": "Let me look.",
         "thinking": "optional reasoning text",
         "tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}, "id": "optional"}],
         "usage": {"input_tokens": 120, "output_tokens": 30,
                   "cache_read_tokens": 100, "cache_write_tokens": 0},
         "stop_reason": "tool_use",   # optional: end_turn | tool_use | max_tokens |
                                      # stop_sequence | refusal (derived when omitted)
         "model": "optional model name to report"},
        "a bare string is a text reply"
      ],
      "faults": [
        {"kind": "rate_limit", "times": 1, "retry_after": 2, "model": "optional"}
      ]
    }

The TOML equivalent uses ``[[replies]]`` / ``[[faults]]`` tables. ``arguments`` may be a
string to send verbatim (malformed JSON). Usage counts left out are estimated from the
request and reply sizes; ``input_tokens`` is the uncached input (OpenAI's prompt/input
tokens are rendered as input + cache read + cache write). Usage keys may also use the
providers' spellings (``cache_read_input_tokens``, ``cache_creation_input_tokens``,
``cached_tokens``, ``prompt_tokens``, ``completion_tokens``).

Fault kinds (see :class:`Fault` for options): ``rate_limit`` (429 + ``retry-after``),
``server_error`` (500), ``overloaded`` (Anthropic 529 ``overloaded_error``, OpenAI 503),
``auth`` (401), ``billing`` (Anthropic 402 ``billing_error``; OpenAI 429
``insufficient_quota``, as the real API does), ``context_length`` (400 with each API's real
message / ``context_length_exceeded`` code), ``unknown_model`` (404 with each API's real
"no such model" error), ``dropped_stream`` (the next reply is sent in part, then the
connection drops; the reply stays queued), ``broken_stream_json`` (the next reply is sent in
part, then one event whose JSON is cut in half, and the stream ends; the reply stays queued),
``stalled_stream`` (the next reply is sent in part, then nothing for ``delay`` seconds,
default 300, then the rest; the reply stays queued, for the retry a client makes) and ``slow`` (waits ``delay`` seconds, default 0.2, then answers
normally). The stream faults hit after ``after_events`` events (default 3; never the last
one); without streaming, ``dropped_stream`` and ``broken_stream_json`` send half the JSON body
and ``stalled_stream`` waits before answering. Faults are served before replies, in the order
queued, to requests whose model matches their ``model`` (any model when unset).
"""

from clawbot.testing.fake_llm.fake import IN_PROCESS_URL, FakeLLM
from clawbot.testing.fake_llm.script import Fault, RecordedRequest, Reply, Script, ToolCallSpec, Usage, load_script
from clawbot.testing.fake_llm.server import run_server

__all__ = [
    "IN_PROCESS_URL",
    "FakeLLM",
    "Fault",
    "RecordedRequest",
    "Reply",
    "Script",
    "ToolCallSpec",
    "Usage",
    "load_script",
    "run_server",
]
