"""The safe bins' option tables: what each read-only utility may be given, unasked.

Each entry lists the short and long options a bin accepts (long ones spelt out in full),
what each option takes (nothing, a value, a file to read, an optional value) and how its
operands are read. :mod:`.safe_bins` checks a command line against these tables.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

FLAG, VALUE, PATH, OPTIONAL = "flag", "value", "path", "optional"  # what an option takes
TEXT = "text"  # an operand that is not a file (a pattern, a set of characters, a name)


@attrs.frozen
class Spec:
    short: Mapping[str, str]
    long: Mapping[str, str]
    operands: str = "paths"  # paths | text | free (no option parsing: echo) | grep | date
    numeric: bool = False  # -NUM is an option (head -5, grep -3) or a number (seq -1)
    max_operands: int | None = None
    reads_cwd: bool = False  # with no operand it reads the current directory (ls)
    known: bool = True


def _spec(
    *,
    flags: str = "",
    values: str = "",
    paths: str = "",
    optional: str = "",
    long_flags: str = "",
    long_values: str = "",
    long_paths: str = "",
    long_optional: str = "",
    **kwargs,
) -> Spec:
    short = {c: FLAG for c in flags} | {c: VALUE for c in values} | {c: PATH for c in paths} | {c: OPTIONAL for c in optional}
    long = (
        {name: FLAG for name in (long_flags + " help version").split()}
        | {name: VALUE for name in long_values.split()}
        | {name: PATH for name in long_paths.split()}
        | {name: OPTIONAL for name in long_optional.split()}
    )
    return Spec(short, long, **kwargs)


SPECS: dict[str, Spec] = {
    "ls": _spec(
        flags="aAbBcCdDfFgGhHiklmnNopqQrRsStuUvxXZ1",
        values="ITw",  # not -L: with -R it walks symlinked trees
        long_flags=(
            "all almost-all author escape ignore-backups directory dired file-type full-time no-group "
            "group-directories-first human-readable si dereference-command-line dereference-command-line-symlink-to-dir "
            "inode kibibytes literal numeric-uid-gid hide-control-chars show-control-chars quote-name "
            "reverse recursive size context zero"
        ),
        long_values="block-size format hide ignore indicator-style quoting-style sort time time-style tabsize width",
        long_optional="color classify hyperlink",
        reads_cwd=True,
    ),
    "wc": _spec(flags="cmlLw", long_flags="bytes chars lines max-line-length words", long_values="total"),
    "head": _spec(flags="qvz", values="cn", long_flags="quiet silent verbose zero-terminated", long_values="bytes lines", numeric=True),
    "tail": _spec(
        flags="fFqvz",
        values="cns",
        long_flags="quiet silent verbose zero-terminated retry",
        long_values="bytes lines pid sleep-interval max-unchanged-stats",
        long_optional="follow",
        numeric=True,
    ),
    "sort": _spec(
        flags="bdfgiMhnRrVcCmsuz",
        values="kt",  # not -S/--buffer-size/--parallel: a tiny buffer spills files to /tmp
        long_flags=(
            "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort "
            "human-numeric-sort numeric-sort random-sort reverse version-sort merge stable unique zero-terminated debug"
        ),
        long_values="key field-separator sort",
        long_optional="check",
    ),
    "uniq": _spec(
        flags="cdDuiz",
        values="fsw",
        long_flags="count repeated unique ignore-case zero-terminated",
        long_values="skip-fields skip-chars check-chars",
        long_optional="all-repeated group",
        max_operands=1,  # uniq INPUT OUTPUT writes OUTPUT
    ),
    "cut": _spec(
        flags="snz",
        values="bcfd",
        long_flags="complement only-delimited zero-terminated",
        long_values="bytes characters fields delimiter output-delimiter",
    ),
    "tr": _spec(flags="cCdst", long_flags="complement delete squeeze-repeats truncate-set1", operands=TEXT),
    "grep": _spec(
        flags="EFGPiyvwxcLloqsbHhnTZzaIrU",
        values="emABCdD",
        paths="f",
        long_flags=(
            "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case invert-match "
            "word-regexp line-regexp count files-without-match files-with-matches only-matching quiet silent "
            "no-messages byte-offset with-filename no-filename line-number initial-tab null null-data text "
            "recursive line-buffered binary no-group-separator"
        ),
        long_values=(
            "regexp max-count after-context before-context context label include exclude exclude-dir binary-files directories devices group-separator"
        ),
        long_paths="file",
        long_optional="color colour",
        operands="grep",
        numeric=True,
    ),
    "date": _spec(
        flags="uR",
        values="d",
        paths="r",
        optional="I",
        long_flags="utc universal rfc-email debug resolution",
        long_values="date rfc-3339",
        long_paths="reference",
        long_optional="iso-8601",
        operands="date",
    ),
    "which": _spec(flags="as", operands=TEXT),
    "basename": _spec(flags="az", values="s", long_flags="multiple zero", long_values="suffix", operands=TEXT),
    "dirname": _spec(flags="z", long_flags="zero", operands=TEXT),
    "pwd": _spec(flags="LP", long_flags="logical physical", operands=TEXT),
    "echo": _spec(operands="free"),
    "printf": _spec(operands="free"),
    "true": _spec(operands="free"),
    "false": _spec(operands="free"),
    # not safe bins by default, but common additions
    "cat": _spec(
        flags="AbeEnstTuv",
        long_flags="show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting",
    ),
    "tac": _spec(flags="br", values="s", long_flags="before regex", long_values="separator"),
    "nl": _spec(
        flags="p",
        values="bdfhilnsvw",
        long_flags="no-renumber",
        long_values=(
            "body-numbering section-delimiter footer-numbering header-numbering line-increment join-blank-lines "
            "number-format number-separator starting-line-number number-width"
        ),
    ),
    "seq": _spec(flags="w", values="fs", long_flags="equal-width", long_values="format separator", operands=TEXT, numeric=True),
}
UNKNOWN = Spec({}, {}, known=False)
