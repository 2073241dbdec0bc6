"""Creating a workspace: seed_workspace, `clawbot init`, and the gateway's first start."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import clawbot_workspace.plugin
import pytest
from clawbot.testing.cli import invoke_cli
from clawbot_workspace.init import TEMPLATE_NAMES, needs_seeding, seed_workspace, template_text

EVERYTHING = [*TEMPLATE_NAMES, "memory/"]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# ------------------------------------------------------------------ seed_workspace


def test_seeding_writes_every_starter_file_and_a_private_folder(tmp_path: Path) -> None:
    workspace = tmp_path / "deep" / "ws"
    result = seed_workspace(workspace)
    assert result.created == tuple(EVERYTHING) and result.kept == () and result.created_workspace
    assert mode(workspace) == 0o700 and (workspace / "memory").is_dir() and mode(workspace / "memory") == 0o700
    assert not any((workspace / "memory").iterdir())
    for name in TEMPLATE_NAMES:
        assert (workspace / name).read_text(encoding="utf-8") == template_text(name)


def test_the_starter_files_say_what_they_are_for() -> None:
    agents = template_text("AGENTS.md")
    assert "memory/YYYY-MM-DD.md" in agents and "MEMORY.md" in agents and "BOOTSTRAP.md" in agents
    assert "Group chats" in agents and "Safety" in agents
    assert "delete" in template_text("BOOTSTRAP.md").lower()
    assert "not availability" in template_text("TOOLS.md") or "not by this file" in template_text("TOOLS.md")
    heartbeat = [line for line in template_text("HEARTBEAT.md").splitlines() if line.strip()]
    assert all(line.startswith("#") for line in heartbeat)  # only comments: no heartbeat work by default
    for name in ("SOUL.md", "USER.md", "IDENTITY.md", "MEMORY.md"):
        assert template_text(name).startswith(f"# {name}")


def test_seeding_never_overwrites_and_reports_what_it_kept(tmp_path: Path) -> None:
    (tmp_path / "SOUL.md").write_text("my own soul\n")
    (tmp_path / "memory").mkdir()
    (tmp_path / "USER.md").symlink_to(tmp_path / "nowhere.md")  # dangling: never written through
    result = seed_workspace(tmp_path)
    assert result.kept == ("SOUL.md", "USER.md", "memory/") and not result.created_workspace
    assert (tmp_path / "SOUL.md").read_text() == "my own soul\n"
    assert not (tmp_path / "nowhere.md").exists()
    again = seed_workspace(tmp_path)
    assert again.created == () and set(again.kept) == set(EVERYTHING)


def test_a_lower_case_memory_md_is_kept_instead_of_adding_memory_md(tmp_path: Path) -> None:
    (tmp_path / "memory.md").write_text("old notes\n")
    result = seed_workspace(tmp_path)
    assert "memory.md" in result.kept and "MEMORY.md" not in result.created
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.lower() == "memory.md") == ["memory.md"]


def test_first_start_means_missing_or_empty(tmp_path: Path) -> None:
    assert needs_seeding(tmp_path / "nope")
    assert needs_seeding(tmp_path)
    (tmp_path / ".git").mkdir()
    assert not needs_seeding(tmp_path)
    (tmp_path / "file").write_text("x")
    assert needs_seeding(tmp_path / "file")  # seeding then fails with the reason, logged


# ------------------------------------------------------------------ clawbot init


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # away from the checkout: its example clawbot.toml would print an "ignored" note
    monkeypatch.delenv("CLAWBOT_CONFIG", raising=False)


def invoke(*args: str, env: dict[str, str] | None = None) -> SimpleNamespace:
    """``clawbot ARGS`` in this process, as the user of the test's home runs it."""
    run = invoke_cli(*args, home=Path(os.environ["HOME"]), cwd=Path.cwd(), env=env)
    return SimpleNamespace(exit_code=run.returncode, output=run.stdout + run.stderr)


def test_init_without_a_config_file_seeds_the_default_workspace(clawbot_home: Path) -> None:
    result = invoke("init")
    assert result.exit_code == 0, result.output
    workspace = clawbot_home / "clawbot"  # agents.defaults.workspace = "~/clawbot"
    assert f"Created: {workspace}" in result.output
    assert "created: " + ", ".join(EVERYTHING) in result.output
    assert mode(workspace) == 0o700
    (workspace / "SOUL.md").write_text("changed\n")
    (workspace / "BOOTSTRAP.md").unlink()
    second = invoke("init")
    assert "created: BOOTSTRAP.md" in second.output and "SOUL.md" in second.output.split("kept")[1]
    assert (workspace / "SOUL.md").read_text() == "changed\n"


def test_init_uses_the_agent_workspace_from_the_config(clawbot_home: Path, tmp_path: Path) -> None:
    config = tmp_path / "clawbot.toml"
    config.write_text('[[agents.list]]\nid = "main"\ndefault = true\n\n[[agents.list]]\nid = "work"\nworkspace = "~/work-ws"\n')
    result = invoke("--config", str(config), "init", "--agent", "work")
    assert result.exit_code == 0, result.output
    assert (clawbot_home / "work-ws" / "AGENTS.md").is_file() and not (clawbot_home / "clawbot").exists()
    result = invoke("init", "--agent", "ghost", "--config", str(config))
    assert result.exit_code == 2 and "unknown agent 'ghost'" in result.output and "work" in result.output


def test_init_with_an_explicit_folder_needs_no_valid_config(clawbot_home: Path, tmp_path: Path) -> None:
    (clawbot_home / "clawbot.toml").write_text("[agents.defaults]\nmax_iterations = -\n")
    broken = invoke("init")
    assert broken.exit_code == 2 and "Traceback" not in broken.output
    result = invoke("init", "--workspace", str(tmp_path / "ws"))
    assert result.exit_code == 0 and (tmp_path / "ws" / "MEMORY.md").is_file()


def test_init_is_listed_and_runs_in_a_real_process(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWBOT_")}
    env.update({"HOME": str(tmp_path), "CLAWBOT_HOME": str(tmp_path / ".clawbot")})
    run = lambda *args: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "clawbot.cli.main", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert "init" in run("--help").stdout
    done = run("init", "--workspace", "rel-ws")
    assert done.returncode == 0, done.stderr
    assert f"Created: {tmp_path / 'rel-ws'}" in done.stdout and (tmp_path / "rel-ws" / "AGENTS.md").is_file()


def test_a_folder_in_the_way_is_reported(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    result = invoke("init", "--workspace", str(tmp_path / "file"))
    assert result.exit_code != 0 and "Traceback" not in result.output


# ------------------------------------------------------------------ first start of the gateway


async def _echo(message, session_key):
    return "ok"


async def test_the_gateway_seeds_only_workspaces_that_are_missing_or_empty(make_kernel, fake_channel, clawbot_home: Path) -> None:
    (clawbot_home / "empty").mkdir()
    (clawbot_home / "used").mkdir()
    (clawbot_home / "used" / "notes.txt").write_text("mine")
    config = "\n".join(
        f'[[agents.list]]\nid = "{agent}"\nworkspace = "{path}"\n'
        for agent, path in [("main", "~/fresh"), ("other", "~/fresh"), ("e", "~/empty"), ("u", "~/used")]
    )
    kernel = await make_kernel(plugins={"workspace": clawbot_workspace.plugin, "fake": fake_channel.as_plugin()}, config=config)
    gateway = kernel.gateway(_echo)
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    await fake_channel.inject("hi")
    gateway.stop()
    await task
    assert kernel.plugin_failures == []
    for seeded in ("fresh", "empty"):
        assert sorted(p.name for p in (clawbot_home / seeded).iterdir()) == sorted([*TEMPLATE_NAMES, "memory"])
    assert [p.name for p in (clawbot_home / "used").iterdir()] == ["notes.txt"]
    assert mode(clawbot_home / "fresh") == 0o700
    # A file deleted on purpose stays deleted on the next start.
    (clawbot_home / "fresh" / "BOOTSTRAP.md").unlink()
    gateway = kernel.gateway(_echo)
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    gateway.stop()
    await task
    assert not (clawbot_home / "fresh" / "BOOTSTRAP.md").exists()


async def test_a_workspace_that_cannot_be_created_does_not_stop_the_gateway(
    make_kernel, fake_channel, clawbot_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (clawbot_home / "blocker").write_text("a file where the folder should be")
    config = '[agents.defaults]\nworkspace = "~/blocker/ws"\n'
    kernel = await make_kernel(plugins={"workspace": clawbot_workspace.plugin, "fake": fake_channel.as_plugin()}, config=config)
    gateway = kernel.gateway(_echo)
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.inject("hi")
    gateway.stop()
    await task
    assert fake_channel.texts() == ["ok"]
    assert "could not create the workspace of agent main" in caplog.text


@pytest.mark.parametrize("inside", ["the state dir", "home, above the state dir"])
def test_init_refuses_a_workspace_that_holds_the_configuration_file(clawbot_home: Path, tmp_path: Path, inside: str) -> None:
    """An agent writes its whole workspace: clawbot would refuse a configuration file there."""
    state = tmp_path / "home" / ".clawbot"
    state.mkdir(parents=True)
    own = state / "clawbot.toml"
    own.write_text('[agents.defaults]\nthinking = "low"\n')
    chosen = state if inside == "the state dir" else tmp_path / "home"
    result = invoke("init", "--workspace", str(chosen), env={"CLAWBOT_HOME": str(state)})
    assert result.exit_code == 2
    assert f"{chosen} holds the configuration file {own}" in result.output
    assert own.read_text() == '[agents.defaults]\nthinking = "low"\n' and not (chosen / "AGENTS.md").exists()
