"""Small jobs done in one place: a second copy drifts (one copy of the glob matcher was
exponential, one Retry-After reader mistook a zoneless date for local time).

Each row names the one module that may do the job and a pattern that gives a copy away.
The behaviour of each helper is tested where it is used: tests/kernel/test_retry_after.py,
the ``find``/``grep`` tool tests and the bootstrap-extra-files tests (globs), the state
file and credential tests (atomic writes), the confinement tests (inside).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from clawbot.globs import compile_glob
from clawbot.paths import inside
from clawbot.tokens import estimate_tokens

ROOT = Path(__file__).resolve().parents[1]

ONE_PLACE = [
    ("the token estimate", "kernel/clawbot/tokens.py", r"(?://|/)\s*4\b(?!\d)|CHARS_PER_TOKEN\s*=|chars? per token"),
    ("reading Retry-After", "kernel/clawbot/providerkit.py", r"parsedate_to_datetime|parsedate_tz"),
    ("an atomic JSON write", "kernel/clawbot/statefile.py", r"mkstemp\(|json\.dump\("),
    ("whether a path is inside a folder", "kernel/clawbot/paths.py", r"os\.path\.commonpath|\.is_relative_to\(|def _?inside\("),
    ("matching '**' globs", "kernel/clawbot/globs.py", r"fnmatch.*\*\*|\*\*.*fnmatch|def _?match\w*\(\s*pattern"),
]


def product_sources() -> list[Path]:
    """The kernel's and the plugins' own modules (their tests may write files any way)."""
    found = sorted((ROOT / "kernel" / "clawbot").rglob("*.py"))
    for package in sorted((ROOT / "plugins").glob("*/clawbot_*")):
        found.extend(sorted(package.rglob("*.py")))
    found.extend(sorted((ROOT / "plugin-template").glob("clawbot_*/**/*.py")))
    return found


@pytest.mark.parametrize(("job", "owner", "pattern"), ONE_PLACE, ids=[row[0] for row in ONE_PLACE])
def test_one_module_does_the_job(job: str, owner: str, pattern: str) -> None:
    copy = re.compile(pattern)
    sources = product_sources()
    assert ROOT / owner in sources
    elsewhere = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sources
        if path != ROOT / owner
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if copy.search(line)
    ]
    assert not elsewhere, f"{job} belongs to {owner}; use it there instead of:\n" + "\n".join(elsewhere)


@pytest.mark.parametrize(("text", "tokens"), [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("x" * 400, 100), (0, 0), (9, 3), (-5, 0)])
def test_the_token_estimate_rounds_up(text: str | int, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


@pytest.mark.parametrize(
    ("root", "path", "expected"),
    [("/a/b", "/a/b", True), ("/a/b", "/a/b/c", True), ("/a/b", "/a/bc", False), ("/a/b", "/a", False), ("/", "/etc", True), ("/a/b", "a/b/c", False)],
)
def test_inside_compares_whole_folder_names(root: str, path: str, expected: bool) -> None:
    assert inside(root, path) is expected


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("**/*.md", "a.md", True),
        ("**/*.md", "x/y/a.md", True),
        ("docs/**", "docs/a/b", True),
        ("docs/**", "docs", False),
        ("*.md", "x/a.md", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("[!a]*", "b", True),
        ("[!a]*", "a", False),
        ("?.md", "ab.md", False),
    ],
)
def test_globs(pattern: str, path: str, expected: bool) -> None:
    assert compile_glob(pattern)(path) is expected


@pytest.mark.timeout(10)
def test_many_double_stars_are_linear() -> None:
    deep = "/".join(["a"] * 200 + ["y.md"])
    assert not compile_glob("**/a/" * 40 + "x.md")(deep)
    assert not compile_glob("*a*a*a*a*a*a*a*a*a*a*b")("a" * 5000)
