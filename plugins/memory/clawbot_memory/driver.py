"""Which sqlite the index runs on, and what it can do there.

The standard library's ``sqlite3`` cannot load extensions on many Pythons (ours included),
so the index prefers ``sqlean`` (a DB-API sqlite that can, with FTS5) and loads sqlite-vec
into it. What cannot load is not an error: vectors are then compared in process (numpy),
and without FTS5 there is no keyword search. :class:`Driver` says which path is in use and
why, for ``clawbot memory status`` and ``clawbot doctor``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs

#: How long a writer or reader waits for another process's lock before failing.
BUSY_TIMEOUT_S = 30.0


@attrs.frozen
class Driver:
    """An sqlite module and the capabilities probed on it."""

    module: ModuleType = attrs.field(repr=False)
    name: str  # "sqlean.py (SQLite 3.50.4)", "sqlite3 (standard library, SQLite 3.40.1)"
    vec_version: str | None  # "v0.1.9" when sqlite-vec loads, else None
    fts5: bool
    #: a sentence each: why something is missing (sqlite-vec, FTS5, sqlean)
    reasons: tuple[str, ...] = ()

    @property
    def vector_backend(self) -> str:
        # searches always scan the vectors in memory (vectors.py); this names where they are kept
        return f"sqlite-vec {self.vec_version} (store), in-memory cosine (search)" if self.vec_version else "in-process cosine (numpy)"

    @property
    def keyword_backend(self) -> str | None:
        return "FTS5 (bm25)" if self.fts5 else None

    def connect(self, path: Path | str) -> Any:
        """A connection in autocommit mode (transactions are explicit), usable from any one
        thread at a time, with sqlite-vec loaded when this driver has it."""
        conn = self.module.connect(str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        if self.vec_version:
            _load_vec(conn)
        return conn


def _load_vec(conn: Any) -> str:
    import sqlite_vec

    conn.enable_load_extension(True)
    try:
        sqlite_vec.load(conn)
    finally:
        conn.enable_load_extension(False)
    return str(conn.execute("select vec_version()").fetchone()[0])


def _has_fts5(conn: Any) -> bool:
    try:
        conn.execute("create virtual table temp.fts5_probe using fts5(x)")
        conn.execute("drop table temp.fts5_probe")
    except Exception:
        return False
    return True


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def open_driver(disable: Iterable[str] = ()) -> Driver:
    """Probe the best sqlite available, minus what ``disable`` (the setting) turns off."""
    off = set(disable)
    reasons: list[str] = []
    module: ModuleType | None = None
    if "sqlean" in off:
        reasons.append("sqlean is turned off by plugins.memory.disable, so the standard sqlite3 is used")
    else:
        try:
            module = importlib.import_module("sqlean")
        except ImportError as exc:
            reasons.append(f"sqlean.py could not be imported ({_first_line(exc)}), so the standard sqlite3 is used")
    if module is None:
        module = importlib.import_module("sqlite3")
        name = f"sqlite3 (standard library, SQLite {module.sqlite_version})"
    else:
        name = f"sqlean.py (SQLite {module.sqlite_version})"

    probe = module.connect(":memory:", check_same_thread=False)
    try:
        vec_version: str | None = None
        if "sqlite-vec" in off:
            reasons.append("sqlite-vec is turned off by plugins.memory.disable: vectors are compared in process")
        elif not hasattr(probe, "enable_load_extension"):
            reasons.append(f"{name.split(' ')[0]} here cannot load extensions, so sqlite-vec cannot load: vectors are compared in process")
        else:
            try:
                vec_version = _load_vec(probe)
            except Exception as exc:
                reasons.append(f"sqlite-vec could not load ({_first_line(exc)}): vectors are compared in process")
        if "fts5" in off:
            fts5 = False
            reasons.append("FTS5 is turned off by plugins.memory.disable: no keyword search")
        else:
            fts5 = _has_fts5(probe)
            if not fts5:
                reasons.append(f"{name} has no FTS5: no keyword search")
    finally:
        probe.close()
    return Driver(module=module, name=name, vec_version=vec_version, fts5=fts5, reasons=tuple(reasons))
