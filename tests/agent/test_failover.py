"""Failover: auth profiles rotate, models fall back for one call, retries back off."""

from __future__ import annotations

import pytest
from clawbot import LLMProvider, Message, ProviderError
from clawbot.agent.conversation import Conversation
from clawbot.agent.failover import ModelCaller, overloaded_delay
from clawbot.agent.models import ModelChoice
from clawbot.auth_profiles import AuthProfiles
from clawbot.config.schema import AuthProfileConfig

PROFILES = [AuthProfileConfig(provider="flaky", id="work", api_key="k-work"), AuthProfileConfig(provider="flaky", id="home", api_key="k-home")]


class FlakyProvider(LLMProvider):
    """Raises the queued errors (by model) before answering; records each call."""

    def __init__(self, name: str = "flaky", errors: dict[str, list[ProviderError]] | None = None) -> None:
        self.name = name
        self.errors = errors or {}
        self.calls: list[tuple[str, str | None, str]] = []

    async def complete(self, request, on_text=None):
        self.calls.append((request.model, request.api_key, request.thinking))
        queue = self.errors.get(request.model, [])
        if queue:
            raise queue.pop(0)
        return Message.assistant(f"answer from {request.model}")


def err(kind: str, **kw) -> ProviderError:
    return ProviderError(kind, "test", **kw)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


async def _no_sleep(seconds: float) -> None:
    SLEPT.append(seconds)


SLEPT: list[float] = []


@pytest.fixture(autouse=True)
def _reset_sleeps() -> None:
    SLEPT.clear()


def _caller(tmp_path, *choices, clock=None):
    profiles = AuthProfiles(PROFILES, tmp_path / "auth.json", clock or Clock())
    return ModelCaller(list(choices), profiles, sleep=_no_sleep), profiles


async def test_rate_limit_and_rejected_key_rotate_to_the_next_profile(tmp_path) -> None:
    provider = FlakyProvider(errors={"m": [err("rate_limit", status=429), err("auth", status=401)]})
    caller, profiles = _caller(tmp_path, ModelChoice(provider, "m"))
    outcome = await caller.complete(_request())
    assert [key for _, key, _ in provider.calls] == [None, "k-work", "k-home"]
    assert outcome.profile.id == "home" and outcome.message.text == "answer from m"
    # the failed profiles are cooling down: the next call goes straight to the working one
    assert [p.id for p in profiles.candidates("flaky")] == ["home"]
    assert AuthProfiles(PROFILES, tmp_path / "auth.json", Clock()).candidates("flaky")[0].id == "home"  # persisted


async def test_cooldown_grows_and_expires(tmp_path) -> None:
    clock = Clock()
    profiles = AuthProfiles([], tmp_path / "auth.json", clock)
    (default,) = profiles.profiles("flaky")
    assert profiles.cool_down(default) == 60 and profiles.candidates("flaky") == []
    clock.now += 61
    assert profiles.cool_down(default) == 300
    clock.now += 301
    assert profiles.candidates("flaky") == [default]
    assert profiles.disable_for_billing(default) == 5 * 3600
    assert profiles.disable_for_billing(default) == 10 * 3600


async def test_session_stays_pinned_to_the_profile_that_worked(tmp_path) -> None:
    provider = FlakyProvider()
    caller, _ = _caller(tmp_path, ModelChoice(provider, "m"))
    outcome = await caller.complete(_request(), pinned="home")
    assert outcome.profile.id == "home" and provider.calls[0][1] == "k-home"


async def test_billing_error_disables_the_profile_for_hours(tmp_path) -> None:
    clock = Clock()
    provider = FlakyProvider(errors={"m": [err("billing", status=402)]})
    caller, profiles = _caller(tmp_path, ModelChoice(provider, "m"), clock=clock)
    await caller.complete(_request())
    clock.now += 4 * 3600
    assert "default" not in [p.id for p in profiles.candidates("flaky")]
    clock.now += 3600 + 1
    assert "default" in [p.id for p in profiles.candidates("flaky")]


async def test_overloaded_is_retried_with_growing_backoff(tmp_path) -> None:
    provider = FlakyProvider(errors={"m": [err("overloaded", status=529)] * 3})
    caller, _ = _caller(tmp_path, ModelChoice(provider, "m"))
    outcome = await caller.complete(_request())
    assert outcome.attempts == 4 and SLEPT == [2.5, 5.0, 10.0]
    assert overloaded_delay(9) == 30.0


async def test_fallback_model_is_used_when_the_primary_keeps_failing(tmp_path) -> None:
    primary = FlakyProvider(errors={"big": [err("overloaded")] * 11})
    backup = FlakyProvider("backup")
    caller, _ = _caller(tmp_path, ModelChoice(primary, "big"), ModelChoice(backup, "small"))
    outcome = await caller.complete(_request())
    assert outcome.choice.ref == "backup/small" and len(primary.calls) == 11


async def test_thinking_level_is_lowered_when_rejected(tmp_path) -> None:
    provider = FlakyProvider(errors={"m": [err("thinking_unsupported"), err("thinking_unsupported")]})
    caller, _ = _caller(tmp_path, ModelChoice(provider, "m"))
    outcome = await caller.complete(_request(thinking="high"))
    assert [t for _, _, t in provider.calls] == ["high", "medium", "low"] and outcome.thinking == "low"


async def test_invalid_request_and_overflow_are_not_retried(tmp_path) -> None:
    provider = FlakyProvider(errors={"m": [err("invalid_request", status=400)]})
    backup = FlakyProvider("backup")
    caller, _ = _caller(tmp_path, ModelChoice(provider, "m"), ModelChoice(backup, "x"))
    with pytest.raises(ProviderError) as info:
        await caller.complete(_request())
    assert info.value.kind == "invalid_request" and backup.calls == []


async def test_when_everything_fails_the_user_gets_the_short_message(tmp_path) -> None:
    # three keys; the last one is retried twice after its Retry-After before it rests too
    provider = FlakyProvider(errors={"m": [err("rate_limit", retry_after=3)] * 5})
    caller, _ = _caller(tmp_path, ModelChoice(provider, "m"))
    with pytest.raises(ProviderError) as info:
        await caller.complete(_request())
    assert info.value.user_message.startswith("The model provider is rate-limiting requests")
    assert "not used again until" in info.value.user_message and "(in 3 s)" in info.value.user_message
    assert len(provider.calls) == 5 and SLEPT == [3.0, 3.0]


async def test_fallback_is_for_this_turn_only_and_never_after_an_explicit_choice(make_kernel) -> None:
    primary = FlakyProvider(errors={"big": [err("server")] * 4})
    backup = FlakyProvider("backup")
    kernel = await make_kernel()
    conv = Conversation(kernel, ModelChoice(primary, "big"), "main", fallbacks=[ModelChoice(backup, "small")], caller_sleep=_no_sleep, services=None)
    first = await conv.send("agent:main:main", "one")
    assert first.model == "backup/small"
    second = await conv.send("agent:main:main", "two")
    assert second.model == "flaky/big"  # the primary is tried first again

    primary.errors["big"] = [err("server")] * 4
    explicit = Conversation(
        kernel, ModelChoice(primary, "big"), "main", fallbacks=[ModelChoice(backup, "small")], explicit_model=True, caller_sleep=_no_sleep, services=None
    )
    with pytest.raises(ProviderError):
        await explicit.send("agent:main:main", "three")


async def test_context_overflow_compacts_once_and_retries(make_kernel) -> None:
    from clawbot import CompactionResult, CompactionStrategy
    from clawbot.testing import plugin_from_hooks

    class Summariser(CompactionStrategy):
        name = "summary"

        async def compact(self, request):
            return CompactionResult("we talked about cats", first_kept_index=len(request.messages) - 1, tokens_before=900, tokens_after=100)

    seen = []
    plugin = plugin_from_hooks(
        clawbot_compaction_strategies=lambda ctx: [Summariser()],
        clawbot_after_compaction=lambda event: seen.append(event.summary),
    )
    kernel = await make_kernel(plugins={"compaction": plugin})
    provider = FlakyProvider()
    conv = Conversation(kernel, ModelChoice(provider, "m"), "main", services=None)
    await conv.send("agent:main:main", "cats?")
    provider.errors["m"] = [err("context_overflow", status=400)]
    result = await conv.send("agent:main:main", "more cats")
    assert result.text == "answer from m" and seen == ["we talked about cats"]
    history = kernel.sessions.open("agent:main:main").transcript.load().messages()
    assert "\nwe talked about cats\n<<<END UNTRUSTED id=" in history[0].text and history[1].text == "more cats"

    provider.errors["m"] = [err("context_overflow", status=400)] * 2
    with pytest.raises(ProviderError) as info:
        await conv.send("agent:main:main", "again")  # compacted once, still too long: give up
    assert info.value.user_message.startswith("Context overflow")


async def test_context_overflow_without_a_strategy_is_a_clear_error(make_kernel) -> None:
    kernel = await make_kernel()
    provider = FlakyProvider(errors={"m": [err("context_overflow")]})
    with pytest.raises(ProviderError) as info:
        await Conversation(kernel, ModelChoice(provider, "m"), "main", services=None).send("agent:main:main", "hi")
    assert "too long for the model's context window" in info.value.user_message


def _request(thinking: str = "off"):
    from clawbot import ModelRequest, SystemPrompt

    return ModelRequest("m", SystemPrompt("sys"), (Message.user("hi"),), thinking=thinking)


class SizedProvider(FlakyProvider):
    def __init__(self, name: str, window: int) -> None:
        super().__init__(name)
        self.window = window

    def model_info(self, model_id: str):
        from clawbot import ModelInfo

        return ModelInfo(model_id, context_window=window_of(self))


def window_of(provider: SizedProvider) -> int:
    return provider.window


async def test_context_guard_skips_models_too_small_for_the_prompt(tmp_path) -> None:
    from clawbot import ModelRequest, SystemPrompt

    tiny, small, big = SizedProvider("tiny", 8_000), SizedProvider("small", 20_000), SizedProvider("big", 200_000)
    caller, _ = _caller(tmp_path, ModelChoice(tiny, "t"), ModelChoice(small, "s"), ModelChoice(big, "b"))
    long_prompt = ModelRequest("m", SystemPrompt("sys"), (Message.user("word " * 20_000),))  # ~25k tokens
    outcome = await caller.complete(long_prompt)
    assert outcome.choice.ref == "big/b"
    assert tiny.calls == [] and small.calls == []  # refused before paying for a call

    caller, _ = _caller(tmp_path, ModelChoice(tiny, "t"))
    with pytest.raises(ProviderError) as info:
        await caller.complete(_request())
    assert info.value.kind == "context_overflow" and "at least 16,000" in str(info.value)


async def test_a_lowered_thinking_level_is_kept_for_the_rest_of_the_turn(tmp_path) -> None:
    provider = FlakyProvider(errors={"m": [err("thinking_unsupported")]})
    caller, _ = _caller(tmp_path, ModelChoice(provider, "m"))
    await caller.complete(_request(thinking="high"))
    await caller.complete(_request(thinking="high"))  # the next step of the same turn
    assert [t for _, _, t in provider.calls] == ["high", "medium", "medium"]


async def test_text_streamed_before_a_retry_is_not_repeated(tmp_path) -> None:
    class DropsOnce(FlakyProvider):
        async def complete(self, request, on_text=None):
            self.calls.append((request.model, request.api_key, request.thinking))
            await on_text("Hello ")
            if len(self.calls) == 1:
                raise err("connection")
            await on_text("world")
            return Message.assistant("Hello world")

    shown: list[str] = []

    async def sink(text: str) -> None:
        shown.append(text)

    caller, _ = _caller(tmp_path, ModelChoice(DropsOnce(), "m"))
    await caller.complete(_request(), on_text=sink)
    assert "".join(shown) == "Hello world"


async def test_a_model_known_not_to_think_gets_thinking_off_without_a_rejected_request(tmp_path) -> None:
    from clawbot import ModelInfo

    class PlainModel(FlakyProvider):
        def model_info(self, model_id):
            return ModelInfo(model_id, reasoning=False)

    provider = PlainModel()
    caller, _ = _caller(tmp_path, ModelChoice(provider, "m"))
    await caller.complete(_request(thinking="high"))
    assert [t for _, _, t in provider.calls] == ["off"]


async def test_a_long_retry_after_moves_to_the_next_model_instead_of_waiting(tmp_path) -> None:
    primary = FlakyProvider(errors={"big": [err("overloaded", retry_after=3600)]})
    backup = FlakyProvider("backup")
    caller, _ = _caller(tmp_path, ModelChoice(primary, "big"), ModelChoice(backup, "small"))
    outcome = await caller.complete(_request())
    assert outcome.choice.ref == "backup/small" and SLEPT == []


async def test_the_accepted_thinking_level_carries_over_to_the_next_turn(make_kernel) -> None:
    provider = FlakyProvider(errors={"m": [err("thinking_unsupported")]})
    kernel = await make_kernel(config='[agents.defaults]\nthinking = "high"\n')
    conv = Conversation(kernel, ModelChoice(provider, "m"), "main", caller_sleep=_no_sleep, services=None)
    await conv.send("agent:main:main", "one")
    await conv.send("agent:main:main", "two")
    assert [t for _, _, t in provider.calls] == ["high", "medium", "medium"]


async def test_the_session_index_records_the_thinking_level_and_profile_in_use(make_kernel) -> None:
    provider = FlakyProvider(errors={"m": [err("thinking_unsupported")]})
    kernel = await make_kernel(config='[agents.defaults]\nthinking = "high"\n')
    await Conversation(kernel, ModelChoice(provider, "m"), "main", caller_sleep=_no_sleep, services=None).send("agent:main:main", "hi")
    info = kernel.sessions.get("agent:main:main")
    assert info.thinking == "medium" and info.auth_profile == "default"


ALWAYS_FAILING = [
    # (the error every attempt gets, how many attempts one model gets)
    (err("connection"), 2),  # never connected (nothing listening): one more try, then the verdict
    (err("connection", stream_break="dropped"), 4),  # an answer broke off: worth three more
    (err("timeout"), 4),
    (err("server", status=500), 4),
]


@pytest.mark.parametrize(("error", "attempts"), ALWAYS_FAILING, ids=lambda v: str(v) if isinstance(v, ProviderError) else None)
async def test_how_often_a_failing_model_is_tried(tmp_path, error, attempts) -> None:
    class Down(FlakyProvider):
        async def complete(self, request, on_text=None):
            self.calls.append((request.model, request.api_key, request.thinking))
            raise error

    provider = Down()
    caller, _ = _caller(tmp_path, ModelChoice(provider, "m"))
    with pytest.raises(ProviderError) as raised:
        await caller.complete(_request())
    assert raised.value.kind == error.kind
    assert len(provider.calls) == attempts and len(SLEPT) == attempts - 1
