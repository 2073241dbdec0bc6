"""Bootstrap files into the system prompt: the per-file and the total size caps.

``clawbot_bootstrap_files`` gives a list of :class:`~clawbot.BootstrapFile` (AGENTS.md,
SOUL.md ...); :func:`inject_files` turns it into the :class:`~clawbot.InjectedFile` tuple the
prompt shows, and :func:`load_injected_files` does both for one run, with the configured caps
(``agents.defaults.bootstrap_max_chars``, default 20,000, and
``agents.defaults.bootstrap_total_max_chars``, default 60,000).

The rules, applied to the files in the order the hook returned them (the same input always
gives the same output, byte for byte, so the prompt cache keeps working):

1. **Missing** (``content is None``): kept, so the prompt can say ``[MISSING] Expected at:
   <path>``. ``raw_chars`` is 0; it costs nothing against the total cap. A file that was
   **refused** (it leads outside the workspace: :func:`read_bounded` with ``root``) is kept
   the same way, as the one-line :class:`NotLoaded` note saying why.
2. **Empty** (only whitespace): left out.
3. **Per-file cap.** ``raw`` is the file's length (for an :class:`Excerpt`, the whole file's
   size). ``raw <= max_chars``: the content goes in unchanged. Otherwise the first
   ``H = max_chars * 7 // 10`` characters (70 %) and the last ``T = max_chars // 5``
   characters (20 %) are kept around one marker line::

       <head>\\n[... truncated: <raw - H - T> characters cut from the middle of <name> (<raw> in
       all); the full file can be read with the `read` tool at <path> ...]\\n<tail>

   The remaining 10 % of the cap is room for the marker (so with a cap of a few thousand
   characters or more the injected text stays within the cap).
4. **Total cap.** The budget starts at ``total_max_chars``; each kept file costs the length
   of its injected text (content and marker). A file whose text fits the remaining budget is
   kept and the budget shrinks (also after an earlier file was cut or dropped: a short file
   later in the list still goes in if it fits). One that does not fit is cut again from its
   own content with the same 70/20 scheme, sized so that the result fits: ``room = budget -
   len(marker) - 2`` (the marker as if every character were cut), ``L = room * 10 // 9``,
   ``H = L * 7 // 10``, ``T = L // 5`` (so ``H + T <= room``). If ``room`` is below
   :data:`MIN_KEPT_CHARS` (too little to be useful) the file is **dropped**: its entry stays,
   ``truncated``, with a one-line note instead of content (``[... <name> (<raw> characters)
   left out: the bootstrap files' total cap of <total> characters is used up; read it with
   the `read` tool at <path> ...]``), so the model knows it exists and where. Notes, like
   missing markers, are not counted against the budget (at most one line per file).

``raw_chars`` is always the file's own size; ``truncated`` is set whenever anything was cut.

Files too large to read whole are read by :func:`read_bounded`: only both ends of the file
are read (memory and time stay bounded for a 1 GB MEMORY.md) and the result is an
:class:`Excerpt`, a ``str`` that remembers the whole file's size; the caps then cut it like
the whole file, and the marker and ``raw_chars`` report the real size (in bytes: what
``stat`` knows without reading the file; the same as characters for ASCII text).
"""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from clawbot.confined import READ_FLAGS, FileRefused, open_confined
from clawbot.safetext import visible
from clawbot.types import BootstrapContext, BootstrapFile, InjectedFile
from clawbot.types.settings import DEFAULT_BOOTSTRAP_MAX_CHARS

HOOK = "clawbot_bootstrap_files"
HEAD_TENTHS = 7  # head: 70 % of the cap
TAIL_TENTHS = 2  # tail: 20 % of the cap
MIN_KEPT_CHARS = 200
"""Below this many characters of its own text, a file cut by the total cap is dropped instead."""
DEFAULT_MAX_CHARS = DEFAULT_BOOTSTRAP_MAX_CHARS
DEFAULT_TOTAL_MAX_CHARS = 60_000
READ_WHOLE_FACTOR = 4
""":func:`read_bounded` reads a file whole when it has at most this many bytes per character
of the per-file cap; larger files are read as an :class:`Excerpt`."""


class Excerpt(str):
    """The two ends of a file too large to read whole: its first ``head_chars`` characters
    followed directly by its last ones. ``full_chars`` is the size of the whole file.

    :func:`inject_files` treats it as the whole file: it is always cut (``truncated``), only
    ever inside the seam between the two parts, and its marker and ``raw_chars`` use
    ``full_chars``. A wrapper that builds a new string from it gets a plain ``str``.
    """

    full_chars: int
    head_chars: int

    def __new__(cls, head: str, tail: str, full_chars: int) -> Excerpt:
        self = super().__new__(cls, head + tail)
        self.head_chars = len(head)
        self.full_chars = max(int(full_chars), len(head) + len(tail))
        return self

    def __reduce__(self) -> Any:  # keep the sizes through pickling and copying
        return (Excerpt, (str(self)[: self.head_chars], str(self)[self.head_chars :], self.full_chars))


# --------------------------------------------------------------------------- the caps


def _marker(name: str, path: Path, cut: int, raw: int) -> str:
    return f"[... truncated: {cut} characters cut from the middle of {name} ({raw} in all); the full file can be read with the `read` tool at {path} ...]"


def _dropped_note(name: str, path: Path, raw: int, total: int) -> str:
    return (
        f"[... {name} ({raw} characters) left out: the bootstrap files' total cap of {total} characters is used up; read it with the `read` tool at {path} ...]"
    )


def _raw_size(content: str) -> int:
    return content.full_chars if isinstance(content, Excerpt) else len(content)


def _cut(file: BootstrapFile, content: str, head: int, tail: int) -> str:
    """``content`` with only its first ``head`` and last ``tail`` characters, around a marker."""
    head, tail = max(0, head), max(0, tail)
    if isinstance(content, Excerpt):  # never reach across the seam of the two parts
        head = min(head, content.head_chars)
        tail = min(tail, len(content) - content.head_chars)
    raw = _raw_size(content)
    kept_head = content[:head]
    kept_tail = content[len(content) - tail :] if tail else ""  # content[-0:] would be all of it
    return f"{kept_head}\n{_marker(file.name, file.path, raw - head - tail, raw)}\n{kept_tail}"


def _per_file(file: BootstrapFile, content: str, max_chars: int) -> tuple[str, bool]:
    if _raw_size(content) <= max_chars and not isinstance(content, Excerpt):
        return content, False
    max_chars = max(0, max_chars)
    return _cut(file, content, max_chars * HEAD_TENTHS // 10, max_chars * TAIL_TENTHS // 10), True


def inject_files(files: Sequence[BootstrapFile], *, max_chars: int, total_max_chars: int) -> tuple[InjectedFile, ...]:
    """Apply the per-file and the total cap (see the module docstring for the exact rules)."""
    out: list[InjectedFile] = []
    budget = max(0, total_max_chars)
    for file in files:
        content = file.content
        if content is None:
            out.append(InjectedFile(file.name, file.path, None, 0, False))
            continue
        if isinstance(content, NotLoaded):  # a one-line note: like a missing file, never cut
            out.append(InjectedFile(file.name, file.path, content, 0, False))
            continue
        if not content.strip():
            continue
        raw = _raw_size(content)
        text, truncated = _per_file(file, content, max_chars)
        if len(text) > budget:
            overhead = len(_marker(file.name, file.path, raw, raw)) + 2
            room = budget - overhead
            if room < MIN_KEPT_CHARS:
                note = _dropped_note(file.name, file.path, raw, total_max_chars)
                out.append(InjectedFile(file.name, file.path, note, raw, True))
                continue
            limit = room * 10 // (HEAD_TENTHS + TAIL_TENTHS)
            text = _cut(file, content, limit * HEAD_TENTHS // 10, limit * TAIL_TENTHS // 10)
            truncated = True
        budget -= len(text)
        out.append(InjectedFile(file.name, file.path, text, raw, truncated))
    return tuple(out)


# --------------------------------------------------------------------------- reading files


def read_bounded(path: Path, *, max_chars: int = DEFAULT_MAX_CHARS, root: os.PathLike[str] | str | None = None) -> str | None:
    """Read a workspace file as UTF-8 text without ever holding more than a few caps of it.

    Returns ``None`` when there is no such file. A file of at most ``4 * max_chars`` bytes is
    read whole; a larger one as an :class:`Excerpt` of its first ``4 * max_chars`` bytes and
    its last ``2 * max_chars`` bytes (decoded; enough for the 70 % head and 20 % tail the
    caps keep). Undecodable bytes become U+FFFD. Raises :class:`OSError` for something that
    exists but is not a readable regular file (a directory, a FIFO, no permission): opening
    never blocks and nothing but a regular file is read.

    With ``root`` (the workspace), the file is confined like the ``read`` tool's files: the
    file actually opened must lie inside ``root``'s real path and have no other hard link,
    or :class:`~clawbot.confined.FileRefused` is raised (an ``OSError`` whose
    ``reason`` says why) and nothing is read. See :mod:`clawbot.confined`.
    """
    limit = READ_WHOLE_FACTOR * max(1, max_chars)
    try:
        fd = os.open(path, READ_FLAGS) if root is None else open_confined(path, root)
    except (FileNotFoundError, NotADirectoryError):
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        data = handle.read(limit + 1)
        if len(data) <= limit:
            return data.decode("utf-8", errors="replace")
        head = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(data[:limit], final=False)
        size = max(os.fstat(handle.fileno()).st_size, len(data))
        start = max(len(data), size - 2 * limit // READ_WHOLE_FACTOR)
        handle.seek(start)
        tail_bytes = handle.read(size - start)
        skip = 0
        while skip < min(3, len(tail_bytes)) and tail_bytes[skip] & 0xC0 == 0x80:
            skip += 1  # a character cut in two by the seek
        tail = tail_bytes[skip:].decode("utf-8", errors="replace")
        return Excerpt(head, tail, size)


class NotLoaded(str):
    """The prompt's stand-in for a file that was refused: a one-line note, never its content.

    :func:`inject_files` keeps it whole and outside the caps (like a missing file's marker);
    ``clawbot context`` shows ``reason``.
    """

    reason: str

    def __new__(cls, text: str, reason: str) -> NotLoaded:
        self = super().__new__(cls, text)
        self.reason = reason
        return self

    def __reduce__(self) -> Any:
        return (NotLoaded, (str(self), self.reason))


def not_loaded(name: str, reason: str) -> NotLoaded:
    """The note shown in place of the bootstrap file ``name``, refused for ``reason``."""
    return NotLoaded(f"[{visible(name)} was not loaded: {visible(reason)}. Its content is not shown.]", reason)


# --------------------------------------------------------------------------- one run


def _problem(item: object) -> str | None:
    if not isinstance(item, BootstrapFile):
        return f"{type(item).__name__} {item!r:.80}"
    if not isinstance(item.name, str) or not item.name:
        return f"a BootstrapFile without a name ({item.name!r:.80})"
    if not isinstance(item.path, str | os.PathLike):
        return f"{item.name}: path {item.path!r:.80} is not a path"
    if item.content is not None and not isinstance(item.content, str):
        return f"{item.name}: content is {type(item.content).__name__}, not str or None"
    return None


def _responsible(manager: Any, excluded: Iterable[str]) -> str:
    """Who returned the final list: the outermost wrapper still in the chain, else the plain
    implementation called first. (Which of several plain implementations answered is not
    recorded; the first called is the usual answerer.)"""
    excluded = set(excluded)
    impls = [i for i in manager.hookimpls(HOOK) if i.plugin_name not in excluded]
    wrappers = [i for i in impls if i.wrapper or i.hookwrapper]
    chosen = wrappers or impls
    return chosen[-1].plugin_name if chosen else "<unknown>"


def load_injected_files(kernel: Any, ctx: BootstrapContext) -> tuple[InjectedFile, ...]:
    """The bootstrap files of one run: the hook's list, checked, then capped.

    Never raises for a plugin's sake: if the hook's result cannot be read as a list, or holds
    things that are not :class:`~clawbot.BootstrapFile` objects, those are left out and one
    failure is recorded against the plugin that returned them (``clawbot plugins list``,
    ``clawbot doctor``); the files that are fine still go in.
    """
    manager = kernel.plugins
    before = len(manager.failures)
    try:
        result: list[Any] = manager.bootstrap_files(ctx)
    except Exception as exc:  # e.g. a wrapper returned a number: list() of it fails
        failed = [f.plugin for f in manager.failures[before:] if f.hook == HOOK]
        manager.record_failure(_responsible(manager, failed), HOOK, exc)
        result = []
    files: list[BootstrapFile] = []
    bad: list[str] = []
    for item in result:
        problem = _problem(item)
        if problem is not None:
            bad.append(problem)
        elif isinstance(item.path, Path):
            files.append(item)
        else:
            files.append(BootstrapFile(item.name, Path(item.path), item.content))
    if bad:
        failed = [f.plugin for f in manager.failures[before:] if f.hook == HOOK]
        shown = "; ".join(bad[:3]) + (f"; and {len(bad) - 3} more" if len(bad) > 3 else "")
        error = TypeError(f"returned {len(bad)} item(s) that are not BootstrapFile objects (left out): {shown}")
        manager.record_failure(_responsible(manager, failed), HOOK, error)
    defaults = kernel.config.agents.defaults
    return inject_files(files, max_chars=defaults.bootstrap_max_chars, total_max_chars=defaults.bootstrap_total_max_chars)


def max_chars_of(config: Any) -> int:
    """``agents.defaults.bootstrap_max_chars`` of ``config``, or the default without one."""
    defaults = getattr(getattr(config, "agents", None), "defaults", None)
    value = getattr(defaults, "bootstrap_max_chars", None)
    return value if isinstance(value, int) and value > 0 else DEFAULT_MAX_CHARS


__all__ = [
    "MIN_KEPT_CHARS",
    "Excerpt",
    "FileRefused",
    "NotLoaded",
    "inject_files",
    "load_injected_files",
    "max_chars_of",
    "not_loaded",
    "read_bounded",
]
