"""State files repair themselves: temporary files of killed writes go, odd bytes orphan nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from clawbot.sessions.codec import make_data_converter
from clawbot.sessions.index import SessionIndex
from clawbot.sessions.store import SessionStore
from clawbot.statefile import atomic_write_json
from clawbot.types import Usage


def test_the_temporary_file_of_a_killed_write_is_deleted_by_the_next_process(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    directory = root / "main"
    directory.mkdir(parents=True)
    # a write killed between its temporary file and the rename, long ago
    killed = directory / ".sessions.json.abc123.tmp"
    killed.write_text('{"agent:main:main": {"key": ', encoding="utf-8")
    old = time.time() - 24 * 3600  # far older than any write takes
    os.utime(killed, (old, old))
    # another process is writing right now: its file is fresh and must stay
    live = directory / ".sessions.json.def456.tmp"
    live.write_text("{", encoding="utf-8")
    other = directory / ".other.json.ghi789.tmp"  # another file's temporary file: not ours to judge
    other.write_text("{", encoding="utf-8")
    os.utime(other, (old, old))
    script = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from clawbot.sessions.store import SessionStore
        from clawbot.types import Usage
        store = SessionStore(Path(sys.argv[1]))
        store.open("agent:main:main")
        store.record_turn("agent:main:main", usage=Usage(1, 1), model="m/x")
        """
    )
    done = subprocess.run([sys.executable, "-c", script, str(root)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not killed.exists()
    assert live.exists() and other.exists()
    assert SessionStore(root).get("agent:main:main").turns == 1


def test_a_rebuilt_index_finds_a_transcript_with_a_non_utf8_byte(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    store = SessionStore(root)
    session = store.open("agent:main:main")
    store.record_turn("agent:main:main", usage=Usage(3, 2), model="m/x")
    path = store.path_of(session.info, "main")
    with path.open("ab") as handle:  # a stray byte in a later line (a crash, a bad disk, an editor)
        handle.write(b'{"type": "custom", "id": "x1", "note": "caf\xe9"}\n')
    (root / "main" / "sessions.json").unlink()
    rebuilt = SessionIndex(root / "main", make_data_converter()).rebuild()
    assert rebuilt["agent:main:main"].session_id == session.info.session_id
    assert store.open("agent:main:main").info.session_id == session.info.session_id  # the conversation goes on


def test_atomic_writes_leave_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    for number in range(3):
        atomic_write_json(target, {"n": number})
    assert json.loads(target.read_text(encoding="utf-8")) == {"n": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]
