"""The Brave Search API provider of ``web_search``.

``GET <endpoint>?q=...&count=...`` with the key in the ``X-Subscription-Token`` header; the
answer's ``web.results`` hold ``title``, ``url``, ``description`` (with ``<strong>`` marks)
and ``age``. Errors come as ``{"type": "ErrorResponse", "error": {"code", "detail", ...}}``;
an unknown or expired key is 401, or 422 with a ``SUBSCRIPTION_TOKEN_INVALID`` code.
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

DEFAULT_ENDPOINT = "https://api.search.brave.com/res/v1/web/search"
KEY_ENV = "BRAVE_API_KEY"
KEY_HELP = f"Set the {KEY_ENV} environment variable (or web_search_api_key in [plugins.tools] of clawbot.toml); get a key at https://brave.com/search/api/"


class BraveSearch:
    name = "brave"
    label = "Brave Search"

    def __init__(self, api_key: str, endpoint: str = "") -> None:
        self._api_key = api_key.strip()
        self.endpoint = endpoint or DEFAULT_ENDPOINT

    def __repr__(self) -> str:  # never the key
        return f"BraveSearch(endpoint={self.endpoint!r}, key={'set' if self._api_key else 'missing'})"

    def not_configured(self) -> str | None:
        if self._api_key:
            return None
        return f"web_search is not configured: the search provider Brave Search needs an API key. {KEY_HELP}. Until then, use web_fetch on a URL you know."

    def secrets(self) -> tuple[str, ...]:
        return (self._api_key,)

    def build(self, query: SearchQuery) -> SearchRequest:
        params = {"q": query.query, "count": str(query.count)}
        if query.country:
            params["country"] = query.country.upper() if query.country.lower() != "all" else "ALL"
        if query.search_lang:
            params["search_lang"] = query.search_lang.lower()
        if query.freshness:
            params["freshness"] = query.freshness
        return SearchRequest(self.endpoint, params, {"X-Subscription-Token": self._api_key})

    def parse(self, data: Any, query: SearchQuery) -> SearchPage:
        if not isinstance(data, dict):
            raise SearchFailed(f"{self.label} answered with JSON of an unexpected shape (not an object)")
        web = data.get("web")
        if web is None:  # no web results at all (e.g. nothing matched)
            results: list[Any] = []
        elif isinstance(web, dict) and isinstance(web.get("results", []), list):
            results = web.get("results", [])
        else:
            raise SearchFailed(f"{self.label} answered with JSON of an unexpected shape (web.results is not a list)")
        hits = []
        for item in results:
            if not isinstance(item, dict) or (url := web_url(item.get("url"))) is None:
                continue
            age = clean_text(item.get("age"), 40) or None
            hits.append(
                SearchHit(
                    title=clean_text(item.get("title"), MAX_TITLE_CHARS),
                    url=url,
                    snippet=clean_text(item.get("description"), MAX_SNIPPET_CHARS),
                    age=age,
                )
            )
        altered = None
        info = data.get("query")
        if isinstance(info, dict) and isinstance(info.get("altered"), str) and info["altered"].strip():
            altered = clean_text(info["altered"], 400)
        return SearchPage(tuple(hits), altered_query=altered)

    def error_message(self, status: int, data: Any) -> str | None:
        error = data.get("error") if isinstance(data, dict) else None
        code = str(error.get("code", "")) if isinstance(error, dict) else ""
        detail = clean_text(error.get("detail"), 300) if isinstance(error, dict) else ""
        if status in (401, 403) or "TOKEN" in code.upper() or "SUBSCRIPTION" in code.upper():
            reason = f" ({code})" if code else ""
            return f"{self.label} rejected the API key (HTTP {status}){reason}. Check {KEY_ENV} / web_search_api_key: {KEY_HELP}."
        if status == 429:
            return detail or None
        if status >= 500:
            return f"{self.label} had a server error (HTTP {status}). Try again later."
        if detail or code:
            problems = _validation_problems(error)
            return f"{self.label} refused the request (HTTP {status}, {code or 'error'}): {detail}{problems}"
        return None


def _validation_problems(error: Any) -> str:
    meta = error.get("meta") if isinstance(error, dict) else None
    items = meta.get("errors") if isinstance(meta, dict) else None
    if not isinstance(items, list):
        return ""
    found = []
    for item in items[:3]:
        if not isinstance(item, dict):
            continue
        loc = item.get("loc")
        where = ".".join(str(p) for p in loc) if isinstance(loc, list) else ""
        found.append(f"{where}: {clean_text(item.get('msg'), 150)}" if where else clean_text(item.get("msg"), 150))
    return (" (" + "; ".join(found) + ")") if found else ""
