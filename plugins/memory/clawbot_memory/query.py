"""A question in the user's words -> the FTS5 MATCH expression that finds its memory.

The words of the question are ORed, not ANDed: a memory rarely repeats every word of a
question ("When did Priya start climbing?" is answered by a line that says "I joined
the climbing gym on Monday"), and bm25 already ranks the chunks that hold more
of the words, and the rarer ones, first. Words that carry no meaning on their own (what, did,
the, ...) are left out: they match nearly every chunk, which costs time (the OR of every
word is ~10x slower on a large index) and pushes chunks that share only filler up the list.

Every word is a quoted FTS5 string, so nothing the user types (quotes, ``*``, ``-``, ``:``,
``(``, AND/OR/NOT/NEAR) is ever read as query syntax. Chinese, Japanese and Korean have no
spaces between words, so a run of those characters is indexed and searched one character a
token (see :func:`index_text`), and searched as overlapping two-character phrases.
"""

from __future__ import annotations

import re
import unicodedata

# Words that say what kind of answer is wanted, or hold a sentence together, but never say
# what the memory is about (the last line: the frame of a question, "what kind of", "is she
# likely to"). Short on purpose: a word a memory could be about (home, work, new, first,
# like) stays in.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are aren as at be because been before
    being below between both but by can cannot could couldn d did didn do does doesn doing don
    down during each either else ever few for from further had hadn has hasn have haven having
    he her here hers herself him himself his how i if in into is isn it its itself just ll m
    may me might mine more most must mustn my myself no nor not now of off on once only or
    other ought our ours ourselves out over own re s same shall shan she should shouldn so some
    such t than that the their theirs them themselves then there these they this those through
    to too under until up upon us ve very was wasn we were weren what whatever when whenever
    where whereas wherever whether which while who whom whose why will with within without
    won would wouldn y yet you your yours yourself yourselves
    kind type sort thing things something anything likely think considered mention mentioned
    """.split()
)

MAX_TERMS = 48  # a pasted page is searched by its first words, not by thousands of ORs

_WORD = re.compile(r"[^\W_]+")  # letters and digits; the same split as FTS5's unicode61


def _is_cjk(ch: str) -> bool:
    """A character of a script written without spaces between words."""
    o = ord(ch)
    return (
        0x3040 <= o <= 0x30FF  # hiragana, katakana
        or 0x3400 <= o <= 0x4DBF  # CJK extension A
        or 0x4E00 <= o <= 0x9FFF  # CJK unified ideographs
        or 0xAC00 <= o <= 0xD7AF  # hangul syllables
        or 0xF900 <= o <= 0xFAFF  # CJK compatibility ideographs
        or 0x20000 <= o <= 0x2FA1F  # CJK extensions B-F and supplement
    )


def _split_scripts(word: str) -> list[str]:
    """``word`` cut where it changes between spaced and unspaced scripts ("GPT模型" -> GPT, 模型)."""
    parts: list[str] = []
    for ch in word:
        if parts and _is_cjk(ch) == _is_cjk(parts[-1][-1]):
            parts[-1] += ch
        else:
            parts.append(ch)
    return parts


def index_text(text: str) -> str:
    """The text as the keyword index should hold it: compatibility forms folded as questions
    are (full-width letters, ligatures, styled math letters), and every CJK character its own
    token (FTS5's unicode61 would keep a whole unspaced sentence as one token, which no
    question matches). Plain text comes back unchanged."""
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    if not any(_is_cjk(ch) for ch in text):
        return text
    return "".join(f" {ch} " if _is_cjk(ch) else ch for ch in text)


def _terms(text: str) -> list[str]:
    """FTS5 strings for the question's words, in order, each once."""
    text = unicodedata.normalize("NFKC", text)
    terms: list[str] = []
    plain: list[str] = []
    for word in _WORD.findall(text):
        for part in _split_scripts(word):
            if _is_cjk(part[0]):
                # one character is a word in CJK: a lone one is searched as it is, a run as
                # its overlapping pairs, each a two-token phrase over the per-character index
                pairs = [part] if len(part) == 1 else [f"{a} {b}" for a, b in zip(part, part[1:], strict=False)]
                terms += [f'"{p}"' for p in pairs]
            else:
                # FTS5 folds case itself; a non-ASCII word is passed as typed because SQLite's
                # case tables are older than Python's and would not fold it the same way
                plain.append(part.lower() if part.isascii() else part)
    words = [w for w in plain if w.casefold() not in STOPWORDS] or plain  # only filler: search it anyway
    seen: set[str] = set()
    for w in words:
        if w.casefold() not in seen:
            seen.add(w.casefold())
            terms.append(f'"{w}"')
    return list(dict.fromkeys(terms))[:MAX_TERMS]


#: A word is known by its first letters, so "paint", "painted" and "painting" count as one
#: word of the question (FTS5's porter stems them alike), not three.
KEY_CHARS = 4


def _keys(text: str) -> list[str]:
    keys: list[str] = []
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        for part in _split_scripts(word):
            keys += list(part) if _is_cjk(part[0]) else [part[:KEY_CHARS]]
    return keys


def question_keys(text: str) -> frozenset[str]:
    """The keys of the words a keyword search looks for (filler left out, as in keyword_query)."""
    words = [w for w in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()) if w not in STOPWORDS]
    return frozenset(_keys(" ".join(words)))


def matched_lines(keys: frozenset[str], text: str) -> tuple[frozenset[str], ...]:
    """Per line of ``text``: which of the question's word ``keys`` it holds. Plain Python over
    a few candidates' text: cheaper than asking FTS5 to highlight them."""
    return tuple(keys.intersection(_keys(line)) for line in text.split("\n"))


def keyword_query(text: str) -> str | None:
    """The FTS5 MATCH expression for ``text``, or None when it has no word to search for."""
    terms = _terms(text)
    return " OR ".join(terms) if terms else None


__all__ = ["STOPWORDS", "index_text", "keyword_query", "matched_lines", "question_keys"]
