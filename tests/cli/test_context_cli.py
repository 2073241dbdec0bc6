"""`clawbot context` reports the system prompt's size per section, file, skill and tool."""

from __future__ import annotations

import json
from pathlib import Path

from clawbot.testing.cli import invoke_cli


def test_context_reports_sections_files_skills_and_tools(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "skills" / "greet").mkdir(parents=True)
    (ws / "skills" / "greet" / "SKILL.md").write_text("---\nname: greet\ndescription: Greet people warmly.\n---\n# greet\n")
    (ws / "AGENTS.md").write_text("x" * 30_000)
    (ws / "SOUL.md").write_text("Calm.\n")
    (tmp_path / "clawbot.toml").write_text(f'[agents.defaults]\nworkspace = "{ws}"\n\n[tools]\nallow = ["read", "write", "exec"]\n')
    result = invoke_cli("context", "--json", home=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    keys = [s["key"] for s in report["sections"]]
    assert keys[0] == "tooling" and "skills" in keys and keys[-2:] == ["messaging", "runtime"]
    files = {f["name"]: f for f in report["files"]}
    assert files["AGENTS.md"]["raw_chars"] == 30_000 and files["AGENTS.md"]["truncated"]
    assert files["AGENTS.md"]["injected_chars"] < 20_500
    assert files["USER.md"]["missing"] and files["SOUL.md"]["injected_chars"] == len("Calm.\n")
    greet = next(s for s in report["skills"]["entries"] if s["name"] == "greet")
    assert greet["block_chars"] > len("Greet people warmly.")
    assert [t["name"] for t in report["tools"]["entries"]] == ["read", "write", "exec"]
    assert report["system_prompt"]["chars"] == report["system_prompt"]["stable_chars"] + report["system_prompt"]["volatile_chars"] + 2

    table = invoke_cli("context", home=tmp_path)
    assert table.returncode == 0 and "Sections" in table.stdout and "AGENTS.md" in table.stdout and "truncated" in table.stdout
