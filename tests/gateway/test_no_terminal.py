"""Started without a terminal (standard input /dev/null, as under a service manager), ``clawbot
run`` does not run the terminal chat and keeps serving its other channels; with no other
channel it says why it cannot run."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from clawbot.testing import install_distribution
from clawbot.testing.cli import subprocess_env

FILE_CHANNEL = """\
import asyncio
import os
from pathlib import Path

from clawbot import Channel, InboundMessage, hookimpl


class FileChannel(Channel):
    # Asks one question when it starts and writes the answer to a file.
    name = "filechat"

    async def start(self, sink):
        await sink(InboundMessage(channel=self.name, peer_id="p1", sender_id="p1", text="ping", from_owner=True))
        await asyncio.Event().wait()

    async def send(self, message):
        out = Path(os.environ["FILECHAT_OUT"])
        out.with_suffix(".tmp").write_text(message.text)
        out.with_suffix(".tmp").replace(out)


@hookimpl
def clawbot_channels(ctx):
    return [FileChannel()]
"""


def _config(home: Path, base_url: str) -> None:
    (home / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{base_url}/v1"\n'
        'api_key = "sk-test"\n\n[gateway]\ncontrol_api = false\n\n[channels.webchat]\nenabled = false\n',
        encoding="utf-8",
    )


def _run(home: Path, site: Path | None, out: Path) -> subprocess.Popen:
    env = subprocess_env(home, {"FILECHAT_OUT": str(out)}, extra_path=site)
    return subprocess.Popen(
        [sys.executable, "-m", "clawbot.cli.main", "run"],
        cwd=home,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_without_a_terminal_the_other_channels_keep_serving(tmp_path: Path, fake_llm_thread) -> None:
    home, site, out = tmp_path / "home", tmp_path / "site", tmp_path / "answer"
    home.mkdir()
    install_distribution(site, "clawbot-filechat", entry_points={"filechat": "filechat_plugin"}, modules={"filechat_plugin.py": FILE_CHANNEL})
    _config(home, fake_llm_thread.base_url)
    fake_llm_thread.reply("pong")
    proc = _run(home, site, out)
    try:
        deadline = time.monotonic() + 30
        while not out.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the plugin channel was never answered"
            time.sleep(0.02)
        time.sleep(0.3)
        assert proc.poll() is None  # the terminal's missing input did not end clawbot
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert out.read_text() == "pong"
    assert proc.returncode == 0, stderr
    assert "channels: filechat." in stderr  # the terminal is not among them
    assert "you>" not in stdout and "Traceback" not in stdout + stderr


def test_with_only_the_terminal_and_no_terminal_it_says_why(tmp_path: Path, fake_llm_thread) -> None:
    _config(tmp_path, fake_llm_thread.base_url)
    proc = _run(tmp_path, None, tmp_path / "unused")
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert "No enabled channel can run here (terminal: no terminal: standard input is /dev/null)" in stderr
    assert "Traceback" not in stdout + stderr
