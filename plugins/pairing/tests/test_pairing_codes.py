"""Pairing codes: their shape, their life, the limits on strangers and on wrong codes.

The store under test is the real file in a temporary state dir; time is a clock the test
moves. Two stores on one file stand for the gateway and the CLI.
"""

from __future__ import annotations

import json
import stat

import pytest
from clawbot_pairing.store import (
    ALPHABET,
    CODE_TTL_S,
    MAX_WRONG_CODES,
    REPLY_EVERY_S,
    WRONG_CODE_WINDOW_S,
    PairingError,
    PairingStore,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path, clock) -> PairingStore:
    return PairingStore.for_channel(tmp_path, "chat", clock)


def test_a_code_is_eight_unambiguous_characters_and_the_file_is_private(store, tmp_path) -> None:
    asked = store.ask("bob", "default", "Bob")
    assert asked.reply and len(asked.code) == 8 and set(asked.code) <= set(ALPHABET)
    assert not set("01OI") & set(ALPHABET)
    path = tmp_path / "pairing" / "chat.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text())["requests"][0]["sender_id"] == "bob"


def test_the_same_stranger_gets_the_same_code_and_replies_are_rate_limited(store, clock) -> None:
    first = store.ask("bob", "default")
    replies = [first.reply]
    for _ in range(20):  # spam within the interval: no reply, same code
        clock.now += REPLY_EVERY_S / 40
        again = store.ask("bob", "default")
        assert again.code == first.code
        replies.append(again.reply)
    assert replies == [True] + [False] * 20
    clock.now += REPLY_EVERY_S
    assert store.ask("bob", "default") == type(first)(first.code, reply=True)  # reminded, at most this often
    clock.now += CODE_TTL_S  # past the hour: a fresh code
    fresh = store.ask("bob", "default")
    assert fresh.reply and fresh.code != first.code


def test_at_most_three_wait_per_account(store) -> None:
    codes = [store.ask(sender, "default").code for sender in ("a", "b", "c")]
    assert None not in codes and len(set(codes)) == 3
    assert store.ask("d", "default").code is None and not store.ask("d", "default").reply  # no room: silence
    assert store.ask("d", "other-bot").code is not None  # another account has its own room
    store.deny(codes[0])
    assert store.ask("d", "default").code is not None


def test_the_cli_approves_and_the_gateway_sees_it_without_a_restart(tmp_path, clock) -> None:
    gateway = PairingStore.for_channel(tmp_path, "chat", clock)
    cli = PairingStore.for_channel(tmp_path, "chat", clock)
    code = gateway.ask("bob", "default", "Bob").code
    assert not gateway.is_approved("bob")
    approved = cli.approve(code.lower())  # codes are read case-insensitively
    assert (approved.sender_id, approved.sender_name) == ("bob", "Bob")
    assert gateway.is_approved("bob") and not gateway.is_approved("carol")
    assert gateway.pending() == []
    with pytest.raises(PairingError, match="no pending request has the code"):
        cli.approve(code)  # one time only
    assert cli.revoke("bob") and not gateway.is_approved("bob") and not cli.revoke("bob")


def test_wrong_codes_are_limited_per_channel(store, clock, tmp_path) -> None:
    code = store.ask("bob", "default").code
    for _ in range(MAX_WRONG_CODES):
        with pytest.raises(PairingError, match="no pending request"):
            store.approve("WRONG234")
        clock.now += 1
    with pytest.raises(PairingError, match=r"too many wrong codes on this channel lately: try again in 15 min"):
        store.approve(code)  # even the right one, while the window lasts
    assert PairingStore.for_channel(tmp_path, "other", clock).ask("x", "default").code  # other channels unaffected
    clock.now += WRONG_CODE_WINDOW_S
    assert store.approve(code).sender_id == "bob"


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"requests": [{"code": 5}], "approved": "x", "wrong_codes": [true]}'])
def test_a_damaged_file_locks_nobody_out(store, tmp_path, content) -> None:
    path = tmp_path / "pairing" / "chat.json"
    path.parent.mkdir()
    path.write_text(content)
    assert store.pending() == [] and not store.is_approved("bob")
    code = store.ask("bob", "default").code
    assert store.approve(code).sender_id == "bob"


def test_a_channel_name_must_be_a_plain_name(tmp_path) -> None:
    for bad in ("../etc", "a/b", "", ".hidden", "x" * 65):
        with pytest.raises(PairingError, match="is not a channel name"):
            PairingStore.for_channel(tmp_path, bad)
