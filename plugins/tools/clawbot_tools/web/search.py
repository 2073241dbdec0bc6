"""``web_search``: declared now, honest about having no provider yet."""

from __future__ import annotations

from clawbot import ToolCall, ToolResult

NOT_CONFIGURED = (
    "web_search is not configured: no search provider is set up in this clawbot yet. "
    "Set a search provider (coming with the web stage). Meanwhile, use web_fetch on a URL you know."
)

WEB_SEARCH_PARAMETERS = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to search the web for."},
        "count": {
            "type": "integer",
            "description": "How many results to return (1-10, default 5).",
            "minimum": 1,
            "maximum": 10,
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


async def web_search(call: ToolCall) -> ToolResult:
    query = call.arguments.get("query")
    return ToolResult.error(
        NOT_CONFIGURED,
        configured=False,
        query=query if isinstance(query, str) else None,
    )
