"""Whatever creates clawbot's state directory creates it private (0700, every missing folder),
so `clawbot doctor` never warns about a directory clawbot itself made; files that hold whole
conversations are created 0600."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from clawbot.testing.cli import invoke_cli

CLEAN = {"OPENAI_BASE_URL": None, "OPENAI_API_KEY": None, "OLLAMA_API_KEY": None, "ANTHROPIC_BASE_URL": None}


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_first_run_leaves_a_state_dir_that_doctor_calls_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**CLEAN, "CLAWBOT_HOME": None}  # the state dir is ~/.clawbot, as for a user
    with umask(0o022):
        run = invoke_cli("run", home=home, env=env)
        assert run.returncode == 1  # no model yet: it prints the options
        assert mode(home / ".clawbot") == 0o700
        doctor = invoke_cli("doctor", home=home, env=env)
    assert f"ok   state    {home / '.clawbot'} is private" in doctor.stdout, doctor.stdout
    assert "readable by other users" not in doctor.stdout


def _log_file(state: Path) -> None:
    from clawbot.cli.logs import configure_logging

    configure_logging("warning", {}, state_root=state)
    configure_logging("warning", {})  # let go of the file again


def _approvals(state: Path) -> None:
    from clawbot_tools.runtime.approvals_store import ApprovalsStore
    from clawbot_tools.runtime.executables import Program

    ApprovalsStore(state / "exec-approvals.json").add("main", [Program("/bin/true", "true")])


@pytest.mark.parametrize("write", [_log_file, _approvals], ids=["log file", "exec approvals"])
def test_every_writer_creates_each_missing_state_folder_private(tmp_path: Path, write: Callable[[Path], None]) -> None:
    state = tmp_path / "home" / ".clawbot"
    with umask(0o022):
        write(state)
    assert mode(tmp_path / "home") == 0o700 and mode(state) == 0o700
    for directory, folders, _files in os.walk(state):
        assert all(mode(Path(directory, folder)) == 0o700 for folder in folders)


def test_a_fake_llm_recording_is_created_private(tmp_path: Path) -> None:
    from clawbot.testing.fake_llm.record import RequestRecorder

    with umask(0o022):
        recorder = RequestRecorder(tmp_path / "requests.jsonl")
        recorder.close()
    assert mode(tmp_path / "requests.jsonl") == 0o600
