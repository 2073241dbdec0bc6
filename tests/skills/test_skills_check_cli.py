"""``clawbot skills check`` reports every SKILL.md it cannot take as written, and the bundled
skills are eligible however clawbot was started (whatever PATH the process got).

Real CLI runs in process (click's CliRunner), real files under tmp_path.
"""

from __future__ import annotations

import json
import os
import sysconfig
from pathlib import Path

import pytest
from clawbot.cli.main import cli
from click.testing import CliRunner

# (folder, SKILL.md bytes, severity, line, reason): one malformed file each.
MALFORMED = [
    ("no-frontmatter", b"# Notes\n\nKeeps notes.\n", "warning", 1, "no frontmatter: read as skill 'no-frontmatter'"),
    ("no-frontmatter-no-title", b"Just a sentence.\n", "warning", 1, "no frontmatter: read as skill 'no-frontmatter-no-title'"),
    ("empty", b"", "error", None, "no description"),
    ("unclosed", b"---\nname: unclosed\ndescription: x\n", "error", 1, "never closed by a `---` line"),
    ("bad-yaml", b"---\nname: [unbalanced\ndescription: x\n---\n", "error", 3, "invalid YAML in the frontmatter"),
    ("a-list", b"---\n- a\n- b\n---\n", "error", 2, "must be a mapping of keys to values, not a list"),
    ("bad-name", b"---\nname: bad name!\ndescription: x\n---\n", "error", 2, "'bad name!' is not a valid skill name"),
    ("no-description", b"---\nname: no-description\n---\n# T\n", "error", 1, "no description"),
    (
        "wrong-type",
        b"---\ndescription: x\nmetadata: {clawbot: {requires: {bins: 3}}}\n---\n",
        "error",
        3,
        "`metadata.clawbot.requires.bins` must be a list of strings",
    ),
    ("bad-metadata-json", b"---\ndescription: x\nmetadata: '{not json'\n---\n", "error", 3, "not valid JSON"),
    ("not-utf8", b"---\ndescription: caf\xe9\n---\n", "error", None, "not UTF-8 text"),
]


def clean_environment(monkeypatch: pytest.MonkeyPatch, home: Path, path: str) -> None:
    for key in [k for k in os.environ if k.startswith("CLAWBOT_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("CLAWBOT_HOME", str(home))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", path)
    monkeypatch.setenv("COLUMNS", "400")


def config_with_workspace(tmp_path: Path) -> tuple[Path, Path]:
    workspace = tmp_path / "ws"
    (workspace / "skills").mkdir(parents=True)
    config = tmp_path / "clawbot.toml"
    config.write_text(f'[agents.defaults]\nworkspace = "{workspace}"\n', encoding="utf-8")
    return config, workspace


def test_check_reports_each_malformed_file_with_the_file_and_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clean_environment(monkeypatch, tmp_path, os.environ.get("PATH", os.defpath))
    config, workspace = config_with_workspace(tmp_path)
    for folder, content, *_ in MALFORMED:
        (workspace / "skills" / folder).mkdir()
        (workspace / "skills" / folder / "SKILL.md").write_bytes(content)

    result = CliRunner().invoke(cli, ["--config", str(config), "skills", "check"])
    assert result.exit_code == 1, result.output  # errors among them
    lines = result.output.splitlines()
    for folder, _, severity, line, reason in MALFORMED:
        where = f"{workspace / 'skills' / folder / 'SKILL.md'}" + (f":{line}" if line else "")
        reported = [text for text in lines if f"{where}: " in text]
        assert len(reported) == 1, f"{folder}: {reported or result.output}"
        assert reported[0].startswith(f"{severity}: "), reported[0]
        assert reason in reported[0], reported[0]
    errors = sum(1 for *_, severity, _, _ in MALFORMED if severity == "error")
    assert f"{errors} malformed skill file(s)" in result.output


def test_a_skill_without_frontmatter_alone_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clean_environment(monkeypatch, tmp_path, os.environ.get("PATH", os.defpath))
    config, workspace = config_with_workspace(tmp_path)
    (workspace / "skills" / "notes").mkdir()
    (workspace / "skills" / "notes" / "SKILL.md").write_text("# Notes\n\nKeeps notes.\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--config", str(config), "skills", "check"])
    assert result.exit_code == 0, result.output  # still read and used
    assert f"warning: {workspace / 'skills' / 'notes' / 'SKILL.md'}:1: no frontmatter" in result.output


def bundled_skills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str) -> dict[str, dict]:
    clean_environment(monkeypatch, tmp_path / path.replace(os.pathsep, "_").replace("/", "_"), path)
    config, _ = config_with_workspace(tmp_path / f"run{len(path)}")
    result = CliRunner().invoke(cli, ["--config", str(config), "skills", "list", "--json"])
    assert result.exit_code == 0, result.output
    return {s["name"]: s for s in json.loads(result.stdout)["skills"] if s["source"] == "bundled"}


def test_bundled_skills_are_eligible_whatever_path_clawbot_was_started_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `uv run clawbot` / an activated venv: the entry point's directory is on PATH;
    # `/path/to/venv/bin/clawbot` run from a service: only the system's directories.
    scripts = sysconfig.get_path("scripts")
    system = os.pathsep.join(["/usr/local/bin", "/usr/bin", "/bin"])
    started = {
        "uv run": bundled_skills(tmp_path, monkeypatch, scripts + os.pathsep + system),
        "entry point by its path": bundled_skills(tmp_path, monkeypatch, system),
    }
    for how, skills in started.items():
        assert {"clawbot-config", "skill-creator"} <= set(skills), how
        for name, skill in skills.items():
            assert skill["eligible"], f"{name} started by {how}: {skill['reasons']}"
    assert started["uv run"] == started["entry point by its path"]
