"""The ``<tool_call>`` blocks a reply makes, as opposed to those it only shows.

A model that explains the calling syntax, or quotes a web page or a file that contains it,
must not run a tool by doing so. A block counts as a call only when it stands in the
answer itself: not in a fenced code block (``` or ~~~, unclosed: to the end), inline code,
a ``>`` quote (with the lines that continue it, up to a blank line, as Markdown reads it)
or reasoning written as text (``<think>``, ``<thinking>``, ``<reasoning>``; unclosed: to
the end; a closing tag without an opening one: everything before it). When in doubt the
text is treated as quoted: a call shown by mistake costs the model a retry, a quote run
by mistake costs whatever the tool does.

The reply is read once from left to right, so whatever starts first wins: a call's JSON
may hold backticks or ``</tool_call>`` inside its strings, and a code span inside a quote
is part of the quote. The JSON is measured without decoding it (strings skipped, brackets
counted), so arguments nested too deep are refused before anything recursive sees them,
and hostile text costs time in proportion to its length.
"""

from __future__ import annotations

import bisect
import json
import re
import secrets

from clawbot.providerkit import JSON_STRING_PATTERN, MAX_ARGUMENT_DEPTH, strict_json, value_problem
from clawbot.types import TOOL_CALL_TAGS, ToolCallBlock

OPEN, CLOSE = TOOL_CALL_TAGS
_THINKING_TAGS = "think|thinking|reasoning"

# What can start quoted text, or a call, in the order it is tried at one position.
_NEXT = re.compile(
    rf"""
    (?P<fence>^[ \t]*(?:(?P<ticks_fence>`{{3,}})[^`\n]*|(?P<tildes_fence>~{{3,}})[^\n]*)$)
  | (?P<quote>^[ \t]*>)
  | <(?P<thinking>{_THINKING_TAGS})(?:\s[^>]*)?>
  | (?P<ticks>`+)
  | (?P<call>(?-i:{re.escape(OPEN)}))
    """,
    re.MULTILINE | re.IGNORECASE | re.VERBOSE,
)
_FIRST_THINKING_TAG = re.compile(rf"<(/?)(?:{_THINKING_TAGS})(?:\s[^>]*)?>", re.IGNORECASE)
_BLANK_LINE = re.compile(r"\n[ \t]*(?:\n|\Z)")
_CALL_JSON_TOKEN = re.compile(JSON_STRING_PATTERN + r"|[\[\]{}]|" + re.escape(CLOSE), re.DOTALL)
_SPACE = re.compile(r"\s*")
_TICK_RUN = re.compile(r"`+")
_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')


def _skip_space(text: str, pos: int) -> int:
    """Where the whitespace starting at ``pos`` ends."""
    match = _SPACE.match(text, pos)
    return match.end() if match else pos  # ``\s*`` matches everywhere; the fallback is for the type checker


def find_calls(text: str) -> tuple[str, list[ToolCallBlock]]:
    """(the text without the calls it makes, those calls in order)."""
    scanner = _Scanner(text)
    scanner.run()
    prose = "".join(scanner.prose) + text[scanner.copied :]
    return prose, scanner.calls


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.calls: list[ToolCallBlock] = []
        self.prose: list[str] = []
        self.copied = 0  # text before this index is in prose (or was a call)
        self.json_scan_ran_out = False
        self.tick_runs: dict[int, dict[int, list[int]]] = {}  # paragraph end -> run length -> starts

    def run(self) -> None:
        text = self.text
        position = _after_orphan_thinking_close(text)
        while (found := _NEXT.search(text, position)) is not None:
            kind = found.lastgroup
            if kind == "fence":
                position = _fence_end(text, found)
            elif kind == "quote":
                blank = _BLANK_LINE.search(text, found.end())
                position = blank.start() + 1 if blank else len(text)
            elif kind == "thinking":
                close = re.compile(rf"</{found.group('thinking')}\s*>", re.IGNORECASE).search(text, found.end())
                position = close.end() if close else len(text)
            elif kind == "ticks":
                position = self._code_span_end(found)
            else:
                end = self._call(found.start(), found.end())
                if end is None:  # never closed: no later block can close either
                    return
                position = end

    def _code_span_end(self, opening: re.Match[str]) -> int:
        """After the code span a run of backticks opens; just after the run when no run of the
        same length closes it (a lone backtick is literal; a span never crosses a blank line)."""
        blank = _BLANK_LINE.search(self.text, opening.end())
        limit = blank.start() if blank else len(self.text)
        runs = self.tick_runs.get(limit)
        if runs is None:  # each paragraph's runs are listed once: hostile text stays linear
            runs = self.tick_runs[limit] = {}
            for run in _TICK_RUN.finditer(self.text, opening.start(), limit):
                runs.setdefault(len(run.group()), []).append(run.start())
        length = len(opening.group())
        starts = runs.get(length, [])
        index = bisect.bisect_left(starts, opening.end())
        return starts[index] + length if index < len(starts) else opening.end()

    def _call(self, start: int, body: int) -> int | None:
        """Record the call whose ``<tool_call>`` spans ``start:body``; where it ends (``None``: never closed)."""
        text = self.text
        payload_start = _skip_space(text, body)
        measured = None
        if text.startswith("{", payload_start) and not self.json_scan_ran_out:
            measured = self._measure(payload_start)
        if measured is None:  # not JSON as far as it goes: up to the first closing tag
            close = text.find(CLOSE, body)
            measured = (text[body:close].strip(), close + len(CLOSE), 0) if close >= 0 else None
        if measured is None or measured[1] < 0:
            return None
        payload, end, depth = measured
        self.prose.append(text[self.copied : start])
        self.copied = end
        self.calls.append(_call_from(payload, depth))
        return end

    def _measure(self, start: int) -> tuple[str, int, int] | None:
        """(payload, end of the call or -1 if it never closes, greatest depth) for the JSON
        object opening at ``start``; ``None`` when the text runs out inside it."""
        text = self.text
        depth = deepest = 0
        for token in _CALL_JSON_TOKEN.finditer(text, start):
            value = token.group()
            if value in "[{":
                depth += 1
                deepest = max(deepest, depth)
            elif value in "]}":
                depth -= 1
                if depth == 0:
                    after = _skip_space(text, token.end())
                    if text.startswith(CLOSE, after):
                        return text[start : token.end()], after + len(CLOSE), deepest
                    close = text.find(CLOSE, after)  # junk after the object: malformed, up to the tag
                    return text[start:close].strip(), (close + len(CLOSE) if close >= 0 else -1), deepest
            elif value == CLOSE:  # outside any string while the object is open: malformed
                return text[start : token.start()].strip(), token.end(), deepest
        self.json_scan_ran_out = True  # a later block could only run out again: stop measuring
        return None


def _call_from(payload: str, depth: int) -> ToolCallBlock:
    """The call a block's payload describes; what cannot be used is kept raw for the loop to answer."""
    call_id = f"call_{secrets.token_hex(8)}"
    if depth <= MAX_ARGUMENT_DEPTH + 1:  # the payload object wraps the arguments: one level more
        try:
            value = strict_json(payload)
        except ValueError:  # NaN and Infinity included: kept raw, answered with an error
            value = None
        if isinstance(value, dict):
            name, arguments = value.get("name"), value.get("arguments", {})
            if not isinstance(name, str):
                return ToolCallBlock(call_id, "", {}, raw_arguments=payload)
            if isinstance(arguments, dict) and value_problem(arguments) is None:
                return ToolCallBlock(call_id, name, arguments)
            return ToolCallBlock(call_id, name, {}, raw_arguments=json.dumps(arguments, ensure_ascii=False))
    match = _NAME.search(payload)
    return ToolCallBlock(call_id, match.group(1) if match else "", {}, raw_arguments=payload)


def _after_orphan_thinking_close(text: str) -> int:
    """Where the answer starts: after a closing thinking tag that no opening one precedes
    (some servers strip the opening tag from the reply)."""
    first = _FIRST_THINKING_TAG.search(text)
    return first.end() if first is not None and first.group(1) else 0


def _fence_end(text: str, opening: re.Match[str]) -> int:
    run = opening.group("ticks_fence") or opening.group("tildes_fence")
    closing = re.compile(rf"^[ \t]*{re.escape(run[0])}{{{len(run)},}}[ \t]*$", re.MULTILINE)
    found = closing.search(text, opening.end())
    return found.end() if found else len(text)
