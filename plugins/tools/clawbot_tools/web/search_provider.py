"""What a ``web_search`` provider implements, and the helpers every provider shares.

A provider (:mod:`.search_brave`, :mod:`.search_searxng`) turns a :class:`SearchQuery` into
one HTTP GET and the answer into a :class:`SearchPage`; :mod:`.search` does the request,
the retries, the secret scrubbing and the rendering for the model.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any, Protocol

import attrs

MAX_TITLE_CHARS = 200
MAX_SNIPPET_CHARS = 400


@attrs.frozen
class SearchQuery:
    """What the model asked for, validated."""

    query: str
    count: int
    country: str | None = None
    search_lang: str | None = None
    freshness: str | None = None


@attrs.frozen
class SearchHit:
    title: str
    url: str
    snippet: str
    age: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"title": self.title, "url": self.url, "snippet": self.snippet}
        if self.age:
            out["age"] = self.age
        return out


@attrs.frozen
class SearchPage:
    """A provider's answer, reduced to what the tool shows."""

    hits: tuple[SearchHit, ...]
    altered_query: str | None = None
    notes: tuple[str, ...] = ()


@attrs.frozen
class SearchRequest:
    url: str
    params: Mapping[str, str]
    headers: Mapping[str, str] = attrs.field(factory=dict, repr=False)  # may hold the key


class SearchFailed(Exception):
    """A search that got no usable answer; the message is safe to show (no secrets)."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.details = details


class SearchProvider(Protocol):
    name: str  # as in web_search_provider
    label: str  # as shown to the model: "Brave Search"

    def not_configured(self) -> str | None:
        """Why this provider cannot search yet (what to set), or ``None``."""

    def secrets(self) -> tuple[str, ...]:
        """Values to scrub from every text that leaves the module."""

    def build(self, query: SearchQuery) -> SearchRequest:
        """The HTTP GET for ``query`` (may raise :class:`SearchFailed` for unsupported filters)."""

    def parse(self, data: Any, query: SearchQuery) -> SearchPage:
        """The hits of a 200 answer; raises :class:`SearchFailed` if its shape is wrong."""

    def error_message(self, status: int, data: Any) -> str | None:
        """A provider-specific explanation of an error answer, or ``None`` for the generic one."""


# ------------------------------------------------------------------ helpers shared by providers

_TAG = re.compile(r"<[^>]{0,200}>")
_SPACE = re.compile(r"\s+")


def clean_text(value: Any, limit: int) -> str:
    """Provider text (may hold ``<strong>`` and entities) as one plain, bounded line."""
    if not isinstance(value, str):
        return ""
    text = _SPACE.sub(" ", html.unescape(_TAG.sub("", value))).strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def web_url(value: Any) -> str | None:
    """``value`` if it is an http(s) URL (anything else, e.g. ``javascript:``, is dropped)."""
    if not isinstance(value, str):
        return None
    url = value.strip()
    if not url.lower().startswith(("http://", "https://")) or any(c.isspace() for c in url):
        return None
    return url
