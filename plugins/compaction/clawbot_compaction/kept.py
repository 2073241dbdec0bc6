"""The identifiers a summary left out, appended under who or what wrote them.

An identifier is anything a later turn needs word for word (:mod:`identifiers`), an inline
code span of a stranger's message or of a file included: so each is listed under the
source it was found in (``From User (owner):``, ``From Group member "Mallory" (id "667"),
not the owner:``, ``From a tool result of "read":``, ``From the previous summary:``) and
between backticks, never as a bare line that could read as someone's words. One said by
the owner is listed under the owner, wherever else it also appears; any other under where
it was found first. A later summary keeps the sources the previous one listed, except the
owner: a heading in a summary is text, and only the owner's own messages put an identifier
under the owner.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from clawbot.safetext import fold
from clawbot.types import Message

from clawbot_compaction.history import OWNER_TAGS, Entry, entry, shown
from clawbot_compaction.identifiers import identifiers

TITLE = "Identifiers kept verbatim (the summary above left them out), each under who or what wrote it, quoted:"
DIGEST_TITLE = "Identifiers kept verbatim, each under who or what wrote it, quoted:"
PREVIOUS_SUMMARY = "the previous summary"
#: identifiers looked for, at most
LIMIT = 200


def quote(value: str) -> str:
    """``value`` between backticks (none of the identifier patterns matches one; should one
    ever, it is shown as a quote mark, so the span cannot end early)."""
    return "`" + value.replace("`", "'") + "`"


def sources(messages: Sequence[Message], previous_summary: str | None = None) -> list[Entry]:
    """What the previous summary and ``messages`` say, each with who or what wrote it: where
    identifiers are looked for (a fence's random id is none)."""
    return [*carried(previous_summary), *(entry(m) for m in messages)]


def carried(previous_summary: str | None) -> list[Entry]:
    """The previous summary as sources: its text under the previous summary, and each group
    of identifiers it listed under its own source again, but the owner's under the previous
    summary."""
    if not previous_summary:
        return []
    lines = shown(previous_summary, owner=True).split("\n")
    title = max((index for index, line in enumerate(lines) if line in (TITLE, DIGEST_TITLE)), default=len(lines))
    out = [Entry("", "\n".join(lines[:title]), PREVIOUS_SUMMARY)]
    for line in lines[title + 1 :]:
        if line.startswith("From ") and line.endswith(":"):
            label = line.removeprefix("From ").removesuffix(":")
            owners = any(fold(tag) in fold(label) for tag in OWNER_TAGS)
            out.append(Entry("", "", PREVIOUS_SUMMARY if owners else label))
        elif line.startswith("- "):
            out[-1] = replace(out[-1], body=f"{out[-1].body}\n{line}")
    return out


def left_out(found_in: Sequence[Entry], summary: str) -> dict[str, Entry]:
    """The identifiers of ``found_in`` (:func:`sources`) that ``summary`` lacks word for word
    (a plain substring test), each with the source it is listed under, in order of
    appearance."""
    where: dict[str, Entry] = {}
    for source in found_in:
        for value in identifiers([source.body], limit=LIMIT):
            if value in summary:
                continue
            first = where.get(value)
            if first is None and len(where) >= LIMIT:
                continue
            if first is None or (source.owner and not first.owner):
                where[value] = source
    return where


def listing(where: dict[str, Entry], budget: int, title: str = TITLE) -> str:
    """``title`` and the identifiers of ``where`` (:func:`left_out`) grouped by source, within
    about ``budget`` characters (the rest counted); ``""`` when there are none."""
    if not where:
        return ""
    groups: dict[str, list[str]] = {}
    for value, source in where.items():
        groups.setdefault(source.source, []).append(value)
    out, used, listed, current = [title], len(title), 0, ""
    for source_label, values in groups.items():
        heading = f"From {source_label}:"
        for value in values:
            line = f"- {quote(value)}"
            cost = len(line) + 1 + (len(heading) + 1 if heading != current else 0)
            if used + cost > budget:
                out.append(f"- ... and {len(where) - listed} more")
                return "\n".join(out)
            if heading != current:
                out.append(heading)
                current = heading
            out.append(line)
            used += cost
            listed += 1
    return "\n".join(out)


__all__ = ["DIGEST_TITLE", "PREVIOUS_SUMMARY", "TITLE", "carried", "left_out", "listing", "quote", "sources"]
