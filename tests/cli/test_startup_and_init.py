"""Start-up says which config file, workspace and model are in use; `init --workspace DIR`
makes DIR the workspace in use (or says exactly how, when --config or $CLAWBOT_CONFIG names another file)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from clawbot.cli.main import cli
from clawbot.testing.cli import invoke_cli
from click.testing import CliRunner

SECRETS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


def invoke(home: Path, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None):
    environment: dict[str, str | None] = {k: None for k in os.environ if k.startswith("CLAWBOT_") or k in SECRETS}
    environment.update({"CLAWBOT_HOME": str(home / ".clawbot"), "HOME": str(home), "NO_COLOR": "1", **(env or {})})
    with contextlib.chdir(cwd or home):
        return CliRunner().invoke(cli, list(args), env=environment, catch_exceptions=False)


def test_init_workspace_becomes_the_workspace_in_use_and_start_up_says_so(tmp_path: Path, fake_llm_thread) -> None:
    fake_llm_thread.reply("hi there")
    chosen = tmp_path / "my-ws"
    result = invoke(tmp_path, "init", "--workspace", str(chosen))
    assert result.exit_code == 0, result.output
    written = tmp_path / ".clawbot" / "clawbot.toml"
    assert f'Set agents.defaults.workspace = "{chosen}" in {written}' in result.output
    assert written.read_text() == f'[agents.defaults]\nworkspace = "{chosen}"\n'
    assert (written.stat().st_mode & 0o777) == 0o600 and (chosen / "AGENTS.md").is_file()

    env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": f"{fake_llm_thread.base_url}/v1"}
    turn = invoke(tmp_path, "agent", "-m", "hello", env=env)
    assert turn.exit_code == 0, turn.output
    assert turn.stderr.splitlines() == [f"clawbot: agent main on openai/gpt-5 (detected from the environment); config {written}; workspace {chosen}"]
    assert turn.stdout == "hi there\n"

    again = invoke(tmp_path, "init", "--workspace", str(chosen))
    assert "Agent main uses this workspace." in again.output


def test_init_keeps_the_comments_of_the_file_it_updates(tmp_path: Path) -> None:
    written = tmp_path / ".clawbot" / "clawbot.toml"
    written.parent.mkdir(mode=0o700)
    written.write_text('# mine\n[agents.defaults]\nworkspace = "~/old"  # old place\nthinking = "low"\n')
    result = invoke(tmp_path, "init", "--workspace", str(tmp_path / "new"))
    assert result.exit_code == 0, result.output
    assert written.read_text() == f'# mine\n[agents.defaults]\nworkspace = "{tmp_path / "new"}"  # old place\nthinking = "low"\n'


def test_init_sets_the_users_file_even_beside_a_clawbot_toml_in_the_current_directory(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    local = project / "clawbot.toml"
    local.write_text('[agents.defaults]\nworkspace = "~/elsewhere"\n')
    written = tmp_path / ".clawbot" / "clawbot.toml"
    result = invoke(tmp_path, "init", "--workspace", str(tmp_path / "ws"), cwd=project)
    assert result.exit_code == 0, result.output
    assert f'Set agents.defaults.workspace = "{tmp_path / "ws"}" in {written}' in result.output
    assert "precedence" not in result.output
    assert local.read_text() == '[agents.defaults]\nworkspace = "~/elsewhere"\n'


def test_init_says_how_when_clawbot_config_names_another_file(tmp_path: Path) -> None:
    named = tmp_path / "team" / "clawbot.toml"
    named.parent.mkdir()
    named.write_text('[agents.defaults]\nworkspace = "~/elsewhere"\n')
    result = invoke(tmp_path, "init", "--workspace", str(tmp_path / "ws"), env={"CLAWBOT_CONFIG": str(named)})
    assert result.exit_code == 0, result.output
    assert f"{named} is named by $CLAWBOT_CONFIG and is used instead of {tmp_path / '.clawbot' / 'clawbot.toml'}" in result.output
    assert f"put this line under [agents.defaults] in {named}:" in result.output
    assert f'    workspace = "{tmp_path / "ws"}"' in result.output
    assert named.read_text() == '[agents.defaults]\nworkspace = "~/elsewhere"\n'
    assert not (tmp_path / ".clawbot" / "clawbot.toml").exists()


def test_init_names_the_list_entry_when_the_agent_has_its_own_workspace(tmp_path: Path) -> None:
    written = tmp_path / ".clawbot" / "clawbot.toml"
    written.parent.mkdir(mode=0o700)
    text = '[[agents.list]]\nid = "main"\nworkspace = "~/main-ws"\n'
    written.write_text(text)
    result = invoke(tmp_path, "init", "--workspace", str(tmp_path / "ws"))
    assert "Agent main has a workspace of its own (~/main-ws)" in result.output
    assert f"[[agents.list]] entry in {written}:" in result.output and written.read_text() == text


def test_run_says_in_one_line_which_config_workspace_and_model(tmp_path: Path, fake_llm_thread) -> None:
    config = tmp_path / "clawbot.toml"
    config.write_text(
        f'[agents.defaults]\nmodel = "openai/gpt-test"\nworkspace = "{tmp_path}/ws"\n'
        f'[providers.openai]\nbase_url = "{fake_llm_thread.base_url}/v1"\napi_key = "sk-test"\n'
    )
    result = invoke_cli("run", home=tmp_path, stdin="")
    assert result.returncode == 0, result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"clawbot: agent main on openai/gpt-test; config {config}; workspace {tmp_path}/ws; channels: webchat, terminal, api.")

    (tmp_path / "fresh").mkdir()
    fake_llm_thread.reply("hello")
    bare = invoke_cli("agent", "-m", "hi", home=tmp_path / "fresh", env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": f"{fake_llm_thread.base_url}/v1"})
    assert "; config defaults, no file; workspace " in bare.stderr.splitlines()[0]
