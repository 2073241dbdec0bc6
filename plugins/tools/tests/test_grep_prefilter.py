"""grep's file prefilter never changes the answer: output equals a naive per-line search."""

from __future__ import annotations

import random
import warnings
from pathlib import Path
from typing import Any

import pytest
import regex
from clawbot import TextBlock, ToolCall, ToolResult
from clawbot_tools.config import ToolsSettings
from clawbot_tools.fs import tools
from clawbot_tools.fs.pattern import Prefilter, compile_pattern
from clawbot_tools.fs.search import FileSearch

pytestmark = pytest.mark.filterwarnings("ignore:Possible nested set:FutureWarning")

# Patterns whose meaning differs between one search of a whole file and a search of each
# line, patterns regex reads differently from re, and ordinary ones.
TRICKY = [
    r"(?<![\s\S])foo",
    r"foo(?![\s\S])",
    r"(?<!.)foo",
    r"foo(?!.)",
    r"(?-m:^)foo",
    r"(?m:^)foo",
    r"\Afoo",
    r"foo\Z",
    r"\Afoo\Z",
    r"^foo",
    r"foo$",
    r"^foo$",
    r"^$",
    r"^\s*$",
    r"\bfoo\b",
    r"\Bfoo",
    r"oo\b",
    r"(?<=^)foo",
    r"(?<=\n)foo",
    r"foo(?=\n|$)",
    r"foo\r",
    r"\r$",
    r"foo[\s\S]",
    r"[\s\S]foo",
    r"(?s)foo.",
    r"(?s).foo",
    r"(fo)o(?:\1)?",
    r"(?i)FOO",
    r"(?i:F)oo",
    "K",
    "s",
    r"[[:alpha:]]oo",
    r"fo{e<=1}",
    r"\$\{x\}",
    r"[{]",
    r"colou?r",
    r"[Ff]oo|BAR",
    r"(?:foo|bar)+$",
    r"(foo)?bar",
    r"f(?=oo)",
    r"(?=foo)",
    r"\w+$",
    r"^\W*$",
    r"\tfoo",
    r"foo\Z|^bar",
    r"(?x) f o o",
    r"[^\n]foo",
    r"\x66oo",
    r"\N{LATIN SMALL LETTER F}oo",
    r"foo{1,2}",
    r"(?a:\w)oo",
    r"ba[r-z]",
]

FILES = {
    "a.txt": "foo\nbar foo\nfoo bar\n\nxfoo\n",
    "b.txt": "bar\nfoo baz\nqux foo\n",  # foo starts and ends lines, never the file
    "crlf.txt": "bar\r\nfoo\r\n\r\nend foo\r\n",
    "noeol.txt": "first\nfoo",
    "uni.txt": "\u212a kelvin\n\u017f long s\n\u0130stanbul\nStra\u00dfe\nFOO\n\tfoo\ttab\n",
    "braces.txt": "${x}\nfunc {\n[a]bc\ncolor colour\nfoooo\n",
    "mid_cr.txt": "x\nfoo\rbar\nbaz\r\n",
    "blank.txt": "x\n\n\n  \n",
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for name, text in FILES.items():
        (workspace / name).write_bytes(text.encode("utf-8"))
    return workspace


def run(ws: Path, **arguments: Any) -> ToolResult:
    grep = next(tool for tool in tools(ToolsSettings()) if tool.name == "grep")
    result = grep.handler(ToolCall("c1", "grep", arguments, "main", "agent:main:test", ws))
    assert isinstance(result, ToolResult)
    return result


def lines_of(text: str) -> list[str]:
    """The lines grep searches: split at \\n, the empty piece after a final newline dropped, \\r cut."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def naive(pattern: str, ignore_case: bool) -> list[str]:
    compiled = regex.compile(pattern, regex.VERSION0 | (regex.IGNORECASE if ignore_case else 0))
    return sorted(f"{name}:{number}: {line}" for name, text in FILES.items() for number, line in enumerate(lines_of(text), start=1) if compiled.search(line))


@pytest.mark.parametrize("ignore_case", [False, True], ids=["case", "nocase"])
@pytest.mark.parametrize("pattern", TRICKY)
def test_grep_output_equals_a_naive_per_line_search(ws: Path, pattern: str, ignore_case: bool) -> None:
    result = run(ws, pattern=pattern, ignore_case=ignore_case, max_results=1000)
    text = "".join(block.text for block in result.content if isinstance(block, TextBlock))
    assert not result.is_error, text
    expected = naive(pattern, ignore_case)
    found = sorted(text.split("\n")) if result.details["matches"] else []  # a line may hold a \r
    assert found == expected


@pytest.mark.parametrize(
    ("pattern", "file_text"),
    [
        (r"(?<![\s\S])foo", "bar\nfoo\n"),  # whole-file meaning differs
        (r"foo(?![\s\S])", "foo\nbar\n"),
        (r"(?-m:^)foo", "bar\nfoo\n"),
        (r"[[:alpha:]]x", "ax\n"),  # regex reads a POSIX class, re a '[' ... ']'
    ],
)
def test_patterns_whose_whole_file_meaning_differs_find_their_line(ws: Path, pattern: str, file_text: str) -> None:
    (ws / "z.txt").write_text(file_text)
    result = run(ws, pattern=pattern, path="z.txt")
    assert result.details["matches"] == 1


def test_each_pattern_gets_the_prefilter_that_is_sound_for_it() -> None:
    def prefilter(pattern: str, ignore_case: bool = False) -> tuple[tuple[str, ...], bool] | None:
        search = FileSearch(compile_pattern(pattern, ignore_case=ignore_case), None, 0.0)
        found = search.prefilter
        return None if found is None else (found.strings, found.whole is not None)

    assert prefilter(r"TODO_FIX_ME|def handler_[0-9]+") == (("TODO_FIX_ME", "def handler_"), True)  # the bench's
    assert prefilter("colou?r") == (("color", "colour"), True)
    assert prefilter("(foo)?bar") == (("bar",), True)
    assert prefilter("todo", ignore_case=True) == (("todo",), True)
    assert prefilter(r"[A-Z]{4}_\w+") == (("_",), True)
    # whole-file and per-line meanings differ: only the strings, never the pattern over the file
    for pattern in (r"(?<![\s\S])foo", r"foo(?![\s\S])", r"(?-m:^)foo", r"\Afoo", r"foo\Z", r"\bfoo", "foo$", r"(f)oo\1", "(?>fo|f)oo", "fo*+o"):
        assert prefilter(pattern) == (("foo",), False) or prefilter(pattern) == (("f",), False), pattern
    # no string needed, but the pattern depends on nothing around its match
    for pattern in (r"\w+", "a?", "x|.", r"[\s\S]"):
        assert prefilter(pattern) == ((), True), pattern
    for pattern in ("^$", "(?=abc)", r"\b\w", r"[[:alpha:]]x", "(?x)abc", "ab{e<=1}"):
        assert prefilter(pattern) is None, pattern


# --- random patterns: the prefilter never rules out a file with a matching line -------------------

PIECES = [
    "a",
    "b",
    "foo",
    "o",
    "K",
    "k",
    "s",
    " ",
    r"\t",
    r"\r",
    r"\n",
    ".",
    r"\w",
    r"\W",
    r"\s",
    r"\S",
    r"\d",
    "^",
    "$",
    r"\A",
    r"\Z",
    r"\b",
    r"\B",
    "[ab]",
    "[^a]",
    r"[\s\S]",
    "[a-c]",
    "[Ff]",
    r"\{",
    r"\}",
    "(?>a|ab)",
    "a*+",
    "b++",
    "(o)\\1",
    "(?i:k)",
    "a+?",
    "(?s:.)",
    "(?a:\\w)",
]


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    parts = []
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        if choice < 0.5 or depth > 2:
            part = rng.choice(PIECES)
        elif choice < 0.6:
            part = "(?:" + _random_pattern(rng, depth + 1) + "|" + _random_pattern(rng, depth + 1) + ")"
        elif choice < 0.7:
            part = rng.choice(["(?=", "(?!"]) + _random_pattern(rng, depth + 1) + ")"
        elif choice < 0.78:
            part = rng.choice(["(?<=", "(?<!"]) + rng.choice(["a", "o", r"\n", r"[\s\S]", "^", "."]) + ")"
        elif choice < 0.86:
            part = rng.choice(["(?i:", "(?-m:", "(?m:", "(?s:", "("]) + _random_pattern(rng, depth + 1) + ")"
        else:
            part = "(?:" + rng.choice(PIECES) + ")" + rng.choice(["?", "*", "+", "{2}", "{0}", "{1,3}", "??", "+?"])
        parts.append(part)
    return "".join(parts)


TEXTS = [*FILES.values(), "ab\nba\n", "\nfoo\n", "K\nk\n\u212a\n", "a\tb\r\nb a\n", "{}\n}{\nfo\n", "aaa\nbbb\nccc"]


def test_random_patterns_never_lose_a_match() -> None:
    rng = random.Random(20240611)
    checked = prefiltered = whole = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while checked < 1500:
            pattern = _random_pattern(rng)
            try:
                compile_pattern(pattern, ignore_case=False)
            except ValueError:
                continue
            for ignore_case in (False, True):
                compiled = compile_pattern(pattern, ignore_case=ignore_case)
                prefilter = Prefilter.for_pattern(compiled, whole_text_limit=10**6)
                if prefilter is None:
                    continue
                prefiltered += 1
                whole += prefilter.whole is not None
                for text in TEXTS:
                    if any(compiled.search(line) for line in lines_of(text)):
                        assert prefilter.may_match(text, 1.0), (pattern, ignore_case, text, prefilter.strings, prefilter.whole)
            checked += 1
    assert prefiltered > 1000 and whole > 300  # the test exercises both kinds, not only their absence
