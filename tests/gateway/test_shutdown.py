"""Stopping the gateway: nothing new is answered, running turns get the grace period to
finish (their replies still go out), then are cancelled and recorded as interrupted; a real
``clawbot run`` does this on SIGTERM."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.gateway.runner import STOPPING_NOTICE, Gateway
from clawbot.testing.cli import subprocess_env

from ..agent.scripted import ScriptedProvider


async def _until(predicate, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.005)


async def test_a_turn_that_finishes_within_the_grace_is_answered_and_new_messages_are_not(make_kernel, fake_channel) -> None:
    kernel = await make_kernel(config="[gateway]\nshutdown_grace_s = 5\n")
    seen: list[str] = []

    async def respond(message, session_key):
        seen.append(message.text)
        await asyncio.sleep(0.3)
        return f"re {message.text}"

    gateway = Gateway(kernel, respond, "main")
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    await fake_channel.inject("almost done", wait=False, from_owner=True)
    await _until(lambda: seen)
    gateway.stop()
    await asyncio.sleep(0)
    late = await fake_channel.inject("too late", peer_id="bob", wait=False, from_owner=True)
    await asyncio.wait_for(task, 30)
    assert late is not None and seen == ["almost done"]
    by_peer = {m.peer_id: m for m in fake_channel.sent}
    assert len(fake_channel.sent) == 2 and by_peer["user-1"].text == "re almost done"
    assert by_peer["bob"].text == STOPPING_NOTICE and by_peer["bob"].notice  # bob hears he was not answered


async def test_a_turn_past_the_grace_is_cancelled_and_recorded_as_interrupted(make_kernel, fake_channel) -> None:
    kernel = await make_kernel(config="[gateway]\nshutdown_grace_s = 0.2\n")
    provider = ScriptedProvider("too slow", delay=3600)  # only the grace can end it in time
    conversation = Conversation(kernel, ModelChoice(provider, "m"), "main", services=None)

    async def respond(message, session_key):
        return (await conversation.send(session_key, message.text, origin=message)).text

    gateway = Gateway(kernel, respond, "main")
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    await fake_channel.inject("think for a long time", wait=False, from_owner=True)
    await _until(lambda: provider.requests)
    gateway.stop()
    await asyncio.wait_for(task, 60)
    loaded = kernel.sessions.open("agent:main:main").transcript.load()
    assert [m.text for m in loaded.messages()] == ["think for a long time"]
    assert any(e.type == "custom" and e.data.get("kind") == "aborted" for e in loaded.entries)
    assert fake_channel.texts() == [STOPPING_NOTICE]  # the asker hears the turn was cut off
    assert fake_channel.sent[0].notice


def test_sigterm_stops_clawbot_run_gracefully_recording_the_turn_in_flight(tmp_path: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    fake.fail("stalled_stream", delay=60, after_events=3)
    fake.queue("Once upon a time, in a reply that never ends")
    (tmp_path / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{fake.base_url}/v1"\n'
        'api_key = "sk-test"\n\n[gateway]\ncontrol_api = false\nshutdown_grace_s = 0.5\n',
        encoding="utf-8",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawbot.cli.main", "run"],
        cwd=tmp_path,
        env=subprocess_env(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write("tell me a story\n")
        proc.stdin.flush()  # and the input stays open: the chat goes on
        deadline = time.monotonic() + 30
        while not fake.requests:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the turn never reached the model"
            time.sleep(0.02)
        time.sleep(0.2)  # the reply is streaming, stalled
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Traceback" not in out + err
    (path,) = (tmp_path / "sessions").rglob("*.jsonl")
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    roles = [line["message"]["role"] for line in lines if line.get("type") == "message"]
    assert roles == ["user"]
    assert lines[-1]["type"] == "custom" and lines[-1]["kind"] == "aborted", lines[-1]
