"""``clawbot dev``: tools for developing clawbot and its plugins, part of the test kit (the
fake LLM server needs the ``testing`` extras); the CLI loads it only when ``dev`` is run."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import click

from clawbot.commandkit import echo

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def _cannot_listen(host: str, port: int) -> OSError | None:
    """Why ``host:port`` cannot be listened on, if it cannot (tried as the server will bind it)."""
    if port == 0:
        return None
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        family, _type, _proto, _name, address = infos[0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        return exc
    return None


@click.group()
def dev() -> None:
    """Tools for developing clawbot and its plugins."""


@dev.command("fake-llm")
@click.option("--port", type=int, default=8765, show_default=True, help="Port to listen on (0 picks a free one).")
@click.option(
    "--script",
    "script_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSON (.json) or TOML (any other suffix) file of replies and faults; format below.",
)
@click.option(
    "--record",
    "record_path",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Append every request received to FILE, one JSON object a line (API keys and other credential headers redacted).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind; loopback unless you say otherwise.")
def fake_llm(port: int, script_path: Path | None, record_path: Path | None, host: str) -> None:
    """Serve a fake Anthropic / OpenAI API that answers from a script.

    Point an Anthropic client at the printed URL and an OpenAI client at URL/v1. Each
    request takes the next reply, rendered in the API it arrived on; once they run out the
    answer is "ok" (default_text), or HTTP 500 with strict = true. Stop with Ctrl-C.

    \b
    Script (TOML; JSON has the same keys):
      default_text = "ok"         # the answer once the replies run out
      strict = false              # true: HTTP 500 instead
      [[replies]]                 # one model turn (in JSON a bare string is a text reply)
      tool_calls = [{ name = "exec", arguments = { command = "ls" } }]
      [[replies]]
      text = "Here are your files."
      usage = { input_tokens = 120, output_tokens = 30 }   # optional
      [[faults]]                  # served before the next reply
      kind = "rate_limit"
      times = 1
      retry_after = 2

    \b
    Reply keys: text, thinking, tool_calls (name, arguments, id), usage, stop_reason
    (end_turn, tool_use, max_tokens, stop_sequence, refusal), model.
    Fault kinds: rate_limit, server_error, overloaded, auth, billing, context_length,
    unknown_model, dropped_stream, broken_stream_json, stalled_stream, slow; options:
    times, model, status, retry_after, message, delay, after_events.
    """
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from clawbot.testing.fake_llm import FakeLLM, run_server
    from clawbot.testing.fake_llm.record import RequestRecorder

    if host not in _LOOPBACK:
        echo(f"warning: binding {host}; the fake LLM is reachable from other machines", err=True)
    try:
        fake = FakeLLM.from_script(script_path) if script_path is not None else FakeLLM()
    except (OSError, ValueError) as exc:
        echo(f"error: --script: {exc}", err=True)
        sys.exit(2)
    recorder = None
    if record_path is not None:
        try:
            recorder = RequestRecorder(record_path)
        except OSError as exc:
            echo(f"error: --record {record_path}: {exc.strerror or exc}", err=True)
            sys.exit(2)
        fake.on_request = recorder

    def ready(url: str) -> None:
        echo(f"fake LLM listening on {url}")
        echo(f"  Anthropic base URL: {url}")
        echo(f"  OpenAI base URL:    {url}/v1")
        if recorder is not None:
            echo(f"  recording requests to {recorder.path}")

    taken = _cannot_listen(host, port)
    if taken is not None:  # the server would log it, then exit from deep inside with a traceback
        echo(f"error: cannot listen on {host}:{port}: {taken.strerror or taken} (--port 0 picks a free port)", err=True)
        sys.exit(1)
    try:
        run_server(port, host=host, fake=fake, on_ready=ready)
    except KeyboardInterrupt:
        pass  # Ctrl-C is how it stops
    except (OSError, SystemExit) as exc:  # taken in the meantime
        echo(f"error: the fake LLM could not listen on {host}:{port} ({exc})", err=True)
        sys.exit(1)
    finally:
        if recorder is not None:
            recorder.close()
    echo(f"fake LLM stopped after {len(fake.requests)} request(s)")


if __name__ == "__main__":
    dev()
