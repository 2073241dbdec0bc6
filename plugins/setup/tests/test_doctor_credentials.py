"""`clawbot doctor` names an unsafe credential file and the chmod that fixes it."""

from __future__ import annotations

import json
from pathlib import Path

from clawbot.testing.cli import invoke_cli


def test_doctor_reports_a_readable_credential_file(tmp_path: Path) -> None:
    creds = tmp_path / "credentials"
    creds.mkdir(mode=0o700)
    stored = creds / "openai.json"
    stored.write_text(json.dumps({"api_key": "sk-leaky"}))
    stored.chmod(0o644)
    result = invoke_cli("doctor", home=tmp_path)
    assert result.returncode == 1
    assert "openai.json" in result.stdout and "chmod 600" in result.stdout
    assert "sk-leaky" not in result.stdout


def test_doctor_warns_about_a_tool_policy_entry_that_matches_no_tool(tmp_path: Path) -> None:
    """A typo in tools.deny silently denies nothing: the doctor must say so, by path."""
    config = tmp_path / "clawbot.toml"
    config.write_text('[tools]\ndeny = ["exce", "web_fetch"]\n')
    result = invoke_cli("doctor", "--config", str(config), home=tmp_path)
    assert "tools.deny[0]: 'exce' matches no installed tool" in result.stdout
    assert "web_fetch" not in result.stdout.split("tools.deny[0]")[1].split("\n")[0]
