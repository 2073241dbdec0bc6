"""``clawbot run`` as a user starts it, with the Telegram channel on the fake Bot API and the
model on the fake LLM; and ``clawbot pairing`` beside it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import attrs
from clawbot.testing.cli import subprocess_env

from .fake_bot_api import TOKEN, FakeBotApi

CLAWBOT = Path(sys.executable).with_name("clawbot")


def config_text(api: FakeBotApi, llm_url: str, workspace: Path, telegram: str = "") -> str:
    return f"""\
[agents.defaults]
workspace = "{workspace}"

[agents.defaults.model]
primary = "openai/gpt-test"

[providers.openai]
base_url = "{llm_url}/v1"
api_key = "sk-test"

[channels.terminal]
enabled = false

[channels.telegram]
token = "${{TELEGRAM_BOT_TOKEN}}"
api_base_url = "{api.base_url}"
poll_timeout_s = 5
{telegram}
"""


@attrs.define
class Run:
    process: asyncio.subprocess.Process
    home: Path
    output: str = ""


def env(home: Path) -> dict[str, str]:
    return subprocess_env(home, {"TELEGRAM_BOT_TOKEN": TOKEN, "PATH": os.environ.get("PATH", os.defpath)})


@contextlib.asynccontextmanager
async def clawbot_run(home: Path, api: FakeBotApi, config: str) -> AsyncIterator[Run]:
    """``clawbot run`` in ``home`` until the block ends; it is ready once it polls the fake."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "clawbot.toml").write_text(config, encoding="utf-8")
    process = await asyncio.create_subprocess_exec(
        str(CLAWBOT), "run", cwd=home, env=env(home), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    run = Run(process, home)
    try:
        await api.wait_for(lambda: any(c.method == "getUpdates" for c in api.calls) or process.returncode is not None, timeout=30, what="the first poll")
        assert process.returncode is None, "clawbot run ended before polling"
        yield run
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), 15)
            except TimeoutError:
                process.kill()
                await process.wait()
        assert process.stdout is not None
        run.output = (await process.stdout.read()).decode("utf-8", "replace")
        logs = "".join(p.read_text(encoding="utf-8", errors="replace") for p in (home / "logs").glob("clawbot.log*"))
        assert TOKEN not in run.output and TOKEN not in logs, "the bot token leaked into the output or the log"
        assert TOKEN.split(":")[1] not in run.output + logs


async def clawbot(home: Path, *args: str) -> tuple[int, str]:
    """Another ``clawbot`` command beside the running gateway: (exit code, output)."""
    process = await asyncio.create_subprocess_exec(
        str(CLAWBOT), *args, cwd=home, env=env(home), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode or 0, out.decode()
