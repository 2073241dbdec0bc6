"""Everything a clawbot command prints goes through here.

What commands show comes largely from places the model can write or a chat can fill: the
workspace (AGENTS.md, skill files and folder names), transcripts, replies, provider errors.
An escape sequence in any of it could retitle the terminal, write the clipboard (OSC 52),
plant a link or redraw a line; so every line is passed through
:func:`clawbot.safetext.visible` on its way out, which shows control and invisible
characters as ``\\uXXXX`` and leaves everything else as it was:

* :func:`echo` for plain lines (``click.echo``);
* :func:`echo_json` for JSON, where hidden characters become JSON escapes, so the output
  still decodes to exactly what was stored;
* :func:`console` for rich tables and colour: every string it renders (markup, table cells,
  titles) is made visible first, while rich's own colour codes stay.

Plugins reach these through :mod:`clawbot.commandkit`.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import click

from clawbot.safetext import visible

__all__ = ["console", "echo", "echo_json", "json_text"]


def echo(message: object = "", *, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` with control and invisible characters shown as ``\\uXXXX``."""
    click.echo(visible(str(message)), err=err, nl=nl)


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_text(value: Any, *, ensure_ascii: bool = False, indent: int | None = 2) -> str:
    """``value`` as JSON whose hidden characters are JSON escapes (it decodes to ``value``)."""
    text = json.dumps(value, indent=indent, ensure_ascii=ensure_ascii)
    if visible(text) == text:
        return text
    # Outside strings json.dumps writes only ASCII punctuation, so every hidden character
    # sits inside a string, where a JSON escape means the same character.
    return "".join(_json_escape(char) if visible(char) != char else char for char in text)


def echo_json(value: Any, *, ensure_ascii: bool = False, err: bool = False, indent: int | None = 2) -> None:
    """``indent=None``: the whole value on one line (one answer per line, for scripts)."""
    click.echo(json_text(value, ensure_ascii=ensure_ascii, indent=indent), err=err)


@functools.cache
def _console_class() -> type:
    # deferred: rich loads only when something is printed with it
    from rich.console import Console

    class VisibleConsole(Console):
        """A rich console that shows control and invisible characters in what it renders."""

        def render_str(self, text: str, **kwargs: Any) -> Any:
            return super().render_str(visible(text), **kwargs)

    return VisibleConsole


def console(**kwargs: Any) -> Any:
    """A ``rich.console.Console`` (same arguments) that renders every string visible."""
    return _console_class()(**kwargs)
