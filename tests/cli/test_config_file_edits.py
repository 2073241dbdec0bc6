"""The edits `clawbot init --workspace` and `clawbot onboard` make to <state>/clawbot.toml change
only what was asked: one agent's workspace moves only that agent, and a config file that is a
symbolic link (a dotfile kept elsewhere) stays a link."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from clawbot.boot import load
from clawbot.testing.cli import invoke_cli

CLEAN = {"OPENAI_BASE_URL": None, "OPENAI_API_KEY": None, "OLLAMA_API_KEY": None, "ANTHROPIC_BASE_URL": None}
TWO_AGENTS = (
    '# two agents\n[agents.defaults]\nworkspace = "~/main-ws"\n\n[[agents.list]]\nid = "main"\ndefault = true\n\n[[agents.list]]\nid = "work"  # mine\n'
)


def workspaces(home: Path) -> dict[str, str]:
    config = load(None, env={"CLAWBOT_HOME": str(home), "HOME": str(home)}, cwd=home).config
    return {agent: config.agent_workspace(agent) for agent in config.agent_ids()}


@pytest.mark.parametrize(
    ("agent", "moved", "said"),
    [
        ("work", {"main": "~/main-ws", "work": "{ws}"}, 'Set workspace = "{ws}" in the [[agents.list]] entry with id = "work" of {config}'),
        ("main", {"main": "{ws}", "work": "{ws}"}, 'Set agents.defaults.workspace = "{ws}" in {config}'),
    ],
)
def test_init_workspace_for_one_agent_moves_only_that_agent(tmp_path: Path, agent: str, moved: dict[str, str], said: str) -> None:
    config = tmp_path / "clawbot.toml"  # the file clawbot writes (CLAWBOT_HOME)
    config.write_text(TWO_AGENTS)
    ws = tmp_path / "new-ws"
    result = invoke_cli("init", "--workspace", str(ws), "--agent", agent, home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert said.format(ws=ws, config=config) in result.stdout
    assert workspaces(tmp_path) == {name: value.format(ws=ws) for name, value in moved.items()}
    assert "# two agents" in config.read_text() and 'id = "work"  # mine' in config.read_text()


def test_init_workspace_for_an_agent_not_configured_prints_the_entry_to_add(tmp_path: Path) -> None:
    config = tmp_path / "clawbot.toml"
    config.write_text(TWO_AGENTS)
    ws = tmp_path / "ghost-ws"
    result = invoke_cli("init", "--workspace", str(ws), "--agent", "ghost", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert config.read_text() == TWO_AGENTS
    assert f'    [[agents.list]]\n    id = "ghost"\n    workspace = "{ws}"' in result.stdout


def _linked_config(tmp_path: Path) -> tuple[Path, Path]:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "clawbot.toml"
    real.write_text('# tracked in my dotfiles repo\n[agents.defaults]\nthinking = "low"\n')
    home = tmp_path / "state"
    home.mkdir(mode=0o700)
    (home / "clawbot.toml").symlink_to(real)
    return home, real


@pytest.mark.parametrize(
    ("args", "written"),
    [
        (("init", "--workspace", "{ws}"), ("agents", "defaults", "workspace")),
        (("onboard", "--provider", "openai", "--api-key", "sk-1", "--model", "gpt-x", "--no-check"), ("agents", "defaults", "model", "primary")),
    ],
)
def test_editing_a_symlinked_config_writes_through_to_its_target(tmp_path: Path, args: tuple[str, ...], written: tuple[str, ...]) -> None:
    home, real = _linked_config(tmp_path)
    result = invoke_cli(*(a.format(ws=tmp_path / "ws") for a in args), home=home, env=CLEAN)
    assert result.returncode == 0, result.stderr
    assert (home / "clawbot.toml").is_symlink() and (home / "clawbot.toml").resolve() == real
    data = tomllib.loads(real.read_text())
    node = data
    for name in written:
        node = node[name]
    assert node in (str(tmp_path / "ws"), "openai/gpt-x")
    assert real.read_text().startswith("# tracked in my dotfiles repo\n") and data["agents"]["defaults"]["thinking"] == "low"
    assert [p.name for p in real.parent.iterdir()] == ["clawbot.toml"]  # no temporary file left behind


def test_a_link_into_a_missing_folder_is_left_alone_and_the_line_printed(tmp_path: Path) -> None:
    home = tmp_path / "state"
    home.mkdir(mode=0o700)
    link = home / "clawbot.toml"
    link.symlink_to(tmp_path / "gone" / "clawbot.toml")
    ws = tmp_path / "ws"
    result = invoke_cli("init", "--workspace", str(ws), home=home)
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and not (tmp_path / "gone").exists()
    assert f"{link} could not be written" in result.stdout and f'    workspace = "{ws}"' in result.stdout
