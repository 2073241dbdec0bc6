"""The CLI's log file: private, size-capped and rotated; where the terminal is a chat, the only
place log lines go (unless --verbose); a state dir that cannot hold it leaves the terminal logging as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = r"""
import logging, os, sys
from pathlib import Path
import clawbot.cli.logs as logs
mode = sys.argv[3]
logs.configure_logging("warning", os.environ, state_root=Path(sys.argv[1]), max_bytes=1_000_000, backups=3, verbose=mode == "verbose", chat_terminal=mode != "plain")
log = logging.getLogger("clawbot.test")
for index in range(int(sys.argv[2])):
    try:
        raise RuntimeError("boom " + "x" * 2000)
    except RuntimeError:
        log.error("failure %d", index, exc_info=True)
"""


def run(state_root: Path, count: int, mode: str = "plain") -> subprocess.CompletedProcess[str]:
    """``mode``: plain (a command's terminal), chat (the terminal is a chat) or verbose (a chat, --verbose)."""
    argv = [sys.executable, "-c", SCRIPT, str(state_root), str(count), mode]
    return subprocess.run(argv, capture_output=True, text=True, check=True)


def test_the_log_file_rotates_and_stays_within_its_size(tmp_path: Path) -> None:
    LOG_FILE_BYTES, LOG_FILE_BACKUPS = 1_000_000, 3  # as the script configures them
    done = run(tmp_path, 1500)  # about 4 MB of tracebacks

    files = sorted((tmp_path / "logs").iterdir())
    assert [f.name for f in files] == ["clawbot.log", *(f"clawbot.log.{n}" for n in range(1, LOG_FILE_BACKUPS + 1))]
    assert all(f.stat().st_size <= LOG_FILE_BYTES for f in files)
    assert "failure 1499" in (tmp_path / "logs" / "clawbot.log").read_text(encoding="utf-8")
    assert "Traceback" not in done.stderr and done.stderr.count("RuntimeError: boom") == 1500
    # tracebacks quote requests and provider answers: only the owner reads them, rotated files too
    assert all(f.stat().st_mode & 0o777 == 0o600 for f in files)
    assert (tmp_path / "logs").stat().st_mode & 0o777 == 0o700


def test_a_state_dir_without_room_for_the_log_keeps_logging_to_the_terminal(tmp_path: Path) -> None:
    (tmp_path / "logs").write_text("a file where the directory would go")

    done = run(tmp_path, 1)

    assert "cannot write the log file" in done.stderr and "failure 0 (RuntimeError: boom" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_chat_terminal_gets_no_log_lines_unless_verbose(tmp_path: Path) -> None:
    quiet = run(tmp_path, 1, "chat")
    assert quiet.stderr == ""
    done = run(tmp_path, 1, "verbose")

    assert "ERROR clawbot.test: failure 0" in done.stderr and "Traceback (most recent call last)" in done.stderr
    assert "failure 0" in (tmp_path / "logs" / "clawbot.log").read_text(encoding="utf-8")
