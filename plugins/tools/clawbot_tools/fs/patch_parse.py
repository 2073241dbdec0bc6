"""Parsing the apply_patch format (the Codex one) into file operations; nothing is touched.

    *** Begin Patch
    *** Add File: path          then lines starting with '+'
    *** Update File: path       optionally '*** Move to: path', then hunks:
    @@ optional anchor line     then ' ' context, '-' removed, '+' added lines,
                                optionally '*** End of File'
    *** Delete File: path
    *** End Patch

Every error names the patch line (1-based) so the model can fix that line.
"""

from __future__ import annotations

import dataclasses

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
UPDATE = "*** Update File: "
DELETE = "*** Delete File: "
MOVE = "*** Move to: "
END_OF_FILE = "*** End of File"
FILE_HEADERS = (ADD, UPDATE, DELETE)


class PatchSyntaxError(ValueError):
    """``str(exc)`` is the message for the model, starting with the line number."""


@dataclasses.dataclass
class Hunk:
    line_no: int
    anchors: list[str] = dataclasses.field(default_factory=list)  # '@@ text' lines, in order
    lines: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (' ' | '-' | '+', text)
    at_eof: bool = False

    def old(self) -> list[str]:
        return [text for kind, text in self.lines if kind != "+"]

    def preview(self, count: int = 3) -> str:
        shown = [f"@@ {a}" for a in self.anchors] + [kind + text for kind, text in self.lines]
        return "\n".join(f"    {line}" for line in shown[:count])


@dataclasses.dataclass
class FileOp:
    kind: str  # 'add' | 'update' | 'delete'
    path: str
    line_no: int
    move_to: str | None = None
    added: list[str] = dataclasses.field(default_factory=list)  # an Add File's content lines
    hunks: list[Hunk] = dataclasses.field(default_factory=list)


def _error(line_no: int, message: str) -> PatchSyntaxError:
    return PatchSyntaxError(f"line {line_no}: {message}")


def _header_path(line: str, prefix: str, line_no: int) -> str:
    path = line[len(prefix) :].strip()
    if not path:
        raise _error(line_no, f"{prefix.strip()} needs a path")
    return path


def parse_patch(text: str) -> list[FileOp]:
    lines = text.replace("\r\n", "\n").split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise _error(1, f"the patch is empty; it must start with '{BEGIN}'")
    last = max(i for i, line in enumerate(lines) if line.strip())
    if lines[first].strip() != BEGIN:
        raise _error(first + 1, f"the patch must start with '{BEGIN}', not {lines[first][:80]!r}")
    if last == first or lines[last].strip() != END:
        raise _error(last + 1, f"the patch must end with '{END}', not {lines[last][:80]!r}")
    ops: list[FileOp] = []
    i = first + 1
    while i < last:
        # a header with its path missing loses the space after ':' to rstrip: put one back
        line, line_no = lines[i].rstrip() + " ", i + 1
        if line.startswith(ADD):
            op = FileOp("add", _header_path(line, ADD, line_no), line_no)
            i = _add_body(lines, i + 1, last, op)
        elif line.startswith(DELETE):
            op = FileOp("delete", _header_path(line, DELETE, line_no), line_no)
            i += 1
        elif line.startswith(UPDATE):
            op = FileOp("update", _header_path(line, UPDATE, line_no), line_no)
            i += 1
            if i < last and (lines[i].rstrip() + " ").startswith(MOVE):
                op.move_to = _header_path(lines[i], MOVE, i + 1)
                i += 1
            i = _update_body(lines, i, last, op)
        elif not line.strip():
            i += 1  # blank lines between file sections
            continue
        else:
            raise _error(line_no, f"expected '{ADD}', '{UPDATE}' or '{DELETE}' followed by a path, got {lines[i][:80]!r}")
        ops.append(op)
    if not ops:
        raise _error(first + 1, "the patch changes no file")
    return ops


def _is_header(line: str) -> bool:
    return (line.rstrip() + " ").startswith(FILE_HEADERS)


def _add_body(lines: list[str], i: int, last: int, op: FileOp) -> int:
    while i < last and not _is_header(lines[i]):
        line = lines[i]
        if not line.startswith("+"):
            if not line.strip() and (i + 1 == last or _is_header(lines[i + 1])):
                i += 1  # a blank line before the next section
                continue
            raise _error(i + 1, f"every line of an Add File must start with '+', got {line[:80]!r}")
        op.added.append(line[1:])
        i += 1
    return i


def _update_body(lines: list[str], i: int, last: int, op: FileOp) -> int:
    hunk: Hunk | None = None
    while i < last and not _is_header(lines[i]):
        line, line_no = lines[i], i + 1
        if line.startswith("@@"):
            if hunk is None or hunk.lines:
                hunk = Hunk(line_no)
                op.hunks.append(hunk)
            anchor = line[2:].strip()
            if anchor:
                hunk.anchors.append(anchor)
        elif line.rstrip() == END_OF_FILE:
            if hunk is None or not hunk.lines:
                raise _error(line_no, f"'{END_OF_FILE}' must follow a hunk's lines")
            hunk.at_eof = True
        elif line[:1] in (" ", "-", "+") or line == "":
            if hunk is None:
                hunk = Hunk(line_no)
                op.hunks.append(hunk)
            if hunk.at_eof:
                raise _error(line_no, f"a hunk line after '{END_OF_FILE}'; start a new hunk with '@@'")
            # an empty line is an empty context line whose leading space got trimmed
            hunk.lines.append((line[:1] or " ", line[1:]))
        else:
            raise _error(line_no, f"expected a hunk line starting with ' ', '-', '+' or '@@', got {line[:80]!r}")
        i += 1
    for hunk in op.hunks:
        while hunk.lines and hunk.lines[-1] == (" ", "") and not hunk.at_eof:
            hunk.lines.pop()  # blank lines separating sections are not context
        if not hunk.lines:
            raise _error(hunk.line_no, f"the hunk for {op.path} has no lines")
    if not op.hunks and op.move_to is None:
        raise _error(op.line_no, f"Update File {op.path} has no hunks; add '@@' and the lines to change")
    return i
