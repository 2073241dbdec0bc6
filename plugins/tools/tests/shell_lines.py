"""A seeded grammar of shell-ish lines, rich in what shells read differently.

Quotes of every kind, backslashes, ``$'...'`` and ``$"..."``, comments, redirections of
every form with and without descriptor numbers (the ``&-`` forms too), here-documents and
here-strings, ``;`` ``&&`` ``||`` ``|`` ``&`` and newlines, ``{ }`` and ``( )``, keywords
in odd places, assignments, ``cd`` with redirections that can fail, wrappers, globs,
tildes, non-ASCII digits and spaces.

:data:`HARMLESS` lines feed the lexer comparison (mostly fixed words, so the lexer claims to
understand many of them); :data:`CANARY` lines look harmless but mention the canary in every
position a program can hide in, for the gate comparison. Only names the test world provides
are used (files of the workspace, ``/dev/null``, a missing directory), so a line run for real
writes nowhere else. :func:`generate` makes line ``index`` of ``seed``: the same pair always
gives the same line. :func:`shrink` cuts a failing line down to a short one that still fails.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import attrs

PLAIN = ["a", "x", "-n", "1", "a.txt", "sub", "-", "--", "-l", "=", "a=b", "--co=x", "big.txt", "./a.txt", "sub/s.txt"]
ODD = [
    "#",
    "a#b",
    "~",
    "~/x",
    "x=~",
    "x=a:~",
    "--x=~/a",
    "*",
    "a?",
    "[a]",
    "{a,b}",
    "{1..2}",
    "{",
    "}",
    "!",
    "a{b}",
    "²",
    "٣",
    "é",
    "a\u00a0b",
    "\u3000",
    "\u2003x",
    "१",
    "-٣",
    "a\\",
    "\\",
    "%",
    "^",
    "@",
    ":",
    ",",
    "a=",
    "=a",
    "-x=",
    "if",
    "then",
    "fi",
    "do",
    "done",
    "in",
    "esac",
    "time",
    "function",
    "[[",
    "]]",
    "a=(b)",
    "a[1]=b",
    "\\ ",
    "a\\ b",
    "~+",
    "~-",
    "a~",
    "{,}",
    "x{a,}",
    "\\#",
    "'#'",
    "$*",
    "a=b:~",
    "x=~/a",
    "-",
    "!x",
    "^a",
]
QUOTES = [
    "'{}'",
    '"{}"',
    "\\{}",
    '"{}\\""',
    "'{}'\\''x'",
    "{}\\\n",
    '"a\\\n{}"',
    '"\\{}"',
    "''{}",
    '"$"{}',
    "'{}\\'",
]
DOLLARS = ["$x", "${x}", "$1", "$?", "$#", "$@", "${x-a}", "$(p)", "`p`", "$((1))", "$[1]", "$", "$-", "${#x}", "$$"]
ESCAPES = ["\\'", "\\n", "\\x41", "\\\\", '\\"', "\\c", "\\e", "\\047", "\\u00e9"]
FDS = ["", "", "", "", "", "0", "1", "2", "3", "9", "10", "12", "01", "٢", "{fd}"]
REDIRECT_OPS = ["<", ">", ">>", ">|", "<>", "<&", ">&", "&>", "&>>", "<<<", ">&-", "<&-"]
TARGETS = [
    "out",
    "/dev/null",
    "1",
    "2",
    "-",
    "-x",
    "--",
    "-1",
    "-#c",
    "1-",
    "10",
    "x",
    '"-"',
    "\\-",
    "'-'",
    "$x",
    "--co=x",
    "-a.txt",
    "a.txt",
    "/nonexistent/x",
    "sub/o",
    "~/o",
    '"1"',
    "0",
    "-;",
    "-&",
    "-|p",
    "-\\\n-x",
]
GAPS = ["", "", " ", "  ", "\t"]
SEPARATORS = [
    ";",
    "; ",
    " ; ",
    " && ",
    "&&",
    " || ",
    "||",
    " | ",
    "|",
    " & ",
    "&",
    "\n",
    ";\n",
    " &&\n",
    "|\n",
    "|&",
    ";;",
    ";&",
]
DELIMITERS = ["EOF", "'EOF'", '"EOF"', "E\\OF", 'E"O"F', "-EOF", "EOF x", "E$x"]
WRAPPERS = ["env", "nice", "nohup", "timeout 5", "stdbuf -o0", "command", "time", "env -i", "nice -n 1", "command -p", "exec"]
SHELL_C = ["sh -c", "bash -c", "dash -c", "sh -e -c", "bash --norc -c"]
KEYWORD_FORMS = [
    "{ %s; }",
    "( %s )",
    "if %s; then %s; fi",
    "while false; do %s; done",
    "for i in a; do %s; done",
    "case a in a) %s;; esac",
    "! %s",
    "time %s",
    "f() { %s; }",
    "%s && { %s; }",
    "{ %s\n}",
]
ASSIGNMENTS = ["A=1", "a=b", "X=", "LC_ALL=C", "a+=b", "1a=b", "é=1", "A='x y'", "a=$x", "a=~", "a=~/x"]
GLUE = [" ", " ", " ", " ", " ", "", "  ", "\t", " \\\n"]
COMMENTS = [" # c", "#c", " #", " # ; p", "\t#x\n", " #canary", "#;canary", " # \\\n"]


@attrs.frozen
class Vocabulary:
    """What a kind of line is made of."""

    programs: tuple[str, ...]
    words: tuple[str, ...]  # arguments
    body_lines: tuple[str, ...]  # here-document lines
    hidden: tuple[str, ...] = ()  # programs behind quotes, wrappers, substitutions ...: one command of most lines
    separators: tuple[str, ...] = tuple(SEPARATORS)
    redirect_ops: tuple[str, ...] = tuple(REDIRECT_OPS)
    assignments: tuple[str, ...] = tuple(ASSIGNMENTS)
    fds: tuple[str, ...] = tuple(FDS)
    compound_one_in: int = 10  # how rarely a command is put in a compound command ({ }, if, for ...)
    exotic: int = 8  # percent of word pieces that are $ forms, $'...' or $"..." (the lexer gives up on all of them)


class _Line:
    """One line being drawn (here-document bodies wait for the next newline)."""

    def __init__(self, rng: random.Random, vocabulary: Vocabulary) -> None:
        self.rng = rng
        self.vocabulary = vocabulary
        self.heredocs: list[str] = []

    def chance(self, one_in: int) -> bool:
        return self.rng.randrange(one_in) == 0

    def pick(self, items):
        return self.rng.choice(items)

    def word(self) -> str:
        """One to three pieces, each plain or quoted in one of the ways shells differ on."""
        pieces = []
        for _ in range(self.pick([1, 1, 1, 2, 2, 3])):
            kind = self.rng.randrange(100)
            if kind < 55:
                pieces.append(self.pick(self.vocabulary.words))
            elif kind < 75:
                pieces.append(self.pick(QUOTES).format(self.pick([*self.vocabulary.words, *ODD[:8]])))
            elif kind < 100 - self.vocabulary.exotic:
                pieces.append(self.pick(ODD))
            elif kind < 100 - self.vocabulary.exotic // 2:
                pieces.append(self.pick(DOLLARS))
            elif kind < 100 - self.vocabulary.exotic // 4:
                pieces.append("$'" + self.pick(ESCAPES) + self.pick(self.vocabulary.words) + "'")
            else:
                pieces.append('$"' + self.pick(self.vocabulary.words) + '"')
        return "".join(pieces)

    def redirection(self) -> str:
        fd = self.pick(self.vocabulary.fds)
        if self.chance(6):
            delimiter = self.pick(DELIMITERS)
            bare = delimiter.replace("'", "").replace('"', "").replace("\\", "").split(" ")[0]
            body = [self.pick(self.vocabulary.body_lines) for _ in range(self.rng.randrange(4))]
            end = self.pick([bare, bare, bare, "\t" + bare, bare + " ", "x", bare + "\\"])
            self.heredocs.append("\n".join([*body, end]) + "\n")
            return f"{fd}<<{self.pick(['', '-'])}{self.pick(GAPS)}{delimiter}"
        op = self.pick(self.vocabulary.redirect_ops)
        if op.endswith("-") and self.chance(2):
            return fd + op  # >&- alone
        target = self.pick(TARGETS) if self.chance(2) else self.word()
        return f"{fd}{op}{self.pick(GAPS)}{target}"

    def simple_command(self, hidden: bool = False) -> str:
        """Assignments, a program (maybe behind a wrapper), words and redirections in any order."""
        parts: list[str] = []
        if self.chance(6):
            parts.append(self.pick(self.vocabulary.assignments))
        program = self.pick(self.vocabulary.hidden if hidden else self.vocabulary.programs)
        wrap = self.rng.randrange(4 if hidden else 12)
        if wrap == 0:
            program = f"{self.pick(WRAPPERS)} {program}"
        elif wrap == 1:
            program = f"{self.pick(SHELL_C)} {self.pick(QUOTES[:2] + ['{}']).format(program)}"
        parts.append(program)
        for _ in range(self.pick([0, 1, 1, 2, 2, 3, 4])):
            parts.append(self.redirection() if self.chance(4) else self.word())
        return "".join(part + self.pick(GLUE) for part in parts).rstrip(" \t")

    def line(self) -> str:
        """One to four commands joined by control operators, maybe in compound commands."""
        out: list[str] = []
        count = self.pick([1, 1, 2, 2, 3, 4])
        hidden = self.rng.randrange(count) if self.vocabulary.hidden and not self.chance(4) else -1
        for index in range(count):
            if index:
                separator = self.pick(self.vocabulary.separators)
                if "\n" in separator and self.heredocs:
                    separator = separator.rstrip("\n") + "\n" + "".join(self.heredocs)
                    self.heredocs.clear()
                out.append(separator)
            command = self.simple_command(hidden=index == hidden)
            if self.chance(self.vocabulary.compound_one_in):
                form = self.pick(KEYWORD_FORMS)
                command = form % (command, *(self.simple_command() for _ in range(form.count("%s") - 1)))
            out.append(command)
        if self.chance(8):
            out.append(self.pick(COMMENTS))
        if self.heredocs:
            out.append("\n" + "".join(self.heredocs))
        return "".join(out)


HARMLESS = Vocabulary(
    programs=("p", "echo", "ls", "p a", "cd sub", "cd", "true", ":", "wc", "printf", "sort"),
    words=tuple(PLAIN),
    body_lines=("a", "$x", "EOF", "\tEOF", "EOF ", "x\\", "`p`", "$(p)", "${x-$(p)}", "'", '"', "p", "E\\", "OF"),
)
CANARY = Vocabulary(
    programs=("ls", "echo", "sort", "head", "wc", "printf", "cd sub", "true", "tail", "grep x", "uniq", "cut -c1", "date"),
    words=(*PLAIN, "canary", "canary", "./canary", ";canary", "--co=canary", "--compress-program=canary", "-S", "1k", "big.txt"),
    body_lines=("a", "canary", "$(canary)", "`canary`", "EOF", "\tEOF", "EOF ", "x\\", "E\\", "OF", "${x-`canary`}", "$x"),
    hidden=(
        "canary",
        "./canary",
        "sub/canary",
        "c'a'nary",
        '"canary"',
        "\\canary",
        "ca\\\nnary",
        "$'canary'",
        '$"canary"',
        "$(canary)",
        "`canary`",
        "echo $(canary)",
        "echo `canary`",
        'echo "$(canary)"',
        "X=canary; $X",
        'X=canary; "$X"',
        "eval canary",
        "exec canary",
        "command canary",
        "env canary",
        "nice canary",
        "timeout 5 canary",
        "nohup canary",
        "stdbuf -o0 canary",
        "time canary",
        "sh -c canary",
        "bash -c canary",
        "sh -c 'canary'",
        'bash -c "canary"',
        "xargs canary",
        "find . -exec canary ;",
        "find . -exec canary {} +",
        "trap canary EXIT",
        ". ./canary",
        "sort -S 1k --compress-program=canary big.txt",
        "sort -S1k --co=canary big.txt",
        "./can*",
        "sub/can?ry",
        "~/../ws/canary",
        "cd sub && ./canary",
        "cd sub 2>/nonexistent/x && ./canary",
        "cd sub >/dev/null; ./canary",
        "ls; canary",
        "ls | canary",
        "ls && canary",
        "ls || canary",
        "ls & canary",
        "{ canary; }",
        "(canary)",
        "echo ${x-$(canary)}",
        "echo $((`canary`))",
        "wc <<E\n$(canary)\nE",
        "wc <<E\n`canary`\nE",
        "sort 2>&---compress-program=canary 2>&--S 2>&-1k big.txt",
        "sort 2>&- --co=canary -S 1k big.txt",
        "PATH=sub:$PATH canary",
        "alias ls=canary; ls",
        "hash -p ./canary ls; ls",
        "export PATH=.; canary",
        "cd sub; cd ..; ./canary",
        "cd ~; ../ws/canary",
        "ls >&-canary",
        "sort 2>&-x --co=canary -S1k big.txt",
    ),
    # mostly what the gate lets run, so that a canary hidden in it is put to the test
    separators=(";", "; ", " ; ", " && ", "&&", " || ", " | ", "|", " & ", "\n", ";\n", " &&\n", "|\n", "|&"),
    redirect_ops=("<", ">", ">", ">>", ">|", "<>", "<&", ">&", ">&", ">&-", "<&-", "&>"),
    assignments=("COLUMNS=80", "LC_ALL=C", "NO_COLOR=1", "A=1", "LANG=~", "TERM=x:~"),
    fds=("", "", "", "", "", "", "", "", "0", "1", "2", "2", "9", "12", "٢"),
    compound_one_in=25,
    exotic=3,
)


def generate(vocabulary: Vocabulary, seed: int, index: int) -> str:
    """Line ``index`` of the run with ``seed``."""
    return _Line(random.Random(f"{seed}:{index}"), vocabulary).line()


def shrink(line: str, fails: Callable[[str], bool], *, budget_s: float = 30.0) -> str:
    """A shorter line that still ``fails``: chunks of characters removed while it keeps failing."""
    deadline = time.monotonic() + budget_s
    size = max(1, len(line) // 2)
    while size >= 1 and time.monotonic() < deadline:
        start, cut = 0, False
        while start < len(line) and time.monotonic() < deadline:
            candidate = line[:start] + line[start + size :]
            if candidate.strip() and fails(candidate):
                line, cut = candidate, True
            else:
                start += size
        if not cut:
            size //= 2
    return line
