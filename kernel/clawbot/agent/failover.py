"""Calling the model with failover.

For each model of the chain (the primary, then ``model.fallbacks`` unless the user chose
the model explicitly): try its provider's usable auth profiles. A rate limit moves on to the
next profile at once; when no other profile can serve, the same key is retried after the
provider's Retry-After (up to 30 s, twice) before it cools down. A rejected key cools down
and the next profile is tried; a billing error disables the key for hours. Overloaded
answers are retried up to 10 times (2.5 s doubling to 30 s), server errors 3 times (after
1, 2, 4 s), timeouts and broken streams 3 times (after 0.5, 1, 2 s), a connection that was
never made (nothing listening, no route, no such host) once (after 0.5 s: a server that
refuses now will not listen a second later, and the user waits for the verdict), logging
"retrying" each time (in the log file only: the user is told once, by the turn's failure line,
or not at all when a retry answers); a
rejected thinking level is lowered. When a model is used up or unknown to its provider, the
next one is tried, for this call only. Context overflow and invalid requests are not the
model's fault and go straight back to the caller. A key that rests ends the call with a
message naming the cause and until when (:mod:`clawbot.agent.cooldowns`). Before any call,
the context guard skips a model whose window cannot hold the prompt; models without native
tool support get their tools through the installed :class:`~clawbot.types.ToolCallAdapter`
(``clawbot_tool_call_adapters``), and without one cannot serve a call that offers tools; an
adapter that raises is recorded as its plugin's failure and the next model is tried.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import attrs

from clawbot.agent import context_guard
from clawbot.agent.cooldowns import KeyResting
from clawbot.agent.models import ModelChoice
from clawbot.agent.sendable import sendable_request
from clawbot.auth_profiles import AuthProfiles, Profile
from clawbot.log_marks import FILE_ONLY
from clawbot.providerkit import decoded_tool_arguments
from clawbot.types import Message, ModelRequest, ProviderError, TextSink, ToolCallAdapter, ToolCallBlock

log = logging.getLogger(__name__)
T = TypeVar("T")
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
OVERLOADED_RETRIES = 10
SERVER_RETRIES = 3
#: a connection that was never made: one more try catches a blip, more only keep the user waiting
CONNECT_RETRIES = 1
RATE_LIMIT_RETRIES = 2  # of the last usable key, after its Retry-After
MAX_WAIT_S = 30.0  # a server asking for a longer wait is treated as down: try the next model


def overloaded_delay(attempt: int) -> float:
    return min(30.0, 2.5 * 2**attempt)


def server_delay(attempt: int) -> float:
    return min(10.0, 1.0 * 2**attempt)


def reconnect_delay(attempt: int) -> float:
    """Back-off after a failed connection or a broken stream: short, so an unreachable
    provider is reported within seconds."""
    return min(2.0, 0.5 * 2**attempt)


def retries_for(error: ProviderError) -> int:
    """How often a server error, a timeout or a failed connection is tried again."""
    if error.kind == "connection" and error.stream_break is None:
        return CONNECT_RETRIES
    return SERVER_RETRIES


def lower_thinking(level: str) -> str | None:
    index = THINKING_LEVELS.index(level) if level in THINKING_LEVELS else 0
    return THINKING_LEVELS[index - 1] if index > 0 else None


def capped_thinking(level: str, cap: str | None) -> str:
    """``level``, or ``cap`` when the model accepted only that after rejecting a higher one:
    a session's /think may ask for less than the cap, never for what was refused."""
    if cap is None or cap not in THINKING_LEVELS or level not in THINKING_LEVELS:
        return level
    return cap if THINKING_LEVELS.index(level) > THINKING_LEVELS.index(cap) else level


@attrs.frozen
class CallOutcome:
    message: Message
    choice: ModelChoice
    profile: Profile
    thinking: str
    attempts: int


class _NextModel(Exception):
    """This model cannot serve the call now; try the next one."""


class _StreamOnce:
    """Forwards streamed text once. A retried attempt streams its reply again from the start;
    the part already shown is skipped. (A retry that says something different is not taken
    back: channels cannot unsend.)"""

    def __init__(self, sink: TextSink) -> None:
        self._sink = sink
        self._shown = 0
        self._attempt = ""

    def new_attempt(self) -> None:
        self._attempt = ""

    async def __call__(self, text: str) -> None:
        self._attempt += text
        if len(self._attempt) > self._shown:
            fresh = self._attempt[self._shown :]
            self._shown = len(self._attempt)
            await self._sink(fresh)


@attrs.define
class ModelCaller:
    """Calls the chain's models with failover (one caller per turn)."""

    chain: list[ModelChoice]
    profiles: AuthProfiles
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    #: model ref -> a thinking level the model accepted after rejecting a higher one. The
    #: conversation passes the same dict to every turn, so the downgrade is paid once.
    accepted_thinking: dict[str, str] = attrs.Factory(dict)
    #: how a model without native tool calling gets its tools (``None``: no plugin offers it)
    tool_adapter: ToolCallAdapter | None = None
    #: told when the adapter raises (the kernel records it as the adapter's plugin's failure)
    adapter_failed: Callable[[BaseException], None] | None = None

    async def _wait(self, error: ProviderError, default: float) -> None:
        wait = error.retry_after if error.retry_after is not None else default
        if wait > MAX_WAIT_S:
            raise _NextModel from error
        log.warning("%s; retrying in %.1f s", error, wait, extra=FILE_ONLY)
        await self.sleep(wait)

    async def complete(self, request: ModelRequest, on_text: TextSink | None = None, pinned: str | None = None) -> CallOutcome:
        errors: list[ProviderError] = []
        stream = _StreamOnce(on_text) if on_text is not None else None
        request = sendable_request(request)  # one bad value must not fail every later request
        for index, choice in enumerate(self.chain):
            known = len(errors)
            try:
                return await self._with_model(choice, request, stream, pinned, errors)
            except _NextModel:
                # The context guard's refusal: the model is fine, the prompt is too big for it.
                overflow = len(errors) > known and errors[-1].kind == "context_overflow"
                why = f"the prompt does not fit {choice.ref} ({errors[-1].detail})" if overflow else f"model {choice.ref} unavailable"
                if index + 1 < len(self.chain):
                    log.warning("%s; trying the next one, %s", why, self.chain[index + 1].ref, extra=FILE_ONLY)
                else:
                    log.warning("%s and no fallback model is left", why, extra=FILE_ONLY)
        raise errors[-1] if errors else ProviderError("auth", "no usable auth profile", provider=self.chain[0].provider.name)

    def _adapted(self, adapter: ToolCallAdapter, step: str, choice: ModelChoice, errors: list[ProviderError], step_call: Callable[[T], T], value: T) -> T:
        """``step_call(value)``; an adapter that raises is its plugin's failure, and this model
        cannot serve the call: the next one of the chain is tried (as after a provider error)."""
        try:
            return step_call(value)
        except Exception as exc:
            if self.adapter_failed is not None:
                self.adapter_failed(exc)
            detail = f"the tool call adapter {adapter.name!r} failed to {step} for {choice.ref}: {exc}"
            errors.append(ProviderError("invalid_request", detail, provider=choice.provider.name))
            raise _NextModel from exc

    def _resting(self, error: ProviderError, profile: Profile) -> KeyResting:
        """Cool ``profile`` down for ``error`` (a rate limit, a rejected key, a billing error)."""
        if error.kind == "billing":
            self.profiles.disable_for_billing(profile)
        else:
            self.profiles.cool_down(profile, error.kind, error.retry_after if error.kind == "rate_limit" else None)
        resting = KeyResting(error.kind, profile, self.profiles.until(profile), self.profiles.now(), error)
        resting.__cause__ = error  # the log keeps the provider's own error
        return resting

    async def _with_model(
        self, choice: ModelChoice, request: ModelRequest, stream: _StreamOnce | None, pinned: str | None, errors: list[ProviderError]
    ) -> CallOutcome:
        attempts = 0
        info = choice.info()
        if info.reasoning:
            thinking = capped_thinking(request.thinking, self.accepted_thinking.get(choice.ref))
        else:
            thinking = "off"  # known not to think: do not pay for a rejected request first
        refused = context_guard.check(choice.ref, info.context_window, request)
        if refused is not None:
            errors.append(refused)
            raise _NextModel
        adapter = None if info.native_tools else self.tool_adapter
        if not info.native_tools and request.tools:
            if adapter is None:
                errors.append(
                    ProviderError(
                        "invalid_request",
                        f"{choice.ref} takes no native tools and no installed plugin offers tool calling through the prompt",
                        provider=choice.provider.name,
                    )
                )
                raise _NextModel
            request = self._adapted(adapter, "encode", choice, errors, adapter.encode, request)
        candidates = self.profiles.candidates(choice.provider.name, pinned)
        if not candidates:
            resting = self.profiles.next_available(choice.provider.name)
            if resting is not None:
                errors.append(KeyResting(resting.reason, resting.profile, resting.until, self.profiles.now()))
            raise _NextModel
        for index, profile in enumerate(candidates):
            others = candidates[index + 1 :]
            overloaded = server = limited = 0
            while True:
                attempts += 1
                call = attrs.evolve(request, model=choice.model, api_key=profile.api_key, thinking=thinking)
                if stream is not None:
                    stream.new_attempt()
                try:
                    message = await choice.provider.complete(call, stream)
                except ProviderError as error:
                    errors.append(error)
                    if error.kind == "rate_limit" and not others and limited < RATE_LIMIT_RETRIES:
                        # no other key can serve: waiting as asked beats resting the only key
                        wait = error.retry_after if error.retry_after is not None else server_delay(limited)
                        if wait <= MAX_WAIT_S:
                            log.warning("%s is rate-limited; retrying the same key in %.1f s", choice.ref, wait, extra=FILE_ONLY)
                            await self.sleep(wait)
                            limited += 1
                            continue
                    if error.kind in ("rate_limit", "auth", "billing"):
                        errors[-1] = self._resting(error, profile)
                        if others:
                            log.warning("%s: key %s failed (%s); trying the next one, %s", choice.ref, profile.id, error.kind, others[0].id, extra=FILE_ONLY)
                        break
                    if error.kind == "overloaded" and overloaded < OVERLOADED_RETRIES:
                        await self._wait(error, overloaded_delay(overloaded))
                        overloaded += 1
                        continue
                    if error.kind in ("server", "timeout", "connection") and server < retries_for(error):
                        delay = server_delay(server) if error.kind == "server" else reconnect_delay(server)
                        await self._wait(error, delay)
                        server += 1
                        continue
                    if error.kind == "thinking_unsupported" and (lower := lower_thinking(thinking)) is not None:
                        log.warning("%s rejected thinking=%s; retrying with %s", choice.ref, thinking, lower, extra=FILE_ONLY)
                        thinking = lower
                        continue
                    if error.kind in ("context_overflow", "invalid_request", "thinking_unsupported"):
                        raise
                    raise _NextModel from error  # overloaded or failing beyond retries
                self.profiles.succeeded(profile)
                if thinking != request.thinking:  # a cap it taught us; a lower level asked later is used as asked
                    self.accepted_thinking[choice.ref] = thinking
                if adapter is not None:
                    message = self._adapted(adapter, "decode", choice, errors, adapter.decode, message)
                return CallOutcome(bounded_arguments(message), choice, profile, thinking, attempts)
        raise _NextModel


def bounded_arguments(message: Message) -> Message:
    """``message`` with every tool call whose decoded arguments nest too deep, hold NaN or a
    lone surrogate turned back into raw text, which the loop answers with an error: a provider
    plugin that decodes arguments itself must not hand the transcript a structure too deep to
    write, or later requests a value no SDK can send."""
    calls = [b for b in message.content if isinstance(b, ToolCallBlock) and b.raw_arguments is None]
    if not calls:
        return message
    blocks = []
    for block in message.content:
        if isinstance(block, ToolCallBlock) and block.raw_arguments is None:
            arguments, raw = decoded_tool_arguments(block.arguments)
            if raw is not None:
                block = attrs.evolve(block, arguments=arguments, raw_arguments=raw)
        blocks.append(block)
    return attrs.evolve(message, content=tuple(blocks))
