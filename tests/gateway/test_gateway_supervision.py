"""Restart backoff starts over after a healthy run; finished answers leave no per-session state."""

from __future__ import annotations

import asyncio

import pytest
from clawbot.gateway.runner import Gateway


async def _echo(message, session_key):
    return f"echo {message.text}"


async def test_backoff_resets_after_a_healthy_run(make_kernel, fake_channel) -> None:
    kernel = await make_kernel()
    gateway = Gateway(kernel, _echo, "main", restart_delays=(0.01, 30.0))
    gateway.healthy_run = 0.05
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    await fake_channel.disconnect()  # quick failure: first delay
    await fake_channel.wait_started()
    await asyncio.sleep(0.1)  # runs longer than healthy_run
    await fake_channel.disconnect()  # a fresh failure: first delay again, not 30 s
    try:
        await fake_channel.wait_started(timeout=30)
    finally:
        gateway.stop()
        await task
    assert fake_channel.starts == 3


async def test_quick_consecutive_failures_still_back_off(make_kernel, fake_channel) -> None:
    kernel = await make_kernel()
    gateway = Gateway(kernel, _echo, "main", restart_delays=(0.01, 30.0))
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    await fake_channel.disconnect()
    await fake_channel.wait_started()
    await fake_channel.disconnect()  # failed again right away: second delay (30 s)
    with pytest.raises(TimeoutError):
        await fake_channel.wait_started(timeout=0.3)
    gateway.stop()
    await task
    assert fake_channel.starts == 2


async def test_finished_answers_leave_no_session_entry(make_kernel, fake_channel) -> None:
    kernel = await make_kernel()
    gateway = Gateway(kernel, _echo, "main")
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    for peer in ("alice", "bob", "carol"):
        await fake_channel.inject("hi", peer_id=peer, chat_type="group")
    await asyncio.sleep(0)
    assert gateway.lanes.sessions() == []
    await fake_channel.inject("/stop", peer_id="alice", chat_type="group")
    await asyncio.sleep(0)
    assert gateway.lanes.sessions() == []
    gateway.stop()
    await task
    assert fake_channel.texts()[:3] == ["echo hi"] * 3


async def test_a_running_answer_is_tracked_until_it_finishes(make_kernel, fake_channel) -> None:
    release = asyncio.Event()

    async def slow(message, session_key):
        await release.wait()
        return "done"

    kernel = await make_kernel()
    gateway = Gateway(kernel, slow, "main")
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    await fake_channel.inject("work", wait=False, from_owner=True)
    assert gateway.lanes.sessions() == ["agent:main:main"]
    release.set()
    try:
        for _ in range(100):
            if not gateway.lanes.sessions():
                break
            await asyncio.sleep(0.01)
    finally:
        gateway.stop()
        await task
    assert gateway.lanes.sessions() == []
    assert fake_channel.texts() == ["done"]
