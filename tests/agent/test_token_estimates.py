"""The token estimate learns each model's tokens per rough estimate from reported usage and
keeps its error; the figures live in a small state file (read back by ``/status``)."""

from __future__ import annotations

import json

import attrs
import pytest
from clawbot.agent.token_budget import Calibration, TokenBudget, TokenCalibrations
from clawbot.types import Message, ModelRequest, SystemPrompt, Usage


def test_the_factor_follows_the_reports_and_the_error_is_kept(tmp_path) -> None:
    calibrations = TokenCalibrations(tmp_path)
    assert calibrations.get("p/m") == Calibration() and Calibration().text() == "no reported usage yet"
    first = calibrations.learn("p/m", rough=1000, estimate=1000, reported=1250)
    assert (first.factor, first.last_error, first.mean_error, first.samples) == (1.25, 0.2, 0.2, 1)
    second = calibrations.learn("p/m", rough=2000, estimate=2500, reported=2000)
    assert second.factor == pytest.approx(1.25 + 0.3 * (1.0 - 1.25))
    assert (second.last_error, second.mean_error, second.samples) == (0.25, pytest.approx(0.225), 2)
    assert calibrations.get("p/m") == second and calibrations.get("p/other") == Calibration()
    assert second.text() == "off by 25.0% at the last request, 22.5% on average (2 requests; 1.18 tokens per rough estimate)"


@pytest.mark.parametrize("content", ["not json", '{"p/m": {"factor": "big"}}', '{"p/m": {"factor": 1e9}}', "[]"])
def test_an_unusable_state_file_starts_uncalibrated(tmp_path, content: str) -> None:
    (tmp_path / "token-estimates.json").write_text(content)
    assert TokenCalibrations(tmp_path).get("p/m") == Calibration()
    TokenCalibrations(tmp_path).learn("p/m", rough=100, estimate=100, reported=100)
    assert json.loads((tmp_path / "token-estimates.json").read_text())["p/m"]["samples"] == 1


def test_the_estimate_starts_from_the_last_reported_usage(tmp_path) -> None:
    budget = TokenBudget(TokenCalibrations(tmp_path), "p/m")
    budget.calibration.factor = 2.0
    reply = attrs.evolve(Message.assistant("b" * 40), usage=Usage(input_tokens=900, cache_read_tokens=100, output_tokens=10))
    request = ModelRequest("m", SystemPrompt("s" * 400), (Message.user("a" * 4000), reply, Message.user("c" * 40)))
    assert budget.estimate(request) == 1000 + 10 + 2 * 10  # reported, its output, the new message calibrated
    unreported = ModelRequest("m", SystemPrompt("s" * 400), (Message.user("a" * 4000),))
    assert budget.estimate(unreported) == 2 * (100 + 1000)
