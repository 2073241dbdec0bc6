"""The exec gate checked against the shells themselves: generated lines run under dash and bash.

Two properties (see :mod:`.shell_differential`), each over lines drawn from the grammar in
:mod:`.shell_lines`:

* the lexer reads every line it claims to understand as both shells do (the argv each
  simple command gets);
* no line the gate lets run unasked starts the canary, under either shell.

The suite runs a bounded sample with a fixed seed (a failure reproduces on the next run).
For long runs: ``CLAWBOT_FUZZ_EXAMPLES=50000`` (lines per property) and
``CLAWBOT_FUZZ_SEED=random`` (or a number) for lines the suite has not tried. A failure
prints the seed, the line and a shrunk line that still fails. Lines past runs found are
kept below as regression cases.
"""

from __future__ import annotations

import os
import queue
import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import attrs
import pytest
from clawbot_tools.runtime.exec_policy import PolicyInput

from .shell_differential import SHELLS, World, gate_bypass, lexer_mismatch
from .shell_lines import CANARY, HARMLESS, Vocabulary, generate, shrink

LEXER_EXAMPLES = int(os.environ.get("CLAWBOT_FUZZ_EXAMPLES", "3000"))
GATE_EXAMPLES = int(os.environ.get("CLAWBOT_FUZZ_EXAMPLES", "4000"))
_SEED = os.environ.get("CLAWBOT_FUZZ_SEED", "")
SEED = random.randrange(2**32) if _SEED == "random" else int(_SEED or "20250601")
MAX_REPORTED = 5  # distinct failures shrunk and shown per run
# Lines are checked this many at a time, each in a world of its own: a check mostly waits for
# the shells' processes, so the sample costs about half the wall time.
WORKERS = 2
# Where the gate is told the command runs inside the OS sandbox, it lets more run: check that too.
CONFINEMENT = [False, True] if "confined" in attrs.fields_dict(PolicyInput) else [False]

pytestmark = pytest.mark.skipif(len(SHELLS) < 2, reason="needs both dash and bash installed")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return World(tmp_path_factory.mktemp("shells"))


@pytest.fixture(scope="module")
def worlds(world: World, tmp_path_factory: pytest.TempPathFactory) -> list[World]:
    return [world, *(World(tmp_path_factory.mktemp("shells")) for _ in range(WORKERS - 1))]


# Lines earlier runs found (each was a mismatch or a bypass before its fix).
PAST_LEXER_FINDINGS = [
    "p a 2>&-x",  # bash: 2>&- then the word x; sh refuses the line
    "p a >& -x",
    "p a 0<&-x",
    "p a 2>&---co=x",
    "p a 2>&-#c",
    "p a 12>x",  # sh: the word 12, then >x
    "p a 2>&1>x",  # bash: 2>&1 then >x; sh refuses the line
    "p a\\",  # a \ at the end stands for itself
    "p x=~",  # bash expands ~ in every word that looks like an assignment
    "p a x=a:~/b",
    "p a |& p b",  # bash only: sh refuses the line
    "p a <<<x",
]
PAST_GATE_FINDINGS = [
    "bash -c 'sort 2>&--S 2>&-1k 2>&---compress-program=canary big.txt'",
    "sort 2>&---compress-program=canary 2>&--S 2>&-1k big.txt",
]


@pytest.mark.parametrize("line", PAST_LEXER_FINDINGS)
def test_past_lexer_findings_are_read_as_the_shells_read_them(line: str, world: World) -> None:
    mismatch = lexer_mismatch(world, line)
    assert mismatch is None, mismatch


@pytest.mark.parametrize("line", PAST_GATE_FINDINGS)
@pytest.mark.parametrize("confined", CONFINEMENT)
def test_past_gate_findings_do_not_run_unasked(line: str, confined: bool, world: World) -> None:
    bypass = gate_bypass(world, line, confined=confined)
    assert bypass is None, bypass


def test_the_lexer_reads_generated_lines_as_dash_and_bash_do(worlds: list[World]) -> None:
    _fuzz(HARMLESS, LEXER_EXAMPLES, lexer_mismatch, worlds)


@pytest.mark.parametrize("confined", CONFINEMENT)
def test_no_generated_line_the_gate_lets_run_starts_the_canary(confined: bool, worlds: list[World]) -> None:
    _fuzz(CANARY, GATE_EXAMPLES, lambda world, line: gate_bypass(world, line, confined=confined), worlds)


def _fuzz(vocabulary: Vocabulary, examples: int, check: Callable[[World, str], str | None], worlds: list[World]) -> None:
    """Every generated line passes ``check``; else the first few failures, shrunk, with the seed."""
    free: queue.SimpleQueue[World] = queue.SimpleQueue()
    for world in worlds:
        free.put(world)

    def problem(line: str) -> str | None:
        world = free.get()  # a world runs one line at a time
        try:
            return check(world, line)
        finally:
            free.put(world)

    lines = [generate(vocabulary, SEED, index) for index in range(examples)]
    failures: dict[str, str] = {}
    pool = ThreadPoolExecutor(len(worlds))
    try:
        for index, (line, found) in enumerate(zip(lines, pool.map(problem, lines), strict=True)):  # in the order generated
            if found is None:
                continue
            small = shrink(line, lambda candidate: problem(candidate) is not None)
            if small not in failures:
                failures[small] = f"{problem(small) or found}\n  shrunk from line {index} of seed {SEED}: {line!r}"
            if len(failures) >= MAX_REPORTED:
                break
    finally:
        pool.shutdown(cancel_futures=True)
    assert not failures, f"{len(failures)} failing line(s) (CLAWBOT_FUZZ_SEED={SEED} reproduces):\n\n" + "\n\n".join(failures.values())


def test_the_checks_see_a_probe_and_the_canary(world: World) -> None:
    """The machinery itself: a probe's argv and the canary are seen under both shells, and each run starts clean."""
    for shell in SHELLS:
        run = world.run(shell, f"{world.bin}/p1 'a b' c; canary; {world.bin}/p2 & wait")
        assert sorted(run.records) == [("p1", "a b", "c"), ("p2",)] and run.canary == 1, run
        assert world.run(shell, "true").records == () and world.run(shell, "true").canary == 0
        assert world.run(shell, f"(sleep 0.3; {world.bin}/p3) &").records == (("p3",),)  # waits for the background
    (world.ws / "a.txt").write_text("changed")
    world.run("dash", "true")
    assert (world.ws / "a.txt").read_text() == "b\na\n"
    assert gate_bypass(world, "ls") is None and gate_bypass(world, "canary") is None  # "canary" asks: never run
