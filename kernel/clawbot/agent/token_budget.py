"""How many tokens the next model request will take, between the provider's reports.

The usage a provider reports is the truth; clawbot only estimates what it has not been told
yet. The next request's size is the prompt tokens reported for the session's last reply,
plus that reply's output tokens, plus an estimate of what was appended since. That estimate
is the rough four-characters-a-token count (:mod:`clawbot.tokens`) times a factor learned per
model from the provider's reports (reported prompt tokens over the rough count of the same
request, an exponential moving average), so a model whose tokenizer counts differently is
estimated right after a few requests, without downloading any tokenizer.

How far the estimate was off (the last request and the mean, in % of the reported figure) is
kept beside the factor in ``<state>/token-estimates.json`` and shown by ``/status``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import attrs

from clawbot.agent.context_guard import fixed_chars, messages_tokens, request_tokens
from clawbot.config.context_schema import CompactionConfig
from clawbot.statefile import atomic_write_json, is_count, is_number, locked, make_private_dir, read_state
from clawbot.tokens import estimate_tokens
from clawbot.types import Message, ModelRequest, Role, Usage

log = logging.getLogger(__name__)
STATE_FILE = "token-estimates.json"
#: how much one report moves the learned factor: a few requests settle it, one odd request
#: (an image, a cached prefix counted differently) does not throw it off
SMOOTHING = 0.3
FACTOR_RANGE = (0.1, 10.0)  # a report outside this is a provider quirk, not a tokenizer
SETTLED_SAMPLES = 30  # reports after which a model's factor is taken as settled ...
SETTLED_DRIFT = 0.01  # ... and stored again only when a turn moved it by more than this share
MAX_RESERVE_SHARE = 0.25  # of a window kept free below it, however large the configured reserve
FLUSH_AFTER_SHARE = 0.75  # of the room above the system prompt used before a cycle's flush


@attrs.define
class Calibration:
    """What clawbot learned about one model's token counts."""

    factor: float = 1.0  # reported prompt tokens per rough (4 chars/token) estimated token
    samples: int = 0  # reports learned from
    last_error: float | None = None  # |estimate - reported| / reported, at the last request
    mean_error: float | None = None  # the mean of those over ``samples``

    def text(self) -> str:
        """One line for ``/status``."""
        if self.samples == 0 or self.last_error is None or self.mean_error is None:
            return "no reported usage yet"
        return (
            f"off by {self.last_error:.1%} at the last request, {self.mean_error:.1%} on average "
            f"({self.samples} request{'s' if self.samples != 1 else ''}; {self.factor:.2f} tokens per rough estimate)"
        )


def _calibration(value: object) -> Calibration | None:
    if not isinstance(value, dict):
        return None
    factor, samples = value.get("factor", 1.0), value.get("samples", 0)
    last, mean = value.get("last_error"), value.get("mean_error")
    if not is_number(factor, *FACTOR_RANGE) or not is_count(samples):
        return None
    if not all(e is None or is_number(e, 0.0, 1e6) for e in (last, mean)):
        return None
    return Calibration(float(factor), int(samples), last, mean)


class TokenCalibrations:
    """The learned factors of every model, in one small state file."""

    def __init__(self, state_root: Path) -> None:
        self.path = state_root / STATE_FILE

    def _read(self) -> dict[str, object]:
        raw = read_state(self.path, "ignored: token estimates start uncalibrated")
        return raw if isinstance(raw, dict) else {}

    def get(self, model_ref: str) -> Calibration:
        return _calibration(self._read().get(model_ref)) or Calibration()

    def learn(self, reports: list[Report]) -> None:
        """Fold ``reports`` in, in one write: each says clawbot's figures for a request
        (``rough``, ``estimate``) and the prompt tokens the provider then reported for it."""
        if not reports:
            return
        make_private_dir(self.path.parent)
        with locked(self.path):
            raw = self._read()
            for report in reports:
                found = _calibration(raw.get(report.model_ref)) or Calibration()
                fold(found, report)
                raw[report.model_ref] = attrs.asdict(found)
            try:
                atomic_write_json(self.path, raw)
            except OSError as exc:  # derived data: a full disk must not fail the turn
                log.warning("cannot store the token estimates in %s (%s)", self.path, exc.strerror or exc)


@attrs.frozen
class Report:
    model_ref: str
    rough: int
    estimate: int
    reported: int


def fold(found: Calibration, report: Report) -> None:
    """One report folded into ``found``: the factor moves toward what was observed, the error
    is the estimate's distance from the truth."""
    observed = min(max(report.reported / max(1, report.rough), FACTOR_RANGE[0]), FACTOR_RANGE[1])
    found.factor = observed if found.samples == 0 else found.factor + SMOOTHING * (observed - found.factor)
    error = abs(report.estimate - report.reported) / report.reported
    found.mean_error = error if found.mean_error is None else (found.mean_error * found.samples + error) / (found.samples + 1)
    found.last_error = error
    found.samples += 1


def _last_reported(messages: tuple[Message, ...] | list[Message]) -> int | None:
    """The index of the last reply whose usage the provider reported, if any."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == Role.ASSISTANT and message.usage is not None and message.usage.prompt_tokens > 0:
            return index
    return None


@attrs.define
class TokenBudget:
    """Estimates the requests of one turn (or one compaction) on one model, and learns from
    the provider's reports of them."""

    calibrations: TokenCalibrations
    model_ref: str
    calibration: Calibration = attrs.field(init=False)
    stored: Calibration = attrs.field(init=False)
    _pending: tuple[int, int] | None = attrs.field(default=None, init=False)  # (rough, estimate) of the request in flight
    _reports: list[Report] = attrs.field(factory=list, init=False)
    #: ((id of the system prompt, id of the tool specs), their characters): see _fixed_chars
    _fixed: tuple[tuple[int, int], int] | None = attrs.field(default=None, init=False)

    def __attrs_post_init__(self) -> None:
        self.calibration = self.calibrations.get(self.model_ref)
        self.stored = attrs.evolve(self.calibration)  # as read: what save() compares with

    def calibrated(self, rough: int) -> int:
        return round(rough * self.calibration.factor)

    def estimate(self, request: ModelRequest, *, fresh: bool = False) -> int:
        """The request's size in tokens: the last report plus what was appended since, or a
        calibrated estimate of all of it when no reply of this history was reported, or when
        ``fresh``: the request differs from the one reported on in more than what was
        appended (pruning shortened old tool results since)."""
        last = None if fresh else _last_reported(request.messages)
        if last is None:
            return self.calibrated(request_tokens(request, self._fixed_chars(request)))
        usage = request.messages[last].usage or Usage()
        return usage.prompt_tokens + usage.output_tokens + self.calibrated(messages_tokens(request.messages[last + 1 :]))

    def fixed(self, request: ModelRequest) -> int:
        """The request's system prompt and tool schemas, in tokens: what no compaction shrinks."""
        return self.calibrated(estimate_tokens(self._fixed_chars(request)))

    def _fixed_chars(self, request: ModelRequest) -> int:
        # The same system prompt and tools go out with every request of a turn: measured once.
        key = (id(request.system), id(request.tools))
        if self._fixed is None or self._fixed[0] != key:
            self._fixed = (key, fixed_chars(request))
        return self._fixed[1]

    def expect(self, request: ModelRequest, *, fresh: bool = False) -> int:
        """:meth:`estimate`, remembered so the reply's reported usage can correct it."""
        estimate = self.estimate(request, fresh=fresh)
        self._pending = (request_tokens(request, self._fixed_chars(request)), estimate)
        return estimate

    def reported(self, model_ref: str, usage: Usage | None) -> None:
        """The provider reported ``usage`` for the request last :meth:`expect`-ed: learned at
        once for this turn's estimates, stored by :meth:`save`."""
        pending, self._pending = self._pending, None
        if pending is None or usage is None or usage.prompt_tokens <= 0:
            return
        report = Report(model_ref, *pending, usage.prompt_tokens)
        self._reports.append(report)
        if model_ref == self.model_ref:
            fold(self.calibration, report)

    def save(self) -> None:
        """Store what this turn learned: one write a turn, and, once a model's factor has
        settled, only when it moved, so a settled model costs no write at all (``/status``
        then shows the error as last stored)."""
        reports, self._reports = self._reports, []
        stored = self.stored
        if stored.samples >= SETTLED_SAMPLES and abs(self.calibration.factor - stored.factor) <= SETTLED_DRIFT * stored.factor:
            if all(r.model_ref == self.model_ref for r in reports):
                return
        self.calibrations.learn(reports)


@attrs.frozen
class ContextLimits:
    """Where in a window of ``window`` tokens a session's history is compacted, and where the
    memory flush runs before that.

    The configured reserve is for large windows: a small one (a local model,
    ``agents.defaults.context_tokens``) keeps at most a quarter of itself in reserve, so there
    is room to work between compactions instead of compacting on every request. A soft
    threshold larger than what is left puts the flush right before the compaction.
    """

    window: int
    compact_at: int
    flush_at: int

    def flush_line(self, fixed: int) -> int:
        """Where the flush runs, given ``fixed`` tokens of system prompt and tools: at
        ``flush_at``, but never before three quarters of the room between them and the
        compaction line is used, which a compaction (keeping at most half of it) always
        leaves room for: a cycle's flush never comes right after its compaction."""
        return max(self.flush_at, fixed + int((self.compact_at - fixed) * FLUSH_AFTER_SHARE))

    @classmethod
    def of(cls, window: int, compaction: CompactionConfig) -> ContextLimits:
        compact_at = window - min(compaction.reserve_tokens_floor, int(window * MAX_RESERVE_SHARE))
        flush_at = compact_at - compaction.memory_flush.soft_threshold_tokens
        return cls(window, compact_at, flush_at if flush_at > 0 else compact_at)
