"""State files shared by processes: locked read-modify-writes, atomic private files, a robust rebuild."""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from clawbot.auth_profiles import AuthProfiles, Profile, key_fingerprint
from clawbot.sessions.codec import make_data_converter
from clawbot.sessions.index import SessionIndex
from clawbot.sessions.store import SessionStore
from clawbot.types import Usage

TURNS = 50


def _run_together(script: str, args: list[list[str]], tmp_path: Path) -> list[subprocess.CompletedProcess[str]]:
    """Start one process per argument list; they begin their loops at the same moment."""
    go = tmp_path / "go"
    preamble = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        deadline = time.monotonic() + 30
        while not Path({str(go)!r}).exists() and time.monotonic() < deadline:
            time.sleep(0.002)
        """
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", preamble + textwrap.dedent(script), *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for extra in args
    ]
    time.sleep(0.5)  # let both import clawbot and wait
    go.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return results


def test_two_processes_recording_turns_on_one_agent_index_lose_nothing(tmp_path: Path) -> None:
    script = f"""
        from clawbot.sessions.store import SessionStore
        from clawbot.types import Usage
        store = SessionStore(Path(sys.argv[1]))
        key = sys.argv[2]
        for _ in range({TURNS}):
            session = store.open(key)
            store.record_turn(key, usage=Usage(1, 1), model="m/x")
        """
    root = tmp_path / "sessions"
    keys = ["agent:main:one", "agent:main:two"]
    results = _run_together(script, [[str(root), key] for key in keys], tmp_path)
    for result in results:
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr, result.stderr
    store = SessionStore(root)
    infos = {info.key: info for info in store.list("main")}
    assert sorted(infos) == keys
    assert sum(info.turns for info in infos.values()) == 2 * TURNS
    assert all(info.turns == TURNS and info.usage == Usage(TURNS, TURNS) for info in infos.values())
    assert len(list((root / "main").glob("*.jsonl"))) == 2  # one session per key, never recreated
    assert not list((root / "main").glob("*.tmp"))


def test_auth_state_written_by_two_processes_stays_valid_and_keeps_both(tmp_path: Path) -> None:
    script = f"""
        from clawbot.auth_profiles import AuthProfiles, Profile
        from clawbot.config.schema import AuthProfileConfig
        state = Path(sys.argv[1])
        profile = Profile("openai", sys.argv[2], "sk-x")
        for _ in range({TURNS}):
            AuthProfiles([], state).cool_down(profile)
            json.loads(state.read_text())  # readers never see a torn file
        """
    state = tmp_path / "state" / "auth-state.json"
    results = _run_together("import json\n" + textwrap.dedent(script), [[str(state), "a"], [str(state), "b"]], tmp_path)
    for result in results:
        assert result.returncode == 0, result.stderr
    health = json.loads(state.read_text(encoding="utf-8"))
    key = key_fingerprint("sk-x")  # health is kept per key, under its fingerprint
    assert health[f"openai/a#{key}"]["failures"] == TURNS and health[f"openai/b#{key}"]["failures"] == TURNS
    assert not list(state.parent.glob("*.tmp"))


def test_a_cooldown_counted_by_another_process_is_honoured_and_kept(tmp_path: Path) -> None:
    state = tmp_path / "auth-state.json"
    now = [1000.0]
    here = AuthProfiles([], state, clock=lambda: now[0])
    there = AuthProfiles([], state, clock=lambda: now[0])  # e.g. `clawbot agent` next to `clawbot run`
    a, b = Profile("openai", "default"), Profile("anthropic", "default")
    there.cool_down(a)
    assert here.cool_down(a) == 300.0  # the second failure in a row: 5 min, not 1 min again
    here.cool_down(b)
    there.cool_down(b)
    saved = json.loads(state.read_text(encoding="utf-8"))
    assert saved["openai/default"]["failures"] == 2 and saved["anthropic/default"]["failures"] == 2


def test_record_turn_recreates_an_entry_that_vanished(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.open("agent:main:main")
    session.transcript.append("custom", kind="x")
    index = SessionIndex(tmp_path / "main", store.converter)
    index.write({})  # another process reset the index meanwhile
    info = store.record_turn("agent:main:main", usage=Usage(3, 4), model="m/x")
    assert info.session_id == session.info.session_id and info.turns == 1
    assert store.get("agent:main:main").usage == Usage(3, 4)
    other = store.record_turn("agent:main:gone", usage=Usage(1, 1), model="m/x", session_id="abc")
    assert other.session_id == "abc" and store.get("agent:main:gone").turns == 1


def test_a_store_sees_what_another_process_wrote_between_its_turns(tmp_path: Path) -> None:
    ours, theirs = SessionStore(tmp_path), SessionStore(tmp_path)
    ours.open("agent:main:main")
    ours.record_turn("agent:main:main", usage=Usage(1, 1), model="m/x")
    assert ours.get("agent:main:main").turns == 1  # read back from what this store wrote
    theirs.record_turn("agent:main:main", usage=Usage(2, 2), model="m/y")
    seen = ours.get("agent:main:main")
    assert seen.turns == 2 and seen.model == "m/y" and seen.usage == Usage(3, 3)
    assert ours.record_turn("agent:main:main", usage=Usage(1, 1), model=None).turns == 3


def test_one_malformed_index_entry_is_rebuilt_and_the_others_kept(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = SessionStore(tmp_path)
    broken = store.open("agent:main:broken")
    store.open("agent:main:fine")
    store.record_turn("agent:main:fine", usage=Usage(5, 5), model="m/x")
    path = tmp_path / "main" / "sessions.json"
    raw = json.loads(path.read_text())
    raw["agent:main:broken"]["turns"] = "many"
    path.write_text(json.dumps(raw))
    with caplog.at_level(logging.WARNING):
        info = store.record_turn("agent:main:broken", usage=Usage(1, 1), model="m/x")
    assert info.session_id == broken.info.session_id and info.turns == 1
    assert "the entry for 'agent:main:broken' is malformed (turns is 'many', not a count)" in caplog.text
    assert store.get("agent:main:fine").usage == Usage(5, 5)


def test_rebuild_skips_bad_headers_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = SessionStore(tmp_path)
    good = store.open("agent:main:good")
    directory = tmp_path / "main"
    bad = {
        "list.jsonl": "[1, 2]\n",
        "string.jsonl": '"session"\n',
        "no-id.jsonl": '{"type": "session", "key": "agent:main:x"}\n',
        "number-key.jsonl": '{"type": "session", "key": 5, "id": "abc"}\n',
        "number-id.jsonl": '{"type": "session", "key": "agent:main:y", "id": 7}\n',
        "empty.jsonl": "",
        "garbage.jsonl": "{not json\n",
        "binary.jsonl": b"\xff\xfe\x00".decode("latin-1"),
    }
    for name, text in bad.items():
        (directory / name).write_text(text, encoding="latin-1")
    (directory / "sessions.json").unlink()
    with caplog.at_level(logging.WARNING, logger="clawbot.sessions.index"):
        rebuilt = SessionIndex(directory, make_data_converter()).rebuild()
    assert list(rebuilt) == ["agent:main:good"] and rebuilt["agent:main:good"].session_id == good.info.session_id
    warned = caplog.text
    for name in ("list.jsonl", "no-id.jsonl", "number-key.jsonl", "number-id.jsonl", "garbage.jsonl"):
        assert name in warned
    assert store.get("agent:main:good").session_id == good.info.session_id  # read() rebuilds too


def test_rebuild_tolerates_a_transcript_vanishing_meanwhile(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    kept = store.open("agent:main:kept")

    class RacyDir(type(tmp_path)):  # the glob still lists a file another process just deleted
        def glob(self, pattern):  # noqa: ANN001, ANN202
            yield from super().glob(pattern)
            yield self / "deleted-meanwhile.jsonl"

    rebuilt = SessionIndex(RacyDir(tmp_path / "main"), store.converter).rebuild()
    assert list(rebuilt) == ["agent:main:kept"] and rebuilt["agent:main:kept"].session_id == kept.info.session_id


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_session_directories_are_private_and_state_files_0600(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        state = tmp_path / "state"
        store = SessionStore(state / "sessions")
        session = store.open("agent:main:main")
        store.record_turn("agent:main:main", usage=Usage(1, 1), model="m/x")
        AuthProfiles([], state / "auth-state.json").cool_down(Profile("openai", "default"))
    finally:
        os.umask(old)

    def mode(path: Path) -> int:
        return stat.S_IMODE(path.stat().st_mode)

    assert mode(state) == 0o700
    assert mode(state / "sessions") == 0o700
    assert mode(state / "sessions" / "main") == 0o700
    assert mode(state / "sessions" / "main" / "sessions.json") == 0o600
    assert mode(session.transcript.path) == 0o600
    assert mode(state / "auth-state.json") == 0o600


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_a_directory_made_by_the_transcript_alone_is_private(tmp_path: Path) -> None:
    from clawbot.sessions.transcript import Transcript

    old = os.umask(0o022)
    try:
        path = tmp_path / "a" / "b" / "s.jsonl"
        Transcript.create(path, make_data_converter(), session_id="s", key="agent:main:main", agent_id="main")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "a" / "b").stat().st_mode) == 0o700


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_atomic_write_json_sets_the_mode_and_leaves_no_temporary_file_on_failure(tmp_path: Path) -> None:
    from clawbot.statefile import atomic_write_json

    target = tmp_path / "state.json"
    atomic_write_json(target, {"a": [1, "é"]}, mode=0o640)
    assert json.loads(target.read_text(encoding="utf-8")) == {"a": [1, "é"]}
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    atomic_write_json(target, {"b": 2}, durable=True)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and json.loads(target.read_text()) == {"b": 2}
    (tmp_path / "a-directory").mkdir()
    with pytest.raises(OSError):
        atomic_write_json(tmp_path / "a-directory", {"c": 3})  # the rename fails
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-directory", "state.json"]


@pytest.mark.skipif(os.name != "posix", reason="fcntl locks (a no-op elsewhere)")
def test_locked_excludes_another_process(tmp_path: Path) -> None:
    from clawbot.statefile import locked

    target = tmp_path / "state.json"
    script = f"""
import sys, time
from pathlib import Path
from clawbot.statefile import locked
with locked(Path({str(target)!r})):
    print("in", flush=True)
    time.sleep(0.5)
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "in\n"
        started = time.monotonic()
        with locked(target):
            waited = time.monotonic() - started
    finally:
        proc.wait(10)
        proc.stdout.close()
    assert waited > 0.2


def test_the_last_user_turn_survives_a_rebuild_and_system_events_do_not_move_it(tmp_path: Path) -> None:
    """What the idle and daily resets count from is read back from the transcript's turn entries."""
    store = SessionStore(tmp_path)
    session = store.open("agent:main:main")
    person = store.record_turn("agent:main:main", usage=Usage(1, 1), model="m", transcript=session.transcript)
    time.sleep(0.01)  # the stamps have millisecond resolution
    after_event = store.record_turn("agent:main:main", usage=Usage(1, 1), model="m", transcript=session.transcript, system_event=True)
    assert after_event.last_user_at == person.last_user_at != after_event.updated_at
    (tmp_path / "main" / "sessions.json").unlink()
    rebuilt = store.get("agent:main:main")
    turns = [json.loads(line) for line in session.transcript.path.read_text().splitlines() if '"type": "turn"' in line]
    assert rebuilt.turns == 2 and rebuilt.updated_at == turns[1]["timestamp"]
    assert rebuilt.last_user_at == turns[0]["timestamp"]
