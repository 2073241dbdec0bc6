"""The ``example_tool_text_stats`` tool: counts of a text the model wants measured."""

from __future__ import annotations

import re
from collections import Counter

from clawbot import Tool, ToolCall, ToolResult

from clawbot_example_tool.config import ExampleToolConfig

WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")

PARAMETERS = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "The text to measure."},
        "top": {
            "type": "integer",
            "minimum": 0,
            "description": "How many of the most frequent words to list (default: the configured top_words).",
        },
    },
    "required": ["text"],
    "additionalProperties": False,
}


def text_stats(text: str, *, top: int, case_sensitive: bool) -> dict:
    """Words, lines, characters and the ``top`` most frequent words of ``text``."""
    words = WORD.findall(text if case_sensitive else text.casefold())
    frequent = Counter(words).most_common(top) if top else []
    return {
        "words": len(words),
        "unique_words": len(set(words)),
        "lines": len(text.splitlines()),
        "characters": len(text),
        "top_words": [[word, count] for word, count in frequent],
    }


def text_stats_tool(settings: ExampleToolConfig) -> Tool:
    """The tool, bound to this plugin's validated settings."""

    async def handler(call: ToolCall) -> ToolResult:
        text = call.arguments.get("text")
        if not isinstance(text, str):
            return ToolResult.error("`text` must be a string: pass the text to measure.")
        top = call.arguments.get("top", settings.top_words)
        if not isinstance(top, int) or isinstance(top, bool) or top < 0:
            return ToolResult.error("`top` must be an integer of 0 or more.")
        stats = text_stats(text, top=top, case_sensitive=settings.case_sensitive)
        lines = [f"{stats['words']} words ({stats['unique_words']} distinct), {stats['lines']} lines, {stats['characters']} characters."]
        if stats["top_words"]:
            listed = ", ".join(f"{word} ({count})" for word, count in stats["top_words"])
            lines.append(f"Most frequent: {listed}.")
        return ToolResult.text("\n".join(lines), **stats)

    return Tool(
        name="example_tool_text_stats",
        description=("Count the words, distinct words, lines and characters of a text and list its most frequent words. Use it instead of counting by hand."),
        parameters=PARAMETERS,
        handler=handler,
        summary="Count words, lines and characters of a text; list its most frequent words",
        group="text",
        # It only computes: calls may run beside the other read-only calls of a reply. A tool
        # that writes files, runs commands or sends messages leaves this False (the default).
        concurrent=True,
    )
