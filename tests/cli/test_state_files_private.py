"""Every file and folder clawbot creates under its state directory is private from the start
(files 0600, folders 0700), whatever the umask: `clawbot doctor` never warns about what
clawbot itself made. One row per creator, each run for real on a fresh state dir under umask
022, then judged by the check doctor itself uses (:func:`clawbot_setup.doctor.check_state_modes`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from clawbot.paths import StatePaths
from clawbot.statefile import create_private_file, private_append, private_binary_writer
from clawbot.testing.cli import invoke_cli
from clawbot_automation.cron_store import CronStore
from clawbot_automation.records import CronRun
from clawbot_pairing.store import PairingStore
from clawbot_setup.doctor import check_state_modes

from .clihelpers import run_cli


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _config(home: Path, llm: Any) -> None:
    workspace = home.parent / "workspace"
    workspace.mkdir(exist_ok=True)
    (workspace / "MEMORY.md").write_text("# Memory\nThe owner likes tea.\n")
    (home / "clawbot.toml").write_text(
        f'[agents.defaults]\nworkspace = "{workspace}"\n\n[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n'
        f'[providers.openai]\nbase_url = "{llm.base_url}/v1"\napi_key = "sk-test"\n'
    )
    (home / "clawbot.toml").chmod(0o600)  # the user's own file: what clawbot creates is judged here


def _a_turn(home: Path, llm: Any) -> None:
    """``clawbot agent``: the session, its index, the log, the turn lock, auth state."""
    _config(home, llm)
    llm.reply("Hello.")
    done = run_cli("agent", "--local", "-m", "hi", home=home)
    assert done.returncode == 0, done.stderr


def _a_gateway_run(home: Path, llm: Any) -> None:
    """``clawbot run``: its lock, endpoint and token, the control API, gateway.log, a turn at the terminal."""
    _config(home, llm)
    with (home / "clawbot.toml").open("a") as config:
        config.write("\n[gateway]\nport = 0\n")
    llm.reply("Hello.")
    done = run_cli("run", home=home, stdin="hi\n")
    assert done.returncode == 0 and done.stdout.strip() == "Hello.", done.stderr


def _the_memory_index(home: Path, llm: Any) -> None:
    """``clawbot memory index``: the memory plugin's SQLite index, its WAL and shared memory."""
    _config(home, llm)
    done = invoke_cli("memory", "index", home=home)
    assert done.returncode == 0, done.stderr
    assert list((home / "memory").glob("*.sqlite")), sorted(p.name for p in home.rglob("*"))


def _a_cron_run(home: Path, llm: Any) -> None:
    CronStore(home / "cron").append_run(CronRun("daily", "r1", "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z"))


def _a_pairing_request(home: Path, llm: Any) -> None:
    PairingStore.for_channel(home, "telegram").ask("4242", "default", "Bob")


def _the_statefile_creators(home: Path, llm: Any) -> None:
    """The helpers plugins use for files another library opens, appends and downloads."""
    create_private_file(home / "plugin" / "index.db")
    with private_append(home / "plugin" / "history" / "runs.jsonl") as out:
        out.write("{}\n")
    with private_binary_writer(home / "media" / "photo.jpg") as out:
        out.write(b"\xff\xd8")


CREATORS: dict[str, Callable[[Path, Any], None]] = {
    "a turn of clawbot agent": _a_turn,
    "clawbot run": _a_gateway_run,
    "the memory index": _the_memory_index,
    "a cron run's history": _a_cron_run,
    "a pairing request": _a_pairing_request,
    "the statefile helpers": _the_statefile_creators,
}


@pytest.mark.parametrize("creator", CREATORS)
def test_what_clawbot_creates_under_the_state_dir_is_private(tmp_path: Path, fake_llm_thread, creator: str) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    with umask(0o022):
        CREATORS[creator](home, fake_llm_thread)
    assert [p for p in home.rglob("*") if p.name != "clawbot.toml"], "the creator created nothing"
    findings = check_state_modes(StatePaths.resolve({"CLAWBOT_HOME": str(home)}))
    assert [(f.level, f.detail) for f in findings] == [("ok", f"{home} is private (directories 0700, files 0600)")]
