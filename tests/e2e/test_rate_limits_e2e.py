"""A rate limit as a user meets it, through real turns with the official SDKs on the fake
LLM server: the only key waits as the provider asks (up to 30 s) instead of resting for a
minute; a longer wait rests the key and says until when; a second key serves at once; the
log says "trying the next one" only when there is a next one."""

from __future__ import annotations

import json
import logging
import re
import time

import pytest
from clawbot import ProviderError
from clawbot.auth_profiles import key_fingerprint

from .e2etools import KEY, KINDS, MODEL, PRIMARY_KEY, PROVIDER_NAME, auth_keys, start
from .test_failover_e2e import FALLBACK, Sleeps, second_profile


def stored_health(kernel, kind: str) -> dict | None:
    path = kernel.paths.root / "auth-state.json"
    if not path.exists():
        return None
    state = json.loads(path.read_text(encoding="utf-8"))
    return state.get(f"{PROVIDER_NAME[kind]}/default#{key_fingerprint(PRIMARY_KEY)}")


def failover_log(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("clawbot.agent")]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_rate_limit_on_the_only_key_waits_as_asked_and_the_turn_succeeds(make_kernel, fake_llm, workspace, kind, caplog) -> None:
    caplog.set_level(logging.INFO)
    fake_llm.fail("rate_limit", retry_after=1)
    fake_llm.reply("Served after the wait.")
    fake_llm.reply("And the next message too.")
    kernel, conversation, _ = await start(make_kernel, kind, fake_llm, workspace)  # real sleeps

    started = time.monotonic()
    turn = await conversation.send(KEY, "hi")
    waited = time.monotonic() - started

    assert turn.text == "Served after the wait." and 0.9 <= waited < 10
    assert auth_keys(fake_llm.requests) == [PRIMARY_KEY, PRIMARY_KEY]
    health = stored_health(kernel, kind)
    assert health is None or (health["unusable_until"] <= time.time() and health["failures"] == 0)  # no cooldown
    logged = failover_log(caplog)
    assert any("retrying the same key in 1.0 s" in line for line in logged), logged
    assert not any("trying the next one" in line or "cooling down" in line for line in logged), logged
    # later messages are sent, not refused
    assert (await conversation.send(KEY, "again")).text == "And the next message too."
    assert len(fake_llm.requests) == 3


@pytest.mark.parametrize("kind", KINDS)
async def test_a_rate_limit_over_the_cap_rests_the_key_and_says_until_when(make_kernel, fake_llm, workspace, kind, caplog) -> None:
    caplog.set_level(logging.INFO)
    fake_llm.fail("rate_limit", retry_after=45)
    sleeps = Sleeps()
    kernel, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, caller_sleep=sleeps)

    with pytest.raises(ProviderError) as info:
        await conversation.send(KEY, "hi")

    assert sleeps == [] and len(fake_llm.requests) == 1  # 45 s is over the 30 s cap: no wait
    health = stored_health(kernel, kind)
    assert health is not None and health["reason"] == "rate_limit"
    assert time.time() + 40 < health["unusable_until"] <= time.time() + 45  # as long as asked
    local = time.strftime("%H:%M:%S", time.localtime(health["unusable_until"]))
    message = info.value.user_message
    assert info.value.kind == "rate_limit" and message.startswith("The model provider is rate-limiting requests")
    assert f"until {local} (in 45 s)" in message, message
    logged = failover_log(caplog)
    assert not any("trying the next one" in line for line in logged), logged
    assert any("no fallback model is left" in line for line in logged), logged

    # the next message is not sent while the key rests, and says until when again
    with pytest.raises(ProviderError) as again:
        await conversation.send(KEY, "still there?")
    assert len(fake_llm.requests) == 1 and again.value.kind == "rate_limit"
    assert re.search(rf"until {local} \(in 4\d s\)", again.value.user_message), again.value.user_message


@pytest.mark.parametrize("kind", KINDS)
async def test_with_two_keys_a_rate_limit_moves_to_the_other_key_at_once(make_kernel, fake_llm, workspace, kind, caplog) -> None:
    caplog.set_level(logging.INFO)
    fake_llm.fail("rate_limit", retry_after=1)
    fake_llm.reply("From the second key.")
    sleeps = Sleeps()
    _, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, config=second_profile(kind), caller_sleep=sleeps)

    turn = await conversation.send(KEY, "hi")

    assert turn.text == "From the second key." and turn.auth_profile == "second"
    assert auth_keys(fake_llm.requests) == [PRIMARY_KEY, "sk-second"] and sleeps == []  # no wait
    logged = failover_log(caplog)
    assert any("key default failed (rate_limit); trying the next one, second" in line for line in logged), logged


@pytest.mark.parametrize("kind", KINDS)
async def test_the_log_names_the_fallback_model_it_tries_next(make_kernel, fake_llm, workspace, kind, caplog) -> None:
    caplog.set_level(logging.INFO)
    fallback = FALLBACK[kind]
    fake_llm.fail("server_error", times=4, model=MODEL[kind])
    fake_llm.reply("From the fallback.")
    _, conversation, _ = await start(make_kernel, kind, fake_llm, workspace, fallback_models=[fallback], caller_sleep=Sleeps())

    turn = await conversation.send(KEY, "hi")

    assert turn.text == "From the fallback."
    logged = failover_log(caplog)
    next_model = f"{PROVIDER_NAME[kind]}/{fallback}"
    assert any(line.endswith(f"trying the next one, {next_model}") for line in logged), logged
    assert not any("no fallback model is left" in line for line in logged), logged
