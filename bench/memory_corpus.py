"""A deterministic memory folder for the scale benchmark: daily notes written like a person's.

Each file is ``memory/<journal>/YYYY-MM-DD.md``: a dated title, then a few sections (``##
Meetings``, ``## Work log`` ...) of bullet lines. Words come from a Zipf-like vocabulary (a
head of real English function and everyday words, then a long tail of made-up words, with
people's names and numbers mixed in), so FTS5's posting lists are as skewed as on real
notes: a few words in every chunk, most words in a handful. Files are cut with the memory
plugin's own chunker at its default settings until the wanted number of chunks is reached.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import numpy as np

HEAD = (
    "the to and a of i in it for is on that with was we at be this have about as but not so he she they "
    "are from will his her their my our you by or an if do did had just all can more up out then there "
    "when one what some would get new time need think also still next today tomorrow week call meeting "
    "team project work email retro plan idea notes talk lunch home call back later check fix follow "
    "update draft send read write doc bug test release deploy budget design customer client sales data "
    "report slide deck demo trip flight hotel train book movie coffee dinner gym run walk doctor kids "
    "school garden car bank rent tax invoice contract hire interview feedback goal quarter launch price "
    "issue ticket server database backup phone laptop weekend holiday birthday party gift family friend"
).split()
SECTIONS = ("Meetings", "Work log", "Ideas", "Personal", "Reading", "To do", "Decisions", "People", "Health", "Money")
JOURNALS = ("work", "home", "team", "reading", "side-project", "travel", "health", "learning", "money", "garden")
_SYLLABLES = "ka ri to mel an sor vin de la pu quo ex tra li om bar fen gi nu zel hap dor mi cas ten ul".split()


def _made_up_words(rng: np.random.Generator, count: int) -> list[str]:
    words: list[str] = []
    seen = set(HEAD)
    while len(words) < count:
        n = int(rng.integers(2, 5))
        word = "".join(_SYLLABLES[i] for i in rng.integers(0, len(_SYLLABLES), n))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


class Corpus:
    """Daily notes from one seed; the same seed writes the same files."""

    def __init__(self, seed: int = 13, vocabulary: int = 40_000, zipf: float = 1.07) -> None:
        self.rng = np.random.default_rng(seed)
        tail = _made_up_words(self.rng, vocabulary - len(HEAD))
        self.words = HEAD + tail
        weights = 1.0 / np.arange(1, len(self.words) + 1) ** zipf
        self.cdf = np.cumsum(weights / weights.sum())
        self.names = [w.capitalize() for w in _made_up_words(self.rng, 300)]

    def word_ranks(self, n: int) -> np.ndarray:
        return np.minimum(np.searchsorted(self.cdf, self.rng.random(n)), len(self.words) - 1)

    def _line(self) -> str:
        words = [self.words[i] for i in self.word_ranks(int(self.rng.integers(6, 22)))]
        roll = self.rng.random()
        if roll < 0.35:
            words.insert(int(self.rng.integers(0, len(words))), self.names[int(self.rng.zipf(1.3)) % len(self.names)])
        if roll > 0.8:
            words.append(f"{int(self.rng.integers(1, 24))}:{int(self.rng.integers(0, 6))}0")
        if self.rng.random() < 0.1:
            words.append(f"#{int(self.rng.integers(100, 9999))}")
        words[0] = words[0].capitalize()
        return "- " + " ".join(words) + "."

    def note(self, day: dt.date) -> str:
        parts = [f"# {day.isoformat()} ({day.strftime('%A')})", ""]
        picked = self.rng.choice(len(SECTIONS), size=int(self.rng.integers(2, 6)), replace=False)
        for index in sorted(picked):
            parts.append(f"## {SECTIONS[index]}")
            parts.extend(self._line() for _ in range(int(self.rng.lognormal(2.0, 0.7)) + 1))
            parts.append("")
        return "\n".join(parts)

    def queries(self, count: int) -> list[str]:
        """Questions as a user asks them: a question's words around two to four note words
        (mid-frequency more than the head, as people ask about specifics)."""
        starts = ("what did we decide about", "when did i", "who talked about", "notes on", "what happened with", "")
        out = []
        for _ in range(count):
            ranks = self.rng.integers(40, 8000, int(self.rng.integers(2, 5)))
            words = [self.words[i] for i in ranks]
            if self.rng.random() < 0.3:
                words.append(self.names[int(self.rng.integers(0, 60))])
            out.append(" ".join([starts[int(self.rng.integers(0, len(starts)))], *words]).strip() + "?")
        return out

    def files(self) -> Iterator[tuple[str, str]]:
        """(relative path, text) forever: each journal a day at a time, journals in turn."""
        first = dt.date(2019, 1, 1)
        day = 0
        while True:
            for journal in JOURNALS:
                date = first + dt.timedelta(days=day)
                yield f"memory/{journal}/{date.isoformat()}.md", self.note(date)
            day += 1


def write_corpus(workspace: Path, chunks: int, *, seed: int = 13) -> tuple[int, int, int]:
    """Write daily notes under ``workspace`` until the memory chunker makes ``chunks`` chunks
    of them at its default settings: (files, chunks, bytes)."""
    from clawbot_memory.chunking import chunk_markdown
    from clawbot_memory.config import MemorySettings

    settings = MemorySettings()
    corpus = Corpus(seed)
    made = files = size = 0
    for rel, text in corpus.files():
        if made >= chunks:
            break
        made += len(chunk_markdown(text, chunk_tokens=settings.chunk_tokens, overlap_tokens=settings.overlap_tokens))
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        files += 1
        size += len(text.encode())
    (workspace / "MEMORY.md").write_text("# Memory\n\n- Long-term facts live in memory/<journal>/<date>.md.\n", encoding="utf-8")
    return files + 1, made, size
