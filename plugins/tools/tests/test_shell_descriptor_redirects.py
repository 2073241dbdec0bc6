"""Closing and duplicating redirections (``2>&-``, ``<&-``, ``>&1`` ...) read the way dash and bash read them.

bash reads a ``-`` right after ``<&`` or ``>&`` as a token by itself: ``sort 2>&---co=sh``
closes stderr and runs ``sort --co=sh``, while the gate used to see a redirection to a file
named ``---co=sh``. sh (dash) refuses such a line, takes a single-digit descriptor only
(``12>x`` passes ``12`` to the command) and nothing but a digit or ``-`` after ``>&``.
Every form is checked against both shells; where they disagree the line asks.
"""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import clawbot_tools.plugin
import pytest
from clawbot.testing.fake_llm import IN_PROCESS_URL, ToolCallSpec

from .exec_support import SYSTEM_PATH, verdict
from .shell_differential import SHELLS, World, lexer_mismatch

# sort spills big.txt to temporary files and pipes them through its compressor: sh, which
# runs big.txt's lines. bash reads each 2>&-WORD as 2>&- and WORD.
SMUGGLED = "bash -c 'sort 2>&--S 2>&-1k 2>&---compress-program=sh big.txt'"
PAYLOAD = "touch pwned\n" * 3000


@pytest.fixture
def world(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "home").mkdir()
    (tmp_path / "ws" / "big.txt").write_text(PAYLOAD)
    return tmp_path


@pytest.fixture(scope="module")
def shells(tmp_path_factory: pytest.TempPathFactory) -> World:
    return World(tmp_path_factory.mktemp("shells"))


def test_the_smuggled_options_really_run_the_payload_under_bash(tmp_path: Path) -> None:
    """The control: what the gate must stop is a real payload, not a syntax error."""
    (tmp_path / "big.txt").write_text(PAYLOAD)
    subprocess.run(["bash", "-c", SMUGGLED], cwd=tmp_path, env={"PATH": SYSTEM_PATH}, timeout=60, capture_output=True)
    assert (tmp_path / "pwned").exists()


async def test_options_smuggled_after_a_closing_redirect_ask_in_a_real_turn(make_kernel, fake_llm, world: Path) -> None:
    from clawbot_anthropic.config import AnthropicConfig
    from clawbot_anthropic.provider import AnthropicProvider

    fake_llm.reply(tool_calls=[ToolCallSpec("exec", {"command": SMUGGLED})])
    fake_llm.reply("It needs your approval.")
    kernel = await make_kernel(
        plugins={"tools": clawbot_tools.plugin},
        config=f'[agents.defaults]\nworkspace = "{(world / "ws").as_posix()}"\n',
        env={"PATH": SYSTEM_PATH, "HOME": str(world / "home")},
    )
    provider = AnthropicProvider(AnthropicConfig(api_key="sk-test", base_url=IN_PROCESS_URL), http_client=fake_llm.http_client())
    try:
        turn = await kernel.run_turn(provider, "sort big.txt", model="claude-test")
    finally:
        await provider.aclose()
        await kernel.aclose()
    (result,) = fake_llm.requests[1].tool_results
    text = result["content"] if isinstance(result["content"], str) else "".join(c["text"] for c in result["content"])
    assert "Nothing ran." in text and "bash closes the descriptor" in text, text
    assert turn.text == "It needs your approval."
    assert not (world / "ws" / "pwned").exists()


# every neighbour of 2>&-: descriptor before, blanks between, what follows the - or stands in its place
FORMS = [
    f"p a {fd}{op}{gap}{target}"
    for fd, op, gap, target in itertools.product(
        ["", "0", "1", "2", "12"],
        ["<&", ">&"],
        ["", " "],
        [
            "-",
            "-x",
            "--",
            "-1",
            "-#c",
            "-'q'",
            '-"q"',
            "-\\q",
            "-$x",
            "- x",
            "-;p",
            "-\\\n-x",
            "-|p b",
            "-&",
            "1",
            "2",
            "10",
            "1-",
            "x",
            '"1"',
            "\\-",
            "'-'",
            '"-"',
            "/dev/null",
            "2>x",
            "-2>x",
        ],
    )
] + ["p a &>-", "p a &>-x", "p a &>>-x", "p a >&-", "p a 2>&-; p b", "p a 2>&-\np b", "p a 2>&- # c"]


def test_every_closing_and_duplicating_form_is_read_as_both_shells_run_it(shells: World) -> None:
    assert len(SHELLS) == 2, "needs dash and bash"
    mismatches = [m for m in (lexer_mismatch(shells, line) for line in FORMS) if m]
    assert not mismatches, "\n\n".join(mismatches[:5])


@pytest.mark.parametrize(
    "command",
    [
        "sort 2>&---compress-program=sh big.txt",  # bash: sort --compress-program=sh
        SMUGGLED,
        "head >&-/etc/passwd",  # bash: head /etc/passwd with stdout closed
        "ls >& -x",
        "ls 0<&-x",
        "ls 2>&-#c",
        "ls 12>x",  # sh: ls 12 >x
        "ls 2>&1>x",  # sh refuses it
        "ls >&out.txt",  # bash writes stdout and stderr to out.txt, sh refuses it
        "ls 2>&1-",  # bash moves the descriptor, sh refuses it
        "ls 2>&10",
    ],
)
def test_redirects_the_shells_read_differently_ask(command: str, world: Path) -> None:
    found = verdict(command, world)
    assert found.action == "ask", found


@pytest.mark.parametrize(
    "command",
    [
        "ls 2>&1",
        "ls 2>&-",
        "ls >&2",
        "ls 0<&-",
        "ls 2>/dev/null",
        "ls >/dev/null 2>&1",
        "ls 2>&- | wc -l",
        "ls 2>&- >&-",
        "ls 2>&- -l",
        "ls >& 2",
        "ls 1>&2",
    ],
)
def test_ordinary_closing_and_duplicating_still_runs(command: str, world: Path) -> None:
    found = verdict(command, world)
    assert found.action == "run", found
