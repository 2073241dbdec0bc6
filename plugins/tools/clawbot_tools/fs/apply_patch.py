"""``apply_patch``: add, update, move and delete files with one patch, all or nothing.

Every path is checked and every new content computed in memory before anything is
written; the writes then go through a :class:`FileTransaction`, rolled back if one fails.
Locating the hunks of the whole patch shares one work and time :class:`Budget`; a patch
that exhausts it is refused, with nothing written.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from clawbot import Tool, ToolCall, ToolResult

from clawbot_tools.calls import schema
from clawbot_tools.config import ToolsSettings
from clawbot_tools.fs.common import GROUP, refused
from clawbot_tools.fs.fd import TooLarge, read_limited
from clawbot_tools.fs.patch_apply import Budget, HunkError, apply_hunks
from clawbot_tools.fs.patch_parse import FileOp, PatchSyntaxError, parse_patch
from clawbot_tools.fs.paths import PathRefused, confinement_root, display, refuse_directory_name, resolve, workspace_root
from clawbot_tools.fs.transaction import FileTransaction
from clawbot_tools.read_only import refusal

MAX_PATCH_CHARS = 4_000_000
MAX_FILE_BYTES = 16 * 1024 * 1024  # an updated file is held in memory a few times over
LETTERS = {"add": "A", "update": "M", "delete": "D"}

PARAMETERS = schema(
    {"input": {"type": "string", "description": "The whole patch, from '*** Begin Patch' to '*** End Patch'."}},
    ["input"],
)

DESCRIPTION = """\
Add, update, move and delete workspace files with one patch; either every change is made or none is.
*** Begin Patch
*** Add File: path/new.py
+each line of the new file, prefixed with '+'
*** Update File: path/old.py
*** Move to: path/renamed.py   (optional: rename it too)
@@ def foo():   (optional: a line of the file above the change, to find the right place)
 context line (prefix ' ')
-removed line
+added line
*** Delete File: path/gone.py
*** End Patch
Give about 3 lines of context around each change; a hunk's context and '-' lines must match the file \
exactly once (trailing whitespace may differ). Hunks of a file apply top to bottom; '*** End of File' \
after a hunk's lines pins it to the end of the file."""


class PlanError(ValueError):
    """``str(exc)`` is the message for the model."""


@dataclasses.dataclass
class Change:
    op: FileOp
    path: Path
    shown: str
    data: bytes = b""
    old: bytes | None = None  # an updated file's current content
    mode: int = 0o644
    dest: Path | None = None
    dest_shown: str = ""


def make_tool(settings: ToolsSettings, hidden: Sequence[str] = ()) -> Tool:
    """``hidden``: folders it refuses wherever they are (:func:`~clawbot_tools.fs.paths.hidden_folders`)."""

    def handler(call: ToolCall) -> ToolResult:
        return apply_patch(call, settings, hidden)

    return Tool(
        name="apply_patch",
        description=DESCRIPTION,
        parameters=PARAMETERS,
        handler=handler,
        summary="Add, update, move or delete several workspace files with one patch, all or nothing",
        group=GROUP,
        profiles=("coding",),
        order=130,
        concurrent=False,  # writes files: runs alone, after the calls before it
    )


def apply_patch(call: ToolCall, settings: ToolsSettings, hidden: Sequence[str] = ()) -> ToolResult:
    if (read_only := refusal(call)) is not None:
        return read_only
    text = call.arguments.get("input")
    if not isinstance(text, str):
        return ToolResult.error("apply_patch: input must be a string holding the whole patch")
    if len(text) > MAX_PATCH_CHARS:
        return ToolResult.error(f"apply_patch: the patch is too long ({len(text)} characters; the limit is {MAX_PATCH_CHARS}); split it")
    try:
        budget = Budget()
        changes: list[Change] = []
        seen: dict[Path, int] = {}
        for op in parse_patch(text):
            budget.check_clock(f"line {op.line_no}")
            changes.append(_plan(call, settings, op, budget, hidden))
            _refuse_repeat(changes[-1], seen)  # before planning more: each plan reads a whole file
    except PatchSyntaxError as exc:
        return ToolResult.error(f"apply_patch: {exc}; nothing was changed")
    except PathRefused as exc:
        return refused("apply_patch", exc, None)
    except (PlanError, HunkError) as exc:  # HunkError: the budget ran out between files
        return ToolResult.error(f"apply_patch: {exc}; nothing was changed")
    return _commit(changes, confinement_root(call, settings))


def _target(call: ToolCall, settings: ToolsSettings, raw: str, line_no: int, hidden: Sequence[str]) -> tuple[Path, str]:
    try:
        path = resolve(call, raw, settings, for_write=True, hidden=hidden)
        refuse_directory_name(raw)
    except PathRefused as exc:
        raise PathRefused(f"line {line_no}: {exc}") from None
    return path, display(call, path)


def _plan(call: ToolCall, settings: ToolsSettings, op: FileOp, budget: Budget, hidden: Sequence[str]) -> Change:
    path, shown = _target(call, settings, op.path, op.line_no, hidden)
    at = f"line {op.line_no}"
    if op.kind == "add":
        if os.path.lexists(path):
            raise PlanError(f"{at}: cannot add {shown}: it already exists; use '*** Update File:' to change it")
        return Change(op, path, shown, data="".join(f"{line}\n" for line in op.added).encode("utf-8"))
    hint = "; use '*** Add File:' to create it" if op.kind == "update" else ""
    if not os.path.lexists(path):
        raise PlanError(f"{at}: cannot {op.kind} {shown}: not found{hint}")
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise PlanError(f"{at}: cannot {op.kind} {shown}: it is a directory or not a regular file")
    if (op.kind == "delete" or op.move_to) and _names_link(call, settings, op.path):
        raise PlanError(f"{at}: cannot {'delete' if op.kind == 'delete' else 'move'} {op.path!r}: it is a symbolic link")
    if op.kind == "delete":
        return Change(op, path, shown)
    change = Change(op, path, shown, mode=stat.S_IMODE(info.st_mode))
    change.old = _read_text(path, shown, at, confinement_root(call, settings))
    try:
        new_text = apply_hunks(change.old.decode("utf-8"), op.hunks, shown, budget) if op.hunks else change.old.decode("utf-8")
    except HunkError as exc:
        raise PlanError(str(exc)) from None
    change.data = new_text.encode("utf-8")
    if op.move_to is not None:
        change.dest, change.dest_shown = _target(call, settings, op.move_to, op.line_no + 1, hidden)
        if os.path.lexists(change.dest):
            raise PlanError(f"{at}: cannot move {shown} to {change.dest_shown}: it already exists")
    return change


def _read_text(path: Path, shown: str, at: str, root: str | None) -> bytes:
    try:
        data = read_limited(os.fspath(path), root, MAX_FILE_BYTES)
    except TooLarge as exc:
        raise PlanError(f"{at}: {shown} is too large to patch ({exc.args[0]} bytes; the limit is {MAX_FILE_BYTES})") from None
    except OSError as exc:
        raise PlanError(f"{at}: cannot read {shown}: {exc.strerror or exc}") from None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise PlanError(f"{at}: {shown} is not UTF-8 text and cannot be patched") from None
    return data


def _names_link(call: ToolCall, settings: ToolsSettings, raw: str) -> bool:
    named = raw if settings.confine_to_workspace else os.path.expanduser(raw)
    return os.path.islink(os.path.join(workspace_root(call), named))


def _refuse_repeat(change: Change, seen: dict[Path, int]) -> None:
    """Refuse ``change`` when it touches a path an earlier change (recorded in ``seen``) touches."""
    for path, shown in ((change.path, change.shown), (change.dest, change.dest_shown)):
        if path is None:
            continue
        if path in seen:
            raise PlanError(f"line {change.op.line_no}: {shown} is already changed at line {seen[path]}; put all changes to one file under one header")
        seen[path] = change.op.line_no


def _commit(changes: list[Change], root: str | None) -> ToolResult:
    transaction = FileTransaction(root)
    current = changes[0]
    try:
        for current in changes:
            if current.op.kind == "add":
                transaction.write(current.path, current.data, None)
            elif current.op.kind == "delete":
                transaction.remove(current.path)
            elif current.dest is not None:
                transaction.write(current.dest, current.data, None, new_mode=current.mode)
                transaction.remove(current.path)
            else:
                transaction.write(current.path, current.data, current.old)
    except (OSError, PathRefused) as exc:
        reason = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
        failed = transaction.rollback()
        outcome = f"could not restore {', '.join(failed)}" if failed else "nothing was changed"
        return ToolResult.error(f"apply_patch: cannot write {current.dest_shown or current.shown}: {reason}; {outcome}", restore_failed=failed)
    transaction.commit()
    parts = [f"{LETTERS[c.op.kind]} {c.shown}" + (f" -> {c.dest_shown}" if c.dest else "") for c in changes]
    files = [{"op": c.op.kind, "path": c.shown, **({"moved_to": c.dest_shown} if c.dest else {})} for c in changes]
    return ToolResult.text("Applied patch: " + ", ".join(parts), files=files)
