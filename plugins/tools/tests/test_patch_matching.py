"""apply_patch's indexed hunk matching: same answers as a scan of every position, bounded work."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from clawbot import TextBlock, ToolCall, ToolResult
from clawbot_tools.config import ToolsSettings
from clawbot_tools.fs import patch_apply, tools
from clawbot_tools.fs.patch_apply import Budget, HunkError, PatchTooCostly, apply_hunks
from clawbot_tools.fs.patch_parse import Hunk, PatchSyntaxError, parse_patch


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


def patch(ws: Path, *body: str) -> ToolResult:
    tool = next(t for t in tools(ToolsSettings()) if t.name == "apply_patch")
    text = "\n".join(("*** Begin Patch", *body, "*** End Patch"))
    result = tool.handler(ToolCall("c1", "apply_patch", {"input": text}, "main", "agent:main:test", ws))
    assert isinstance(result, ToolResult)
    return result


def text_of(result: ToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextBlock))


def hunks(*body: str) -> list[Hunk]:
    return parse_patch("\n".join(("*** Begin Patch", "*** Update File: f", *body, "*** End Patch")))[0].hunks


# --- the reference: the scan of every position that the index replaced ---------------------------


def naive_apply(text: str, hunk_list: list[Hunk]) -> str:
    """The previous matcher: every position, every level, in order, patching as it goes.

    One deliberate difference is kept out of the comparison: the previous matcher named
    ambiguous places by their line in the partly patched text, the new one by their line in
    the file as the model read it."""
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    if crlf:
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    ends_with_newline = lines[-1] == ""
    if ends_with_newline:
        lines.pop()
    levels = (lambda a, b: a == b, lambda a, b: a.rstrip() == b.rstrip(), lambda a, b: a.strip() == b.strip())
    cursor = 0
    shift = 0  # lines added minus lines removed so far: errors name lines of the file as it was
    for hunk in hunk_list:
        start = cursor
        for anchor in hunk.anchors:
            found = next((i for same in levels for i in range(start, len(lines)) if same(lines[i], anchor)), None)
            if found is None:
                raise HunkError("anchor")
            start = found + 1
        old = hunk.old()
        if not old:
            position = start if hunk.anchors and not hunk.at_eof else len(lines)
        else:
            for same in levels[:2]:
                last = len(lines) - len(old)
                candidates = [last] if hunk.at_eof and last >= start else range(start, last + 1)
                found_at = [i for i in candidates if all(same(lines[i + k], old[k]) for k in range(len(old)))]
                if len(found_at) == 1:
                    position = found_at[0]
                    break
                if len(found_at) > 1:
                    listed = ", ".join(str(i + 1 - shift) for i in found_at[:5]) + (", ..." if len(found_at) > 5 else "")
                    raise HunkError(f"matches {len(found_at)} places (lines {listed})")
            else:
                raise HunkError("not found")
        replacement, index = [], position
        for kind, line in hunk.lines:
            if kind == "+":
                replacement.append(line)
            else:
                if kind == " ":
                    replacement.append(lines[index])
                index += 1
        lines[position : position + len(old)] = replacement
        cursor = position + len(replacement)
        shift += len(replacement) - len(old)
    out = "\n".join(lines)
    if lines and (ends_with_newline or text == ""):
        out += "\n"
    return out.replace("\n", "\r\n") if crlf else out


def outcome(function: object, text: str, hunk_list: list[Hunk]) -> str:
    try:
        return "ok:" + function(text, hunk_list)  # type: ignore[operator]
    except HunkError as exc:
        message = str(exc)
        if "matches" in message:  # the count and the first lines listed must agree too
            return "ambiguous:" + message[message.index("matches") :].split(")")[0]
        return "anchor" if "@@ line" in message or message == "anchor" else "not found"


ALPHABET = ["a", "a ", " a", "b", "b\t", "", "  ", "c", "def f():", "    def f():"]


def _random_case(rng: random.Random) -> tuple[str, list[Hunk]]:
    lines = [rng.choice(ALPHABET) for _ in range(rng.randint(0, 25))]
    text = "".join(line + "\n" for line in lines)
    if rng.random() < 0.15:
        text = text.replace("\n", "\r\n")
    if rng.random() < 0.1:
        text = text.rstrip("\r\n")
    body: list[str] = []
    for _ in range(rng.randint(1, 3)):
        body.append("@@" if rng.random() < 0.6 else "@@ " + (rng.choice(ALPHABET).strip() or "x"))
        if rng.random() < 0.15:
            body.append("@@ " + (rng.choice(ALPHABET).strip() or "c"))
        if lines and rng.random() < 0.8:  # mostly lines taken from the file, sometimes re-spaced
            at = rng.randrange(len(lines))
            taken = lines[at : at + rng.randint(1, 4)]
        else:
            taken = [rng.choice(ALPHABET) for _ in range(rng.randint(0, 3))]
        hunk_body: list[str] = []
        for line in taken:
            line = line.rstrip() if rng.random() < 0.2 else line
            kind = rng.choice(" -")
            hunk_body.append(kind + line)
            if kind == "-" and rng.random() < 0.5:
                hunk_body.append("+new")
        if rng.random() < 0.3 or not hunk_body:
            hunk_body.append("+added")
        body.extend(hunk_body)
        if rng.random() < 0.15:
            body.append("*** End of File")
            break
    return text, hunks(*body)


def test_indexed_matching_agrees_with_a_scan_of_every_position() -> None:
    rng = random.Random(7)
    kinds: dict[str, int] = {}
    for _ in range(4000):
        try:
            text, hunk_list = _random_case(rng)
        except PatchSyntaxError:  # e.g. a hunk of only blank context lines, which are dropped
            continue
        expected = outcome(naive_apply, text, hunk_list)
        got = outcome(lambda t, h: apply_hunks(t, h, "f"), text, hunk_list)
        assert got == expected, (text, [(h.anchors, h.lines, h.at_eof) for h in hunk_list])
        kind = expected.split(":")[0]
        kinds[kind] = kinds.get(kind, 0) + 1
    assert min(kinds.get(k, 0) for k in ("ok", "ambiguous", "not found", "anchor")) > 100, kinds


# --- repeated and ambiguous context ---------------------------------------------------------------


REPEATED = "".join(f"block {n}\n    x = 1\n    y = 2\n" for n in range(4))


def test_repeated_context_is_ambiguous_and_lists_every_place() -> None:
    with pytest.raises(HunkError, match=r"matches 4 places \(lines 2, 5, 8, 11\)"):
        apply_hunks(REPEATED, hunks("     x = 1", "-    y = 2", "+    y = 3"), "f")


def test_repeated_context_is_told_apart_by_an_anchor_or_the_previous_hunk() -> None:
    after_anchor = apply_hunks(REPEATED, hunks("@@ block 3", "     x = 1", "-    y = 2", "+    y = 3"), "f")
    assert after_anchor.splitlines()[11] == "    y = 3" and after_anchor.count("y = 3") == 1
    with pytest.raises(HunkError, match=r"matches 2 places \(lines 8, 11\)"):  # after block 2: blocks 2 and 3
        apply_hunks(REPEATED, hunks("@@ block 2", "     x = 1", "-    y = 2", "+    y = 3"), "f")
    text = "x\nA\nx\nB\nx\n"
    with pytest.raises(HunkError, match="matches 3 places"):
        apply_hunks(text, hunks("-x", "+x2"), "f")
    # the second hunk is searched only after the first: one 'x' is left there
    assert apply_hunks(text, hunks("@@", " A", "-x", "+x1", "@@", "-x", "+x2"), "f") == "x\nA\nx1\nB\nx2\n"


def test_a_unique_exact_match_wins_over_many_loose_ones() -> None:
    text = "a  \na\na \na\t\n"
    assert apply_hunks(text, hunks("-a", "+b"), "f") == "a  \nb\na \na\t\n"
    with pytest.raises(HunkError, match="matches 3 places"):  # no exact match: three loose ones
        apply_hunks("a  \nx\na \na\t\n", hunks("-a", "+b"), "f")


def test_end_of_file_pins_a_repeated_block_to_the_end() -> None:
    assert apply_hunks(REPEATED, hunks("     x = 1", "-    y = 2", "+    y = 9", "*** End of File"), "f").endswith("    y = 9\n")


def test_an_anchor_is_the_first_occurrence_after_the_cursor_at_the_strictest_level() -> None:
    text = "  def f():\nx\ndef f():\nx\n"
    assert apply_hunks(text, hunks("@@ def f():", "-x", "+y"), "f") == "  def f():\nx\ndef f():\ny\n"
    assert apply_hunks(text, hunks("@@ def f():", "+added"), "f") == "  def f():\nx\ndef f():\nadded\nx\n"
    text = "  def f():\nx\n"
    assert apply_hunks(text, hunks("@@ def f():", "-x", "+y"), "f") == "  def f():\ny\n"


# --- adversarial patches: bounded time, nothing written -------------------------------------------


def _hunk_lines(lines: list[str]) -> list[str]:
    return [" " + line for line in lines]


ADVERSARIAL = {
    "300-line-hunk-in-20k-lines": ("a\n" * 20_000, _hunk_lines(["a"] * 299 + ["b"])),  # 0.7 s before the index
    # the same at the size of a ~6 KB patch: 2,000 lines checked at every position
    "identical-lines-then-a-miss": ("a\n" * 20_000, _hunk_lines(["a"] * 1999 + ["b"])),
    "trailing-space-near-misses": ("a \n" * 40_000, _hunk_lines(["a"] * 1999 + ["b"])),
    "every-position-matches": ("a\n" * 40_000, _hunk_lines(["a"] * 2000)),
    "alternating-lines-miss-at-the-end": ("a\nb\n" * 20_000, _hunk_lines(["a", "b"] * 1000 + ["a", "a"])),
    "alternating-exact-and-loose": ("a\na \n" * 20_000, _hunk_lines(["a"] * 2000)),
    "anchors-found-only-when-stripped": ("  x\n" * 40_000, ["@@ x"] * 1200 + [" y"]),
}


@pytest.mark.parametrize("case", list(ADVERSARIAL))
def test_adversarial_patch_finishes_fast_and_changes_nothing(ws: Path, case: str) -> None:
    content, body = ADVERSARIAL[case]
    (ws / "f.txt").write_text(content)
    result = patch(ws, "*** Add File: new.txt", "+x", "*** Update File: f.txt", *body)  # a work budget, not the clock, stops it
    text = text_of(result)
    assert result.is_error and "nothing was changed" in text
    assert any(reason in text for reason in ("took too much work", "places", "not found")), text
    assert (ws / "f.txt").read_text() == content and not (ws / "new.txt").exists()


def test_a_costly_but_matching_patch_applies_within_budget(ws: Path) -> None:
    content = "a\n" * 20_000 + "b\n"
    (ws / "f.txt").write_text(content)
    result = patch(ws, "*** Update File: f.txt", *_hunk_lines(["a"] * 299), "-b", "+c")
    assert not result.is_error, text_of(result)
    assert (ws / "f.txt").read_text() == "a\n" * 20_000 + "c\n"


def test_work_budget_is_shared_by_the_whole_patch_and_aborts_it(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patch_apply, "WORK_BUDGET", 3_000)
    (ws / "one.txt").write_text("a\nb\n" * 1000)
    hunk = [" a", " b", " a", "-a", "+z"]  # 1,000 candidates of 4 lines each: 4,000 > 3,000
    result = patch(ws, "*** Add File: new.txt", "+x", "*** Update File: one.txt", *hunk)
    text = text_of(result)
    assert result.is_error and "took too much work" in text and "nothing was changed" in text
    assert "one.txt" in text and "3,000 line comparisons" in text
    assert not (ws / "new.txt").exists() and (ws / "one.txt").read_text() == "a\nb\n" * 1000


def test_budget_spent_on_an_ambiguous_hunk_still_reports_it_ambiguous() -> None:
    with pytest.raises(HunkError, match=r"matches at least \d+ places \(lines 1, 2, 3, 4, 5, \.\.\.\)"):
        apply_hunks("a\n" * 1000, hunks(*_hunk_lines(["a"] * 10)), "f", Budget(work=500))
    with pytest.raises(PatchTooCostly):  # fewer than two found when it ran out: cannot say
        apply_hunks(("a\n" * 9 + "b\n") * 100, hunks(*_hunk_lines(["a"] * 10)), "f", Budget(work=500))


def test_wall_clock_deadline_aborts_the_patch_before_writing(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patch_apply, "TIME_BUDGET_S", 0.0)
    (ws / "f.txt").write_text("a\n")
    result = patch(ws, "*** Add File: new.txt", "+x", "*** Update File: f.txt", "-a", "+b")
    text = text_of(result)
    assert result.is_error and "took too much work" in text and "0 s" in text and "nothing was changed" in text
    assert (ws / "f.txt").read_text() == "a\n" and not (ws / "new.txt").exists()


def test_the_same_file_twice_is_refused_before_the_second_is_matched(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "f.txt").write_text("a\n")
    calls = []
    real = patch_apply.apply_hunks

    def counting(*args: object) -> str:
        calls.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr("clawbot_tools.fs.apply_patch.apply_hunks", counting)
    body = ["*** Update File: f.txt", "-a", "+b"] * 50
    result = patch(ws, *body)
    assert result.is_error and "already changed at line 2" in text_of(result)
    assert len(calls) == 2 and (ws / "f.txt").read_text() == "a\n"
