"""Code, tests and docs speak of the product, not of how it was planned or built.

A reader of this repository sees the product; the planning documents, the order the work
was done in and the reviews along the way are not in it. So "seed 004", "stage 6",
"review 2", "finding E7" or "issue 12" in a name, comment or page point at nothing: say
what the behaviour is instead ("the approval-pending flow", "the exec gate's bypass
tables"). This test keeps such words from coming back.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("kernel", "plugins", "tests", "docs", "bench", "plugin-template", ".ci", "README.md", "clawbot.toml", "pyproject.toml")
SUFFIXES = {".py", ".md", ".toml", ".txt", ".sh", ".cfg", ".ini", ".yaml", ".yml", ".j2", ""}
SKIPPED_PARTS = {".venv", "__pycache__", ".git", "node_modules"}

PLANNING_WORDS = [
    ("a specification document by number", re.compile(r"(?<![a-z])seeds?[ _-]?0\d\d", re.IGNORECASE)),
    ("a build stage", re.compile(r"(?<![a-z])stages?[ _-]?\d+|\b(?:next|later|earlier|previous|coming|their|memory) stages?\b", re.IGNORECASE)),
    ("a review", re.compile(r"(?<![a-z])reviews?(?:ed|er|ers)?(?![a-z])|review[ _-]?\d", re.IGNORECASE)),
    ("a review round", re.compile(r"(?<![a-z])round[ _-]?\d+\b", re.IGNORECASE)),
    ("a review finding by number", re.compile(r"(?<![a-z])findings?[ _-]?[A-Z]?\d+\b", re.IGNORECASE)),
    ("an issue by number", re.compile(r"(?<![a-z])issues?[ _-]?#?\d+\b", re.IGNORECASE)),
]


def scanned_files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED:
        top = ROOT / name
        candidates = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file()) if top.is_dir() else []
        for path in candidates:
            if SKIPPED_PARTS & set(path.relative_to(ROOT).parts) or path.suffix not in SUFFIXES:
                continue
            if path.resolve() == Path(__file__).resolve():
                continue
            files.append(path)
    return files


def test_no_planning_words_in_code_tests_or_docs() -> None:
    files = scanned_files()
    assert len(files) > 100, "the scan found too few files to mean anything"
    hits = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for what, pattern in PLANNING_WORDS:
                found = pattern.search(line)
                if found:
                    hits.append(f"{path.relative_to(ROOT)}:{number}: {found.group()!r} ({what}): {line.strip()[:100]}")
    assert not hits, "say what the product does instead of naming how it was planned:\n" + "\n".join(hits)


def test_the_patterns_catch_what_they_are_for() -> None:
    caught = [
        "see seed 004 §5",
        "SEED_004 =",
        "with chat commands, stage 7",
        "the stage-1 conversation",
        "def test_review2_bypasses",
        "def test_seed_004_coder",
        "test_stage1_boot",
        "the first review found",
        "finding E7",
        "fixed in round 3",
        "issue #12",
        "arrives with the memory stage",
    ]
    passed = [
        "seed_workspace(tmp)",
        "random seed",
        "for stage in chain.split('|')",
        "preview(command)",
        "round(x, 2)",
        "around 30 s",
        "the skill's findings",
        "git restore --staged .",
    ]
    for line in caught:
        assert any(p.search(line) for _, p in PLANNING_WORDS), line
    for line in passed:
        assert not any(p.search(line) for _, p in PLANNING_WORDS), line
