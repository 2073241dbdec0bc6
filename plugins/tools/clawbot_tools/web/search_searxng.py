"""The SearXNG provider of ``web_search``: a (usually self-hosted) instance's JSON API.

``GET <instance>/search?q=...&format=json``; the answer's ``results`` hold ``title``, ``url``,
``content`` and sometimes ``publishedDate``. The instance must list ``json`` under
``search.formats`` in its ``settings.yml``, otherwise it answers 403. SearXNG has no result
count parameter (the list is cut here), takes ``language`` (``en``, ``en-US``) instead of
country + language, and ``time_range`` (day, week, month, year) instead of freshness.
"""

from __future__ import annotations

from typing import Any

from clawbot_tools.web.search_provider import (
    MAX_SNIPPET_CHARS,
    MAX_TITLE_CHARS,
    SearchFailed,
    SearchHit,
    SearchPage,
    SearchQuery,
    SearchRequest,
    clean_text,
    web_url,
)

TIME_RANGES = {"pd": "day", "pw": "week", "pm": "month", "py": "year"}


class SearxngSearch:
    name = "searxng"
    label = "SearXNG"

    def __init__(self, base_url: str) -> None:
        base = base_url.strip().rstrip("/")
        self.endpoint = (base if base.endswith("/search") else base + "/search") if base else ""

    def __repr__(self) -> str:
        return "SearxngSearch()"

    def not_configured(self) -> str | None:
        if self.endpoint:
            return None
        return (
            "web_search is not configured: the search provider SearXNG needs the URL of your "
            "instance. Set web_search_base_url in [plugins.tools] of clawbot.toml (e.g. "
            '"http://localhost:8888") and enable the json format in the instance\'s settings.yml. '
            "Until then, use web_fetch on a URL you know."
        )

    def secrets(self) -> tuple[str, ...]:
        # Credentials embedded in the instance URL (https://user:password@host) stay private.
        netloc = self.endpoint.split("://", 1)[-1].split("/", 1)[0]
        userinfo = netloc.rpartition("@")[0]
        return tuple(p for p in (userinfo, *userinfo.split(":", 1)) if len(p) >= 4) if userinfo else ()

    def build(self, query: SearchQuery) -> SearchRequest:
        params = {"q": query.query, "format": "json"}
        if query.search_lang and query.country and query.country.lower() != "all":
            params["language"] = f"{query.search_lang.split('-')[0].lower()}-{query.country.upper()}"
        elif query.search_lang:
            params["language"] = query.search_lang.lower()
        if query.freshness:
            if query.freshness not in TIME_RANGES:
                raise SearchFailed(
                    f"{self.label} supports freshness pd, pw, pm or py only, not a date range ({query.freshness!r}); search again with one of those."
                )
            params["time_range"] = TIME_RANGES[query.freshness]
        return SearchRequest(self.endpoint, params)

    def parse(self, data: Any, query: SearchQuery) -> SearchPage:
        if not isinstance(data, dict) or not isinstance(data.get("results", []), list):
            raise SearchFailed(f"{self.label} answered with JSON of an unexpected shape (no results list)")
        hits = []
        for item in data.get("results", []):
            if not isinstance(item, dict) or (url := web_url(item.get("url"))) is None:
                continue
            hits.append(
                SearchHit(
                    title=clean_text(item.get("title"), MAX_TITLE_CHARS),
                    url=url,
                    snippet=clean_text(item.get("content"), MAX_SNIPPET_CHARS),
                    age=clean_text(item.get("publishedDate"), 40) or None,
                )
            )
            if len(hits) >= query.count:
                break
        notes = ()
        if query.country and not query.search_lang and query.country.lower() != "all":
            notes = ("(SearXNG filters by language, not country: pass search_lang too to narrow by region.)",)
        return SearchPage(tuple(hits), notes=notes)

    def error_message(self, status: int, data: Any) -> str | None:
        if status == 403:
            return (
                f"{self.label} refused the request (HTTP 403). Most often the instance does not allow "
                "the json format: add json to search.formats in its settings.yml."
            )
        return None
