"""Words and operators bash reads differently from sh (dash): the lexer does not take them at face value.

* bash expands ``~`` in every word that looks like an assignment, arguments included
  (``ls x=~`` lists ``x=/home/me``), and both shells do in real assignments: ``LC_ALL=~``
  is a path, which glibc loads a locale from, not the locale name ``~``.
* ``<<<`` (a here-string) and ``|&`` are bash syntax that sh refuses.
* a ``\\`` that ends the line stands for itself in both shells.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from clawbot_tools.runtime.shell_lexer import lex

from .exec_support import SHELLS, run_if_allowed, verdict


@pytest.fixture
def world(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "home").mkdir()
    return tmp_path


@pytest.mark.parametrize(
    ("text", "expands"),
    [
        ("x=~", True),
        ("x=a:~/b", True),
        ("x+=~", True),
        ("a[1]=~", True),
        ("x=~root", True),
        ("x=~:~", True),
        ("LC_ALL=~", True),
        ("x=\\~", False),
        ('"x"=~', False),
        ('x="~"', False),
        ("x=b~", False),
        ("--x=~", False),
        ("1x=~", False),
        ("x==~", False),
        ("é=~", False),
    ],
)
def test_a_tilde_after_name_equals_is_not_taken_as_text(text: str, expands: bool) -> None:
    (word,) = lex(text).tokens
    assert word.expands is expands and word.literal is not expands, word


@pytest.mark.parametrize(
    "command",
    [
        "LC_ALL=~ ls",  # both shells: LC_ALL=/home/me, a locale loaded from a path
        "LANG=C:~ ls",
        "ls x=~",  # bash: ls x=/home/me
        "ls <<<x",  # bash only
        "ls |& wc -l",
    ],
)
def test_what_bash_expands_or_only_bash_parses_asks(command: str, world: Path) -> None:
    found = verdict(command, world)
    assert found.action == "ask", found


def test_printing_such_a_word_still_runs(world: Path) -> None:
    for shell in SHELLS:
        found, output = run_if_allowed("echo x=~ done", world, shell)
        assert found.action == "run" and "done" in output, (shell, found)


def test_a_backslash_that_ends_the_line_stands_for_itself() -> None:
    assert [token.value for token in lex("echo a\\").tokens] == ["echo", "a\\"]
