"""Turning a path the model sent into a real path, confined to the workspace.

With ``confine_to_workspace`` on, a path is refused unless its fully resolved real path
(every symlink followed, dangling ones too) lies inside the workspace's real path. Nothing
is decoded: ``%2e%2e`` and backslashes are ordinary file-name characters on POSIX.

Resolving is only half: a directory on the way may be swapped for a symlink between the
check and the ``open``. ``fd.py`` closes that gap by checking what was actually opened.

Hard links: a hard link cannot be told apart from the file by its path, so a link inside
the workspace to a file outside passes the real-path check. Writes refuse regular files
with more than one link (``for_write``). Reads allow them, deliberately: the kernel's
``protected_hardlinks`` only lets a user link files they may already read and write,
the file tools themselves cannot make links, and package managers fill the workspace
with hard links (uv's ``.venv`` and pnpm's ``node_modules`` link into their caches), so
refusing them would stop the agent from reading the libraries it works with.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from clawbot import ToolCall
from clawbot.paths import inside

from clawbot_tools.config import ToolsSettings

MAX_PATH_BYTES = 4096
MAX_COMPONENT_BYTES = 255


class PathRefused(Exception):
    """A path the tool will not touch; ``str(exc)`` is the message for the model."""


def workspace_root(call: ToolCall) -> str:
    return os.path.realpath(os.fspath(call.workspace))


def confinement_root(call: ToolCall, settings: ToolsSettings) -> str | None:
    """The directory every opened file must lie in, or ``None`` with confinement off."""
    return workspace_root(call) if settings.confine_to_workspace else None


def refuse_directory_name(raw: str) -> None:
    """Refuse a file path spelled as a directory ('new/', 'a/.'): writing there would make a file."""
    last = raw.rstrip("/").rsplit("/", 1)[-1]
    if raw.endswith("/") or last in (".", ".."):
        raise PathRefused(f"path {raw!r} names a directory (it ends in '/', '.' or '..'); give a file path such as 'dir/file.txt'")


def _check_shape(raw: object) -> str:
    if not isinstance(raw, str):
        raise PathRefused(f"path must be a string, not {type(raw).__name__}")
    if raw == "":
        raise PathRefused("path is empty")
    if "\x00" in raw:
        raise PathRefused(f"path {raw!r} contains a NUL byte")
    encoded = raw.encode("utf-8", "surrogateescape")
    if len(encoded) > MAX_PATH_BYTES:
        raise PathRefused(f"path is too long ({len(encoded)} bytes; the limit is {MAX_PATH_BYTES})")
    for part in encoded.split(b"/"):
        if len(part) > MAX_COMPONENT_BYTES:
            shown = part[:40].decode("utf-8", "replace")
            raise PathRefused(f"path component {shown!r}... is too long ({len(part)} bytes; the limit is {MAX_COMPONENT_BYTES})")
    return raw


def _outside(raw: str) -> PathRefused:
    return PathRefused(f"path {raw!r} is outside the workspace; use a path inside it (relative paths are resolved against the workspace)")


def resolve(call: ToolCall, raw: object, settings: ToolsSettings, *, for_write: bool = False, hidden: Sequence[str] = ()) -> Path:
    """The real path ``raw`` names, or :class:`PathRefused` saying why not.

    ``for_write`` also refuses files with more than one hard link (another link may live
    outside the workspace) and an existing directory cannot be written over by callers.
    ``hidden``: real paths of folders no file tool touches, wherever they are (clawbot's
    state folder, :func:`hidden_folders`).
    """
    text = _check_shape(raw)
    root = workspace_root(call)
    if not settings.confine_to_workspace:
        expanded = os.path.expanduser(text)
        real = os.path.realpath(os.path.join(root, expanded))
    else:
        if text.startswith("~"):
            raise PathRefused(f"path {text!r} uses '~', which is outside the workspace; use a path relative to the workspace")
        joined = os.path.join(root, text)  # an absolute ``text`` replaces ``root``
        try:
            real = os.path.realpath(joined)
        except (OSError, ValueError) as exc:
            raise PathRefused(f"path {text!r} cannot be resolved: {exc}") from None
        if not inside(root, real):
            raise _outside(text)
    _refuse_hidden(text, real, hidden, root)
    if for_write:
        _refuse_hard_links(text, real)
    return Path(real)


def hidden_folders(state_dir: str | os.PathLike[str] | None) -> tuple[str, ...]:
    """The folders the file tools refuse, as the sandbox hides them from commands: clawbot's
    state folder (its stored credentials, the command approvals, the cron jobs, the user's
    configuration), even where it lies inside the workspace or confinement is off."""
    return (os.path.realpath(state_dir),) if state_dir is not None else ()


def hides(hidden: Sequence[str], real: str, opened: str) -> str | None:
    """The folder of ``hidden`` that ``real`` lies in, unless ``real`` lies in the tree
    ``opened`` (the workspace, a skills folder) that is itself inside that folder: as in the
    sandbox, a tree opened inside a hidden one stays open (a workspace under the state folder)."""
    return next((h for h in hidden if inside(h, real) and not (inside(h, opened) and inside(opened, real))), None)


def _refuse_hidden(text: str, real: str, hidden: Sequence[str], opened: str) -> None:
    folder = hides(hidden, real, opened)
    if folder is not None:
        raise PathRefused(
            f"path {text!r} is in clawbot's state folder ({folder}: credentials, approvals, cron jobs and configuration), "
            "which no tool may read or change; the user manages it with clawbot's own commands"
        )


def resolve_readable(call: ToolCall, raw: object, settings: ToolsSettings, *, hidden: Sequence[str] = ()) -> tuple[Path, str | None]:
    """Like :func:`resolve` for reading, plus the skill folders the prompt points to.

    Returns the real path and the root the opened file must stay in (``None`` with
    confinement off). A path outside the workspace is allowed only when it lies inside one
    of :meth:`~clawbot.types.ToolServices.readable_roots`; ``~`` is expanded for those,
    since the Skills section shows locations under the home directory as ``~/...``.
    """
    text = _check_shape(raw)
    try:
        return resolve(call, text, settings, hidden=hidden), confinement_root(call, settings)
    except PathRefused as refusal:
        roots = call.services.readable_roots() if call.services is not None else ()
        if not roots:
            raise
        try:
            real = os.path.realpath(os.path.join(workspace_root(call), os.path.expanduser(text)))
        except (OSError, ValueError):
            raise refusal from None
        for root in roots:
            if inside(root, real) and hides(hidden, real, root) is None:
                return Path(real), root
        raise PathRefused(
            f"path {text!r} is outside the workspace and outside the skill folders listed in your instructions; use a path inside the workspace"
        ) from None


def _refuse_hard_links(text: str, real: str) -> None:
    try:
        info = os.lstat(real)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise PathRefused(f"cannot inspect {text!r}: {exc.strerror}") from None
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        raise PathRefused(f"path {text!r} is a file with {info.st_nlink} hard links; another link may be outside the workspace, so it will not be changed")


def display(call: ToolCall, path: Path) -> str:
    """``path`` as the model should see it: relative to the workspace when inside it."""
    root = workspace_root(call)
    real = os.fspath(path)
    if inside(root, real):
        rel = os.path.relpath(real, root)
        return "." if rel == "." else Path(rel).as_posix()
    return real


def is_inside_workspace(call: ToolCall, path: str | Path, settings: ToolsSettings) -> bool:
    """Whether a path found while walking may be opened (always, with confinement off)."""
    if not settings.confine_to_workspace:
        return True
    return inside(workspace_root(call), os.path.realpath(os.fspath(path)))
