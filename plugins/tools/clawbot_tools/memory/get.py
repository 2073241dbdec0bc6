"""``memory_get``: lines of one memory file, after ``memory_search`` pointed at them.

The answer keeps the memory docs' ``path`` and ``text`` and says which lines it holds
(``from``, ``to``, ``total_lines``), and what remains when the text stops before the end, so
the model can ask for the next lines instead of guessing.
"""

from __future__ import annotations

from typing import Any

from clawbot import MemoryPathError, ServiceUnavailable, Tool, ToolCall, ToolResult

from clawbot_tools.calls import schema, services_of
from clawbot_tools.memory.common import GROUP, ArgumentProblem, answer, int_arg, shown, text_arg

MAX_LINES = 2000
MAX_CHARS = 30_000  # at a line boundary; the rest is one more call away


def _cut(text: str, start: int, end: int) -> tuple[str, int]:
    """``text`` (lines ``start``..``end``) cut to :data:`MAX_CHARS` at a line end, and the last line kept."""
    if len(text) <= MAX_CHARS:
        return text, end
    kept = text[:MAX_CHARS]
    if "\n" in kept:
        kept = kept[: kept.rindex("\n")]
    return kept, max(start, start + kept.count("\n"))


async def memory_get(call: ToolCall) -> ToolResult:
    services = services_of(call)
    if isinstance(services, ToolResult):
        return services
    try:
        path = text_arg(call.arguments, "path")
        first = int_arg(call.arguments, "from", minimum=1, maximum=10**9) or 1
        lines = int_arg(call.arguments, "lines", minimum=1, maximum=MAX_LINES)
    except ArgumentProblem as exc:
        example = '{"path": "memory/2026-01-20.md", "from": 45, "lines": 15}'
        return ToolResult.error(f"memory_get: {exc}. Call it again with a path from memory_search, e.g. {example}.")
    try:
        excerpt = await services.memory_get(path, from_line=first, lines=lines)
    except MemoryPathError as exc:
        return ToolResult.error(f"memory_get: {shown(str(exc))}. It reads only memory files (MEMORY.md, memory/*.md); use a path from memory_search.")
    except ServiceUnavailable as exc:
        return ToolResult.error(f"memory_get: {exc}.")
    payload: dict[str, Any] = {"path": shown(excerpt.path), "from": excerpt.start_line}
    if excerpt.end_line < excerpt.start_line:
        payload.update(to=None, total_lines=excerpt.total_lines, text="")
        payload["notice"] = f"the file has {excerpt.total_lines} lines; nothing from line {excerpt.start_line} on"
        return answer(payload, path=excerpt.path, lines=0)
    text, last = _cut(excerpt.text, excerpt.start_line, excerpt.end_line)
    payload.update(to=last, total_lines=excerpt.total_lines, text=shown(text))
    if last < excerpt.total_lines:
        payload["more"] = f"lines {last + 1}-{excerpt.total_lines} follow; call memory_get with from={last + 1} to read on"
    return answer(payload, path=excerpt.path, lines=last - excerpt.start_line + 1)


def make_tool() -> Tool:
    return Tool(
        name="memory_get",
        description=(
            "Read specific lines of a memory file (MEMORY.md or memory/*.md) after memory_search: path as the "
            "search gave it, from = first line (1-based), lines = how many. Returns JSON with path, from, to and text."
        ),
        parameters=schema(
            {
                "path": {"type": "string", "minLength": 1, "description": "A path from memory_search, e.g. memory/2026-01-20.md."},
                "from": {"type": "integer", "minimum": 1, "description": "First line to read (1-based). Default 1."},
                "lines": {"type": "integer", "minimum": 1, "maximum": MAX_LINES, "description": "How many lines. Default: the rest of the file."},
            },
            ["path"],
        ),
        handler=memory_get,
        summary="Read lines of a memory file (MEMORY.md, memory/*.md)",
        group=GROUP,
        profiles=("coding",),
        order=610,
        needs_memory=True,  # only passes calls on to the active memory provider
        concurrent=True,  # reads a file only
    )
