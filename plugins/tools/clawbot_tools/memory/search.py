"""``memory_search``: the recall step, run before answering about anything in the past.

The answer is the shape the memory docs promise: ``{"results": [{"path", "startLine",
"endLine", "score", "snippet", "source"}], "provider", "model"}``, plus ``mode`` (how this
query searched) and a ``notice`` when that is less than configured (an embedder that failed
leaves keyword search, and the model should know its recall is weaker).
"""

from __future__ import annotations

from typing import Any

from clawbot import MemoryHit, ServiceUnavailable, Tool, ToolCall, ToolResult

from clawbot_tools.calls import schema, services_of
from clawbot_tools.memory.common import GROUP, ArgumentProblem, answer, int_arg, score_arg, shown, text_arg

MAX_RESULTS = 50

DESCRIPTION = (
    "Mandatory recall step: before answering anything about prior work, decisions, dates, people, preferences "
    "or todos, search MEMORY.md and memory/*.md by meaning and by exact words. Returns JSON: results with "
    "path, startLine, endLine, score and snippet, best first. Then use memory_get to read the lines you need."
)


def _hit(hit: MemoryHit) -> dict[str, Any]:
    return {
        "path": shown(hit.path),
        "startLine": hit.start_line,
        "endLine": hit.end_line,
        "score": round(hit.score, 4),
        "snippet": shown(hit.snippet),
        "source": hit.source,
    }


async def memory_search(call: ToolCall) -> ToolResult:
    services = services_of(call)
    if isinstance(services, ToolResult):
        return services
    try:
        query = text_arg(call.arguments, "query")
        max_results = int_arg(call.arguments, "max_results", minimum=1, maximum=MAX_RESULTS)
        min_score = score_arg(call.arguments, "min_score")
    except ArgumentProblem as exc:
        return ToolResult.error(f'memory_search: {exc}. Call it again with a query such as "what did we decide about the API?".')
    try:
        found = await services.memory_search(query, max_results=max_results, min_score=min_score)
    except ServiceUnavailable as exc:
        return ToolResult.error(f"memory_search: {exc}.")
    payload: dict[str, Any] = {
        "results": [_hit(hit) for hit in found.hits],
        "provider": found.provider,
        "model": found.model,
        "mode": found.mode,
    }
    if found.notice:
        payload["notice"] = shown(found.notice)
    return answer(payload, count=len(found.hits), mode=found.mode)


def make_tool() -> Tool:
    return Tool(
        name="memory_search",
        description=DESCRIPTION,
        parameters=schema(
            {
                "query": {"type": "string", "minLength": 1, "description": "What to recall, in words (a question works)."},
                "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "description": "Most results to return. Default: the memory setting."},
                "min_score": {"type": "number", "minimum": 0, "maximum": 1, "description": "Leave out results scoring below this. Default: the memory setting"},
            },
            ["query"],
        ),
        handler=memory_search,
        summary="Search long-term memory (MEMORY.md, memory/*.md) before answering about the past",
        group=GROUP,
        profiles=("coding",),
        order=600,
        needs_memory=True,  # only passes calls on to the active memory provider
        concurrent=True,  # reads the index only
    )
