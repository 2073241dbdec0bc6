"""`clawbot doctor` names an unsafe credential file and the chmod that fixes it."""

from __future__ import annotations

import json
from pathlib import Path

from .clihelpers import run_cli


def test_doctor_reports_a_readable_credential_file(tmp_path: Path) -> None:
    creds = tmp_path / "credentials"
    creds.mkdir(mode=0o700)
    stored = creds / "openai.json"
    stored.write_text(json.dumps({"api_key": "sk-leaky"}))
    stored.chmod(0o644)
    result = run_cli("doctor", home=tmp_path)
    assert result.returncode == 1
    assert "openai.json" in result.stdout and "chmod 600" in result.stdout
    assert "sk-leaky" not in result.stdout
