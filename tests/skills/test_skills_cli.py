"""`clawbot skills list` and `clawbot skills check`, run as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from clawbot.testing.cli import invoke_cli

from .skillhelpers import config_for, write_skill


def _setup(tmp_path: Path, extra: str = "") -> tuple[Path, Path]:
    home = tmp_path / "home"
    workspace = tmp_path / "workspace"
    home.mkdir()
    (home / "clawbot.toml").write_text(config_for(workspace, extra=extra), encoding="utf-8")
    return home, workspace


def test_list_json_says_where_each_skill_comes_from_and_why_it_is_not_in_the_prompt(tmp_path: Path) -> None:
    home, workspace = _setup(
        tmp_path,
        extra='[skills]\ndeny = ["denied"]\n[[agents.list]]\nid = "main"\ndefault = true\n[[agents.list]]\nid = "coder"\nskills = { allow = ["create-python-script"] }\n',
    )
    seed = workspace / "skills" / "create-python-script" / "SKILL.md"
    seed.parent.mkdir(parents=True)
    seed.write_text("# create-python-script\n\n当用户请求创建 Python 脚本时使用本 Skill。\n", encoding="utf-8")
    write_skill(workspace / "skills", "denied")
    write_skill(workspace / "skills", "needs-gemini", meta={"emoji": "♊️", "requires": {"bins": ["gemini-not-installed"]}})
    write_skill(workspace / "skills", "manual", frontmatter="disable-model-invocation: true")
    write_skill(home / "skills", "denied", description="the user's copy")

    result = invoke_cli("skills", "list", "--json", home=home)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["agent"] == "main"
    skills = {s["name"]: s for s in payload["skills"]}
    assert skills["create-python-script"]["location"] == str(seed)
    assert skills["create-python-script"]["in_prompt"] is True
    assert skills["denied"]["excluded_because"] == "denied by skills.deny" and skills["denied"]["source"] == "workspace"
    assert skills["needs-gemini"]["eligible"] is False
    assert skills["needs-gemini"]["reasons"] == ["needs the `gemini-not-installed` binary on PATH"]
    assert skills["needs-gemini"]["requires"]["bins"] == ["gemini-not-installed"] and skills["needs-gemini"]["emoji"] == "♊️"
    assert skills["manual"]["excluded_because"].startswith("disable-model-invocation")
    assert skills["skill-creator"]["source"] == "bundled" and skills["skill-creator"]["in_prompt"] is True
    (shadowed,) = payload["shadowed"]
    assert shadowed["name"] == "denied" and shadowed["source"] == "user"
    assert shadowed["shadowed_by"] == {"source": "workspace", "location": str(workspace / "skills" / "denied" / "SKILL.md")}

    coder = json.loads(invoke_cli("skills", "list", "--agent", "coder", "--json", home=home).stdout)
    in_prompt = [s["name"] for s in coder["skills"] if s["in_prompt"]]
    assert in_prompt == ["create-python-script"]


def test_list_table_and_unknown_agent(tmp_path: Path) -> None:
    home, workspace = _setup(tmp_path, extra='[skills]\ndeny = ["denied"]\n')
    write_skill(workspace / "skills", "denied")
    write_skill(home / "skills", "denied")
    result = invoke_cli("skills", "list", home=home)
    assert result.returncode == 0, result.stderr
    assert "skills of agent main" in result.stdout
    assert "denied by skills.deny" in result.stdout
    assert "shadowed by workspace" in result.stdout
    assert "skill-creator" in result.stdout and "bundled" in result.stdout

    missing = invoke_cli("skills", "list", "--agent", "ghost", home=home)
    assert missing.returncode == 2
    assert "no agent 'ghost'" in missing.stderr and "Traceback" not in missing.stderr


def test_check_reports_malformed_files_with_their_line_and_exits_1(tmp_path: Path) -> None:
    home, workspace = _setup(tmp_path, extra='[skills]\nallow = ["ghost-skill"]\n')
    broken = workspace / "skills" / "broken" / "SKILL.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("---\nname: broken\ndescription: ok\nmetadata: {clawbot: {os: [linux}\n---\n", encoding="utf-8")
    write_skill(workspace / "skills", "needs-key", meta={"requires": {"env": ["SKILLS_TEST_KEY"]}})

    result = invoke_cli("skills", "check", home=home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"error: {broken}:4: invalid YAML" in result.stdout
    assert "not eligible: needs-key (workspace): needs the environment variable `SKILLS_TEST_KEY` set" in result.stdout
    assert "skills.allow names 'ghost-skill', which matches no skill" in result.stdout
    assert "1 malformed skill file(s)" in result.stdout

    listing = invoke_cli("skills", "list", home=home)
    assert listing.returncode == 0 and "could not be read" in listing.stdout


def test_check_passes_when_every_file_reads(tmp_path: Path) -> None:
    home, workspace = _setup(tmp_path)
    write_skill(workspace / "skills", "fine")
    result = invoke_cli("skills", "check", home=home, env={"SKILLS_TEST_KEY": "x"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "error" not in result.stdout
    assert "skills read" in result.stdout


def test_help_lists_the_skills_command(tmp_path: Path) -> None:
    result = invoke_cli("--help", home=tmp_path)
    assert result.returncode == 0
    assert "skills" in result.stdout and "List the skills each agent has" in result.stdout


def test_list_says_which_skills_the_full_catalogue_left_out_of_the_prompt(tmp_path: Path) -> None:
    home, workspace = _setup(tmp_path, extra="[skills]\nprompt_max_chars = 1200\nprompt_description_max_chars = 60\n")
    for index in range(12):
        write_skill(workspace / "skills", f"planted-{index:02d}", description="Use this skill for its topic. " * 5)
    payload = json.loads(invoke_cli("skills", "list", "--json", home=home).stdout)
    skills = {s["name"]: s for s in payload["skills"]}
    assert skills["planted-00"]["in_prompt"] is True  # workspace skills come first
    left_out = [name for name, s in skills.items() if s["excluded_because"] and "catalogue is full" in s["excluded_because"]]
    assert "planted-11" in left_out and all(skills[name]["in_prompt"] is False for name in left_out)
    listed = sum(1 for s in skills.values() if s["in_prompt"])
    assert 0 < listed < 12

    table = invoke_cli("skills", "list", home=home).stdout
    assert f"{len(skills)} skills, {listed} in the prompt of agent main" in " ".join(table.split())
    assert "catalogue is full" in " ".join(table.split())
