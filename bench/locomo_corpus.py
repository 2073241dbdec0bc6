"""LoCoMo conversations as an agent's Markdown memory, and the chunks a search ranks.

Each conversation becomes one workspace: every session is written to the memory file of its
day, ``memory/YYYY-MM-DD.md`` (a second session on the same day is appended to the same file
under its own heading, as an agent appends to today's file). Every turn is one line, so an
evidence turn is found when its line lies inside a returned chunk's line range.

The chunker here mirrors the plugin's rules (lines, ~N tokens at four characters a token,
overlap carried back in whole lines, a heading never left at the end of a chunk, optionally
a new chunk at every heading); the benchmark can be pointed at the engine's chunker instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

EVIDENCE_RE = re.compile(r"D:?(\d+):(\d+)")


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]  # dia ids, "D<session>:<turn>"


@dataclass
class Conversation:
    sample_id: str
    sessions: list[tuple[datetime, list[dict]]]  # (start, turns), in order
    questions: list[Question]


@dataclass(frozen=True)
class Layout:
    """How a session is written as Markdown."""

    captions: bool = True  # a shared photo is written as "[shares a photo: <caption>]"
    blank_lines: bool = False  # a blank line between turns (Markdown paragraphs)
    session_heading: str = "## {time}, conversation between {a} and {b}"  # under "# YYYY-MM-DD"
    date_words: bool = False  # the file's heading also says the day in words: "# 2023-05-08 (Monday 8 May 2023)"


@dataclass(frozen=True)
class Chunk:
    path: str
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str
    index_text: str = ""  # what the index sees ("" = text)


@dataclass
class Workspace:
    files: dict[str, str] = field(default_factory=dict)  # relative path -> Markdown
    turn_lines: dict[str, tuple[str, int]] = field(default_factory=dict)  # dia id -> (path, line)


def load_locomo(path: Path) -> list[Conversation]:
    out = []
    for raw in json.loads(path.read_text(encoding="utf-8")):
        conv = raw["conversation"]
        numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
        sessions = [(datetime.strptime(conv[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y"), conv[f"session_{n}"]) for n in numbers]
        questions = []
        for qa in raw["qa"]:
            ids = tuple(dict.fromkeys(f"D{s}:{t}" for e in qa.get("evidence", []) for s, t in EVIDENCE_RE.findall(e)))
            if ids:
                questions.append(Question(qa["question"], int(qa["category"]), ids))
        out.append(Conversation(raw["sample_id"], sessions, questions))
    return out


def turn_line(turn: dict, layout: Layout) -> str:
    text = " ".join(str(turn.get("text", "")).split())
    if layout.captions and turn.get("blip_caption"):
        text = f"{text} [shares a photo: {turn['blip_caption']}]".strip()
    return f"{turn['speaker']}: {text}"


def write_workspace(conv: Conversation, layout: Layout) -> Workspace:
    """The conversation as dated memory files (kept in memory; ``materialise`` writes them)."""
    ws = Workspace()
    lines_by_path: dict[str, list[str]] = {}
    for start, turns in conv.sessions:
        path = f"memory/{start:%Y-%m-%d}.md"
        title = f"# {start:%Y-%m-%d}" + (f" ({start:%A} {start.day} {start:%B %Y})" if layout.date_words else "")
        lines = lines_by_path.setdefault(path, [title])
        speakers = list(dict.fromkeys(t["speaker"] for t in turns)) + ["?", "?"]
        lines += ["", layout.session_heading.format(time=f"{start:%H:%M}", a=speakers[0], b=speakers[1]), ""]
        for i, turn in enumerate(turns):
            if layout.blank_lines and i:
                lines.append("")
            lines.append(turn_line(turn, layout))
            ws.turn_lines[turn["dia_id"]] = (path, len(lines))
    ws.files = {p: "\n".join(ls) + "\n" for p, ls in lines_by_path.items()}
    return ws


def materialise(ws: Workspace, root: Path) -> None:
    for rel, text in ws.files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def _tokens(line: str) -> int:
    return -(-(len(line) + 1) // 4)  # the kernel's estimate: four characters a token (+ newline)


def chunk_markdown(
    path: str, text: str, *, chunk_tokens: int = 400, overlap: int = 80, heading_breaks: bool = False, heading_context: bool = False
) -> list[Chunk]:
    """Lines into chunks of about ``chunk_tokens``; never inside a line; the last ``overlap``
    tokens' worth of whole lines start the next chunk; a heading never ends a chunk. With
    ``heading_breaks`` a heading always starts a new chunk (no overlap across it); with
    ``heading_context`` the index text of a chunk starts with the headings above it."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    chunks: list[Chunk] = []
    headings: dict[int, str] = {}  # level -> heading text in force
    context_at: list[str] = []  # per line: the heading trail above it

    for line in lines:
        m = re.match(r"(#{1,6})\s+(.*)", line)
        if m:
            level = len(m.group(1))
            headings = {k: v for k, v in headings.items() if k < level}
            headings[level] = m.group(2).strip()
        context_at.append(" / ".join(headings[k] for k in sorted(headings)))

    def is_heading(i: int) -> bool:
        return lines[i].startswith("#")

    def emit(a: int, b: int) -> None:  # lines a..b inclusive, 0-based
        while b > a and (is_heading(b) or not lines[b].strip()):
            b -= 1
        body = "\n".join(lines[a : b + 1])
        if not body.strip():
            return
        ctx = context_at[a] if heading_context and not is_heading(a) else ""
        chunks.append(Chunk(path, a + 1, b + 1, body, f"{ctx}\n{body}" if ctx else body))

    start, size, i = 0, 0, 0
    while i < len(lines):
        t = _tokens(lines[i])
        if heading_breaks and is_heading(i) and i > start and any(lines[j].strip() and not is_heading(j) for j in range(start, i)):
            emit(start, i - 1)
            start, size = i, 0
        elif size + t > chunk_tokens and i > start:
            emit(start, i - 1)
            back, j = 0, i
            while j > start + 1 and back + _tokens(lines[j - 1]) <= overlap:
                j -= 1
                back += _tokens(lines[j])
            while j - 1 > start and (is_heading(j - 1) or not lines[j - 1].strip()):  # keep a heading with its text
                j -= 1
            start, size = j, sum(_tokens(x) for x in lines[j:i])
        size += t
        i += 1
    emit(start, len(lines) - 1)
    return chunks


Chunker = Callable[[str, str], list[Chunk]]


def chunk_workspace(ws: Workspace, chunker: Chunker) -> list[Chunk]:
    return [c for path, text in sorted(ws.files.items()) for c in chunker(path, text)]


def found(chunks: Iterable[Chunk], ws: Workspace, evidence: Iterable[str]) -> list[bool]:
    """Per evidence turn: does its line lie inside one of ``chunks``?"""
    spans = [(c.path, c.start_line, c.end_line) for c in chunks]
    out = []
    for dia in evidence:
        where = ws.turn_lines.get(dia)
        out.append(where is not None and any(p == where[0] and a <= where[1] <= b for p, a, b in spans))
    return out
