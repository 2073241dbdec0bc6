"""The index file of one agent: ``<state dir>/memory/<agent>.sqlite``.

Tables: ``meta`` (schema version, features, vector model and dimensions, last sync),
``files`` (path, source, hash, mtime, size, and why a file was skipped), ``chunks`` (line range, hash, text, the text the
keyword index holds and the vector as a float32 blob), ``chunks_fts`` (FTS5 over those, kept by triggers),
``chunks_vec`` (a sqlite-vec ``vec0`` table, recreated when the dimensions change) and
``embedding_cache`` (vectors by provider key, model and text hash).

The Markdown is the source of truth: a file that is not this index (corrupt, foreign, an
older schema) is moved aside and a fresh one built; nothing is lost. The file is in WAL
mode with one connection that writes and one that reads, so a search reads the last
committed sync while the next one writes.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clawbot.statefile import create_private_file

from clawbot_memory.driver import BUSY_TIMEOUT_S, Driver

SCHEMA_VERSION = "2"
#: ``PRAGMA application_id`` of a clawbot memory index ("cbmi"): any other non-empty
#: database at the index path is someone else's file and is moved aside, not changed.
APPLICATION_ID = 0x63626D69
#: How long the checkpoint after a sync waits for readers of an older state.
CHECKPOINT_WAIT_MS = 50
#: Stemmed words ("meetings" finds "meeting"), accents folded.
FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"

_TABLES = """
create table if not exists meta(key text primary key, value text not null);
create table if not exists files(
    path text primary key, source text not null, hash text not null, mtime integer not null, size integer not null,
    skipped text);
create table if not exists chunks(
    id integer primary key, path text not null, source text not null, start_line integer not null,
    end_line integer not null, hash text not null, model text not null default '', text text not null,
    search_text text not null, embedding blob, updated_at integer not null);
create index if not exists chunks_by_path on chunks(path);
create index if not exists chunks_by_model on chunks(model);
create table if not exists embedding_cache(
    provider text not null, model text not null, provider_key text not null, hash text not null,
    embedding blob not null, dims integer not null, updated_at integer not null,
    primary key (provider_key, model, hash));
"""

_FTS = f"""
create virtual table chunks_fts using fts5(search_text, content='chunks', content_rowid='id', tokenize='{FTS_TOKENIZE}');
create trigger chunks_fts_insert after insert on chunks begin
    insert into chunks_fts(rowid, search_text) values (new.id, new.search_text); end;
create trigger chunks_fts_delete after delete on chunks begin
    insert into chunks_fts(chunks_fts, rowid, search_text) values ('delete', old.id, old.search_text); end;
insert into chunks_fts(chunks_fts) values ('rebuild');
"""

_FTS_TRIGGERS = ("chunks_fts_insert", "chunks_fts_delete")


class NotAnIndex(Exception):
    """The file at the index path is not a clawbot memory index we can use."""


class Store:
    """One agent's index file: a writer connection and a reader connection, each used by
    one thread at a time (their locks)."""

    def __init__(self, path: Path, driver: Driver) -> None:
        self.path = path
        self.driver = driver
        self._writer: Any = None
        self._reader: Any = None
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._open_lock = threading.Lock()  # a reader and a writer may both be first
        #: what was moved aside when this index was opened, a sentence each
        self.notices: list[str] = []
        #: the vectors held in memory for searches (vectors.VectorIndex), by generation
        self.vector_cache: Any = None

    # -- opening ---------------------------------------------------------------------------

    def open(self) -> None:
        """Open (creating or replacing what is not an index); idempotent."""
        with self._open_lock:
            if self._writer is not None and self._reader is not None:
                return
            self._close_connections()
            # private from the start, like every state file: SQLite gives the WAL and shared
            # memory files the database file's mode
            create_private_file(self.path)
            try:
                self._open_checked()
            except NotAnIndex as exc:
                self._close_connections()
                self.move_aside(str(exc))
                self._open_checked()
            except BaseException:
                self._close_connections()
                raise

    def _open_checked(self) -> None:
        """Open the index; :class:`NotAnIndex` only when the file is damaged or someone
        else's. A busy, read-only or full index is not broken: its error is raised as it is
        (moving it aside would pull it from under the process that is writing it)."""
        try:
            conn = self.driver.connect(self.path)
        except self.driver.module.DatabaseError as exc:
            if not is_corruption(exc):
                raise
            raise NotAnIndex(f"it could not be opened ({exc})") from None
        self._writer = conn
        try:
            app_id = conn.execute("pragma application_id").fetchone()[0]
            tables = {row[0] for row in conn.execute("select name from sqlite_master where type in ('table', 'view')")}
        except self.driver.module.DatabaseError as exc:
            if not is_corruption(exc):
                raise
            raise NotAnIndex(f"it is not a readable sqlite database ({exc})") from None
        if tables and app_id != APPLICATION_ID:
            raise NotAnIndex("it is not a clawbot memory index")
        if tables:
            version = get_meta(conn, "schema_version")
            if version != SCHEMA_VERSION:
                raise NotAnIndex(f"its schema version is {version or 'unknown'}, this clawbot writes {SCHEMA_VERSION}")
            if self._aligned(conn):
                # nothing to set up: no write lock needed, so an index another process is
                # writing can still be read
                self._reader = self.driver.connect(self.path)
                return
        try:
            conn.execute("pragma journal_mode=wal")
            conn.execute("pragma synchronous=normal")
            conn.execute("begin immediate")
            conn.execute(f"pragma application_id={APPLICATION_ID}")
            for statement in _statements(_TABLES):
                conn.execute(statement)
            conn.execute("insert or ignore into meta(key, value) values ('schema_version', ?)", (SCHEMA_VERSION,))
            self._align_features(conn)
            conn.execute("commit")
        except self.driver.module.DatabaseError as exc:
            with contextlib.suppress(Exception):
                conn.execute("rollback")
            if not is_corruption(exc):
                raise
            raise NotAnIndex(f"it is damaged ({exc})") from None
        self._reader = self.driver.connect(self.path)

    def _aligned(self, conn: Any) -> bool:
        """Whether the index is in WAL mode with the tables and features this driver sets up."""
        try:
            if str(conn.execute("pragma journal_mode").fetchone()[0]).lower() != "wal":
                return False
            if {row[0] for row in conn.execute("select name from sqlite_master where type = 'table'")} < {"meta", "files", "chunks", "embedding_cache"}:
                return False
        except self.driver.module.DatabaseError:
            return False
        return get_meta(conn, "fts") == ("1" if self.driver.fts5 else "0") and (self.driver.vec_version is not None or get_meta(conn, "vec_model") == "")

    def _align_features(self, conn: Any) -> None:
        """Make the FTS and vector tables match what this driver can do now."""
        if self.driver.fts5:
            if get_meta(conn, "fts") != "1":
                _drop_quietly(conn, "drop table if exists chunks_fts")
                for statement in _statements(_FTS):
                    conn.execute(statement)
                set_meta(conn, "fts", "1")
        else:
            # without FTS5 the triggers could not run; the table is left for a later driver
            for trigger in _FTS_TRIGGERS:
                conn.execute(f"drop trigger if exists {trigger}")
            set_meta(conn, "fts", "0")
        if not self.driver.vec_version:
            # vectors added now are not in chunks_vec: rebuild it when sqlite-vec is back
            set_meta(conn, "vec_model", "")

    def move_aside(self, why: str) -> Path:
        """Rename the file (and its WAL) out of the way; a fresh index is built in its place."""
        self._close_connections()
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self.path.with_name(f"{self.path.name}.broken-{stamp}")
        n = 1
        while target.exists():
            n += 1
            target = self.path.with_name(f"{self.path.name}.broken-{stamp}-{n}")
        if self.path.exists():
            os.replace(self.path, target)
        for suffix in ("-wal", "-shm", "-journal"):
            side = self.path.with_name(self.path.name + suffix)
            if side.exists():
                side.unlink()
        self.vector_cache = None
        self.notices.append(f"The memory index {self.path} was moved aside to {target.name} because {why}; it is rebuilt from the Markdown.")
        return target

    def reset(self, why: str) -> None:
        """The index turned out damaged while in use: move it aside and open a fresh one."""
        with self._write_lock, self._read_lock, self._open_lock:
            self.move_aside(why)
            self._open_checked()

    def close(self) -> None:
        # the open lock too (innermost, as everywhere): a thread still opening the file (a
        # cancelled sync's, say) must not have its connection closed under it, which crashes sqlite
        with self._write_lock, self._read_lock, self._open_lock:
            self._close_connections()

    def _close_connections(self) -> None:
        for conn in (self._reader, self._writer):
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()
        self._reader = self._writer = None

    # -- transactions ----------------------------------------------------------------------

    @contextlib.contextmanager
    def write(self) -> Iterator[Any]:
        """One write transaction: readers keep seeing the last commit until it ends."""
        with self._write_lock:
            self.open()
            conn = self._writer
            conn.execute("begin immediate")
            try:
                yield conn
            except BaseException:
                conn.execute("rollback")
                raise
            conn.execute("commit")

    @contextlib.contextmanager
    def read(self) -> Iterator[Any]:
        """One read transaction: every query in it sees the same committed state."""
        with self._read_lock:
            self.open()
            conn = self._reader
            conn.execute("begin")
            try:
                yield conn
            finally:
                conn.execute("commit")

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the file and truncate it: a big sync's log would
        otherwise keep its size on disk. Readers in the middle of a search only make it do less:
        it waits for them briefly, not the writer's long busy timeout."""
        with self._write_lock:
            if self._writer is not None:
                with contextlib.suppress(Exception):
                    self._writer.execute(f"pragma busy_timeout = {CHECKPOINT_WAIT_MS}")
                    try:
                        self._writer.execute("pragma wal_checkpoint(truncate)")
                    finally:
                        self._writer.execute(f"pragma busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")

    def bytes_on_disk(self) -> int:
        total = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                total += os.stat(self.path.with_name(self.path.name + suffix)).st_size
        return total


def is_corruption(exc: BaseException) -> bool:
    """Whether an sqlite error means the file is damaged (not busy, not a bad query)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in (11, 26):  # SQLITE_CORRUPT, SQLITE_NOTADB
        return True
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def _statements(script: str) -> list[str]:
    """Split a script of our own (no ';' inside strings except after 'end')."""
    out, current = [], []
    for line in script.strip().splitlines():
        current.append(line)
        text = "\n".join(current).strip()
        if text.endswith(";") and (not text.lower().startswith("create trigger") or text.lower().endswith("end;")):
            out.append(text)
            current = []
    return out


def _drop_quietly(conn: Any, statement: str) -> None:
    with contextlib.suppress(Exception):
        conn.execute(statement)


def get_meta(conn: Any, key: str) -> str | None:
    try:
        row = conn.execute("select value from meta where key = ?", (key,)).fetchone()
    except Exception:
        return None
    return row[0] if row else None


def set_meta(conn: Any, key: str, value: str) -> None:
    conn.execute("insert into meta(key, value) values (?, ?) on conflict(key) do update set value = excluded.value", (key, value))
