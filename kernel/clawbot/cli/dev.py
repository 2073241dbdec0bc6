"""``clawbot dev``: tools for developing clawbot and its plugins."""

from __future__ import annotations

from pathlib import Path

import click

from clawbot.cli.output import echo

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


@click.group()
def dev() -> None:
    """Tools for developing clawbot and its plugins."""


@dev.command("fake-llm")
@click.option("--port", type=int, default=8765, show_default=True, help="Port to listen on (0 picks a free one).")
@click.option(
    "--script",
    "script_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSON or TOML script of replies and faults (see clawbot.testing.fake_llm).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind; loopback unless you say otherwise.")
def fake_llm(port: int, script_path: Path | None, host: str) -> None:
    """Serve a fake Anthropic / OpenAI API that answers from a script.

    Point an Anthropic client at the printed URL and an OpenAI client at URL/v1. Without a
    script every request is answered "ok". Stop with Ctrl-C.
    """
    from clawbot.testing.fake_llm import run_server

    if host not in _LOOPBACK:
        echo(f"warning: binding {host}; the fake LLM is reachable from other machines", err=True)

    def ready(url: str) -> None:
        echo(f"fake LLM listening on {url}")
        echo(f"  Anthropic base URL: {url}")
        echo(f"  OpenAI base URL:    {url}/v1")

    try:
        fake = run_server(port, script_path, host, on_ready=ready)
    except KeyboardInterrupt:
        return
    echo(f"fake LLM stopped after {len(fake.requests)} request(s)")


if __name__ == "__main__":
    dev()
