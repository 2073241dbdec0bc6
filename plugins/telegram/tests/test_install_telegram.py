"""``pip install clawbot-telegram`` for real: the distributions built as wheels, installed into
a fresh venv (clawbot first, then the Telegram channel, their dependencies from the package
registry), then ``clawbot plugins list`` shows the channel and ``clawbot run`` starts it
against the fake Bot API.

The wheels are built in parallel and uv's cache is shared, so the whole test takes seconds.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .fake_bot_api import TOKEN, FakeBotApi

ROOT = Path(__file__).resolve().parents[3]


def _distributions() -> list[str]:
    """The meta distribution, the workspace members it depends on (read from its pyproject,
    so a plugin added to the default set is built too), and the channel."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    names = {requirement.split(">")[0].split("=")[0].strip() for requirement in project["project"]["dependencies"]} | {"clawbot-telegram"}
    folders = ["kernel", *(f"plugins/{p.name}" for p in sorted((ROOT / "plugins").iterdir()) if (p / "pyproject.toml").exists())]
    chosen = [f for f in folders if tomllib.loads((ROOT / f / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"] in names]
    return [*chosen, "."]


DISTRIBUTIONS = _distributions()


def uv(*args: str, cwd: Path = ROOT) -> str:
    environment = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "UV_PROJECT_ENVIRONMENT")}
    done = subprocess.run([shutil.which("uv") or "uv", *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def user_env(home: Path) -> dict[str, str]:
    """What a user's shell has: no trace of this checkout or its virtual environment."""
    return {"PATH": os.defpath, "HOME": str(home), "CLAWBOT_HOME": str(home / ".clawbot"), "TELEGRAM_BOT_TOKEN": TOKEN, "NO_COLOR": "1", "COLUMNS": "200"}


@pytest.mark.timeout(600)
async def test_clawbot_telegram_installs_from_wheels_and_runs(tmp_path: Path, api: FakeBotApi, fake_llm_thread) -> None:
    wheels = tmp_path / "wheels"
    with ThreadPoolExecutor(len(DISTRIBUTIONS)) as pool:
        list(pool.map(lambda folder: uv("build", "-q", "--wheel", "--out-dir", str(wheels), folder), DISTRIBUTIONS))
    venv = tmp_path / "venv"
    uv("venv", "-q", str(venv), cwd=tmp_path)
    python = str(venv / "bin" / "python")
    # "clawbot" by path: the name alone could also match another project on the registry
    (meta,) = wheels.glob("clawbot-0*.whl")
    uv("pip", "install", "-q", "--python", python, "--find-links", str(wheels), str(meta), cwd=tmp_path)
    uv("pip", "install", "-q", "--python", python, "--find-links", str(wheels), "clawbot-telegram", cwd=tmp_path)

    home = tmp_path / "home"
    home.mkdir()
    clawbot = str(venv / "bin" / "clawbot")
    listing = subprocess.run([clawbot, "plugins", "list"], cwd=home, env=user_env(home), capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0, listing.stderr
    (row,) = [line for line in listing.stdout.splitlines() if " telegram " in line]
    assert "clawbot-telegram" in row and "loaded" in row

    (home / ".clawbot").mkdir()
    (home / ".clawbot" / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{fake_llm_thread.base_url}/v1"\napi_key = "sk-test"\n\n'
        f'[channels.terminal]\nenabled = false\n\n[channels.telegram]\ntoken = "${{TELEGRAM_BOT_TOKEN}}"\napi_base_url = "{api.base_url}"\npoll_timeout_s = 2\n',
        encoding="utf-8",
    )
    process = await asyncio.create_subprocess_exec(
        clawbot, "run", cwd=home, env=user_env(home), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    try:
        await api.wait_for(
            lambda: [c.method for c in api.calls][:3] == ["getMe", "deleteWebhook", "getUpdates"], timeout=60, what="the installed channel polling"
        )
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), 20)
        except TimeoutError:
            process.kill()
            await process.wait()
    output = (await process.stdout.read()).decode() if process.stdout else ""
    assert TOKEN not in output
