"""A malformed state file is reported once per problem, however many came before it.

A long-running gateway meets many problems; clawbot remembers the most recent ones, so the
newest is never told on every read once the memory is full (the oldest is forgotten instead).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest
from clawbot.statefile import report_once


def _told(caplog: pytest.LogCaptureFixture, path: Path) -> int:
    return sum(1 for r in caplog.records if r.getMessage().startswith(f"{path}: "))


def test_a_problem_after_a_thousand_others_is_still_told_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    for index in range(1_500):
        report_once(tmp_path / f"other-{index}.json", "malformed")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="clawbot"):
        for _ in range(3):
            report_once(tmp_path / "sessions.json", "the entry is malformed")
    assert _told(caplog, tmp_path / "sessions.json") == 1


def test_readers_in_several_threads_tell_a_problem_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "shared.json"
    start = threading.Barrier(8)

    def read() -> None:
        start.wait()
        for _ in range(200):
            report_once(path, "not JSON")

    with caplog.at_level(logging.WARNING, logger="clawbot"):
        threads = [threading.Thread(target=read) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert _told(caplog, path) == 1
