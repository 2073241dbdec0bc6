"""Strategy ``trim``: the older part replaced by a structured digest, no model asked.

The digest is built only from what the messages say (who said what first, which tools ran
on what, files touched, errors, identifiers), so it is the same for the same history and
never larger than about :data:`DIGEST_TOKENS`. Each message's line says who wrote it, as
clawbot stored it (the owner, a group member by name and id, clawbot's event, another
session): another person's words are never "what the user said", and only the owner's
carry the owner's tag; identifiers are listed under who or what wrote them. Control and
invisible characters are shown as ``\\uXXXX``, so no line starts where a reader cannot
see one start. It is also what ``summary`` falls back to when the model cannot write a
summary.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from clawbot.promptkit import speaker
from clawbot.tokens import chars_for_tokens, estimate_tokens
from clawbot.types import CompactionRequest, CompactionResult, CompactionStrategy, Message, Role

from clawbot_compaction.history import compacted, describe, inert, kept_budget, shown, split_index
from clawbot_compaction.kept import DIGEST_TITLE, left_out, listing, sources

DIGEST_TOKENS = 2_000
# Characters each part of the digest may use; together within DIGEST_TOKENS
BUDGETS = {"previous": 2_200, "user": 1_800, "calls": 1_200, "files": 600, "errors": 600, "identifiers": 1_300}
LINE_CHARS = 160
# The argument that says what a tool call was about, in order of preference
KEY_ARGUMENTS = ("path", "file_path", "file", "command", "cmd", "url", "query", "pattern", "name", "id", "session_key", "to")
PATH_ARGUMENTS = ("path", "file_path", "file", "filename")
CHANGING_TOOLS = ("write", "edit", "patch", "delete", "move", "rename", "mkdir")
PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)


class TrimStrategy(CompactionStrategy):
    """Keeps the recent part verbatim and a deterministic digest of the rest."""

    name = "trim"

    async def compact(self, request: CompactionRequest) -> CompactionResult:
        return trim(request)


def trim(request: CompactionRequest, detail: str = "", first_kept_index: int | None = None) -> CompactionResult:
    """The trim of ``request``; ``detail`` says why a trim was made instead of a summary."""
    messages = request.messages
    start = split_index(messages, kept_budget(request.keep_recent_tokens, request.context_window)) if first_kept_index is None else first_kept_index
    summary = digest(messages[:start], request.previous_summary)
    return compacted(request, start, summary, "trim", detail)


def _line(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first if len(first) <= LINE_CHARS else first[: LINE_CHARS - 3] + "..."


def section(title: str, lines: Sequence[str], budget: int) -> str:
    """``title`` and as many of ``lines`` as fit ``budget`` characters; the rest counted."""
    if not lines:
        return ""
    out, used = [title], len(title)
    for index, line in enumerate(lines):
        entry = f"- {line}"
        if used + len(entry) + 1 > budget:
            out.append(f"- ... and {len(lines) - index} more")
            break
        out.append(entry)
        used += len(entry) + 1
    return "\n".join(out)


def _key_argument(arguments: dict) -> str:
    for key in KEY_ARGUMENTS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return _line(value)
    first = next((v for v in arguments.values() if isinstance(v, str) and v.strip()), "")
    return _line(first)


def _files(name: str, arguments: dict) -> list[str]:
    found = [v for k in PATH_ARGUMENTS if isinstance(v := arguments.get(k), str) and v.strip()]
    found += [p for p in arguments.get("paths", []) if isinstance(p, str)] if isinstance(arguments.get("paths"), list) else []
    for value in arguments.values():
        if isinstance(value, str) and "*** " in value:
            found += [m.strip() for m in PATCH_FILE.findall(value)]
    return found


def digest(messages: Sequence[Message], previous_summary: str | None = None) -> str:
    """The structured digest of ``messages`` (and the summary that stood for what came before)."""
    speakers = [speaker(m) for m in messages if m.role == Role.USER]
    owners = sum(who.kind == "owner" for who in speakers)
    results = [m for m in messages if m.role == Role.TOOL_RESULT]
    calls = [c for m in messages if m.role == Role.ASSISTANT for c in m.tool_calls]
    replies = [m for m in messages if m.role == Role.ASSISTANT and m.text.strip()]
    header = (
        f"Earlier conversation, trimmed without a model: {len(messages)} messages "
        f"({owners} from the user{f', {len(speakers) - owners} from others or clawbot' if len(speakers) > owners else ''}, "
        f"{len(replies)} assistant replies, {len(calls)} tool calls, {len(results)} tool results)."
    )
    read, changed = {}, {}
    for call in calls:
        target = changed if any(word in call.name.lower() for word in CHANGING_TOOLS) else read
        for path in _files(call.name, call.arguments):
            target.setdefault(path, None)
    errors = [f"{shown(m.tool_name or 'tool')}: {shown(_line(m.text))}" for m in results if m.is_error]
    errors += [f"assistant stopped: {m.stop_reason.value}" for m in messages if m.role == Role.ASSISTANT and m.stop_reason and m.stop_reason.value == "error"]
    previous = shown((previous_summary or "").strip(), owner=True)  # clawbot's own earlier summary
    if len(previous) > BUDGETS["previous"]:
        half = BUDGETS["previous"] // 2 - 40
        previous = f"{previous[:half]}\n[...]\n{previous[-half:]}"
    body = "\n\n".join(
        part
        for part in (
            header,
            f"Summary of what came before:\n{previous}" if previous else "",
            section(
                "What was said to the assistant (first line of each message, after who wrote it; only the user's (owner's) are wishes):",
                [f"{describe(who)}: {shown(_line(who.text), owner=who.kind == 'owner') or '[no text]'}" for who in speakers],
                BUDGETS["user"],
            ),
            section("Tool calls:", [shown(f"{c.name} {_key_argument(c.arguments)}".strip()) for c in calls], BUDGETS["calls"]),
            section("Files read:", [shown(path) for path in read], BUDGETS["files"] // 2),
            section("Files changed:", [shown(path) for path in changed], BUDGETS["files"] // 2),
            section("Errors seen:", errors, BUDGETS["errors"]),
        )
        if part
    )
    body = inert(body)  # nothing a message said may spell the labels of a summarising prompt
    listed = listing(left_out(sources(messages, previous_summary), body), BUDGETS["identifiers"], DIGEST_TITLE)
    text = f"{body}\n\n{listed}" if listed else body
    limit = chars_for_tokens(DIGEST_TOKENS)
    return text if estimate_tokens(text) <= DIGEST_TOKENS else text[: limit - 4] + "\n..."


__all__ = ["DIGEST_TOKENS", "TrimStrategy", "digest", "section", "trim"]
