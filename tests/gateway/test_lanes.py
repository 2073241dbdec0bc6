"""One turn at a time per session, at most gateway.max_concurrent turns at once in all."""

from __future__ import annotations

import asyncio

from clawbot.gateway.runner import Gateway


class Recorder:
    """A responder that holds each turn until released, recording what runs at once."""

    def __init__(self) -> None:
        self.running: set[str] = set()
        self.peak = 0
        self.started: list[str] = []
        self.release = asyncio.Event()

    async def __call__(self, message, session_key):
        assert session_key not in self.running, "two turns of one session ran at once"
        self.running.add(session_key)
        self.started.append(message.text)
        self.peak = max(self.peak, len(self.running))
        try:
            await self.release.wait()
        finally:
            self.running.discard(session_key)
        return f"re {message.text}"


async def _until(predicate, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.005)


QUEUE = '[gateway.queue]\nmode = "followup"\n'


async def test_a_session_runs_one_turn_at_a_time(make_kernel, fake_channel) -> None:
    kernel = await make_kernel(config=QUEUE)
    respond = Recorder()
    gateway = Gateway(kernel, respond, "main")
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    for text in ("one", "two", "three"):
        await fake_channel.inject(text, peer_id="alice", wait=False)
    await _until(lambda: respond.started == ["one"])
    await asyncio.sleep(0.05)
    assert respond.started == ["one"]  # the others wait for the lane
    respond.release.set()
    await _until(lambda: len(fake_channel.sent) == 3)
    gateway.stop()
    await task
    assert fake_channel.texts() == ["re one", "re two", "re three"]
    assert respond.peak == 1


async def test_the_global_cap_limits_turns_at_once_and_other_sessions_start_as_slots_free(make_kernel, fake_channel) -> None:
    kernel = await make_kernel(config="[gateway]\nmax_concurrent = 2\n" + QUEUE)
    respond = Recorder()
    gateway = Gateway(kernel, respond, "main")
    task = asyncio.create_task(gateway.run([fake_channel]))
    await fake_channel.wait_started()
    # alice has three messages waiting; bob and carol one each
    for text in ("a1", "a2", "a3"):
        await fake_channel.inject(text, peer_id="alice", chat_type="group", wait=False)
    await fake_channel.inject("b1", peer_id="bob", chat_type="group", wait=False)
    await fake_channel.inject("c1", peer_id="carol", chat_type="group", wait=False)
    await _until(lambda: len(respond.started) == 2)
    await asyncio.sleep(0.05)
    assert sorted(respond.started) == ["a1", "b1"] and respond.peak == 2
    respond.release.set()
    await _until(lambda: len(fake_channel.sent) == 5)
    gateway.stop()
    await task
    assert respond.peak == 2
    # carol's turn did not wait behind alice's whole queue: it started before alice's last one
    assert respond.started.index("c1") < respond.started.index("a3")
    assert gateway.lanes.sessions() == []
