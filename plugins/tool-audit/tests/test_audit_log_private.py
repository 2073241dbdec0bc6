"""The audit log lives in clawbot's state directory: each folder it creates is private (0700),
the log itself 0600, whatever the umask."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from clawbot_tool_audit.audit import AuditLog


def test_the_audit_log_creates_each_missing_folder_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        AuditLog(tmp_path / "home" / ".clawbot" / "audit.jsonl").append({"tool": "exec"})
    finally:
        os.umask(old)
    for path, wanted in ((tmp_path / "home", 0o700), (tmp_path / "home" / ".clawbot", 0o700), (tmp_path / "home" / ".clawbot" / "audit.jsonl", 0o600)):
        assert stat.S_IMODE(path.stat().st_mode) == wanted, path
