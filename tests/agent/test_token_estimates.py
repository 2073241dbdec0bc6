"""The token estimate learns each model's tokens per rough estimate from reported usage and
keeps its error; the figures live in a small state file (read back by ``/status``)."""

from __future__ import annotations

import json

import attrs
import pytest
from clawbot.agent.token_budget import Calibration, Report, TokenBudget, TokenCalibrations
from clawbot.types import Message, ModelRequest, SystemPrompt, Usage


def test_the_factor_follows_the_reports_and_the_error_is_kept(tmp_path) -> None:
    calibrations = TokenCalibrations(tmp_path)
    assert calibrations.get("p/m") == Calibration() and Calibration().text() == "no reported usage yet"
    calibrations.learn([Report("p/m", rough=1000, estimate=1000, reported=1250)])
    first = calibrations.get("p/m")
    assert (first.factor, first.last_error, first.mean_error, first.samples) == (1.25, 0.2, 0.2, 1)
    calibrations.learn([Report("p/m", rough=2000, estimate=2500, reported=2000)])
    second = calibrations.get("p/m")
    assert second.factor == pytest.approx(1.25 + 0.3 * (1.0 - 1.25))
    assert (second.last_error, second.mean_error, second.samples) == (0.25, pytest.approx(0.225), 2)
    assert calibrations.get("p/m") == second and calibrations.get("p/other") == Calibration()
    assert second.text() == "off by 25.0% at the last request, 22.5% on average (2 requests; 1.18 tokens per rough estimate)"


@pytest.mark.parametrize("content", ["not json", '{"p/m": {"factor": "big"}}', '{"p/m": {"factor": 1e9}}', "[]"])
def test_an_unusable_state_file_starts_uncalibrated(tmp_path, content: str) -> None:
    (tmp_path / "token-estimates.json").write_text(content)
    assert TokenCalibrations(tmp_path).get("p/m") == Calibration()
    TokenCalibrations(tmp_path).learn([Report("p/m", rough=100, estimate=100, reported=100)])
    assert json.loads((tmp_path / "token-estimates.json").read_text())["p/m"]["samples"] == 1


def test_the_estimate_starts_from_the_last_reported_usage(tmp_path) -> None:
    budget = TokenBudget(TokenCalibrations(tmp_path), "p/m")
    budget.calibration.factor = 2.0
    reply = attrs.evolve(Message.assistant("b" * 40), usage=Usage(input_tokens=900, cache_read_tokens=100, output_tokens=10))
    request = ModelRequest("m", SystemPrompt("s" * 400), (Message.user("a" * 4000), reply, Message.user("c" * 40)))
    assert budget.estimate(request) == 1000 + 10 + 2 * 10  # reported, its output, the new message calibrated
    unreported = ModelRequest("m", SystemPrompt("s" * 400), (Message.user("a" * 4000),))
    assert budget.estimate(unreported) == 2 * (100 + 1000)


def test_a_turn_learns_at_once_and_stores_once(tmp_path) -> None:
    """Several replies of one turn: each corrects the next estimate; the file is written once."""
    budget = TokenBudget(TokenCalibrations(tmp_path), "p/m")
    request = ModelRequest("m", SystemPrompt("s" * 400), (Message.user("a" * 3600),))  # rough 1,000
    for _ in range(2):
        budget.expect(request)
        budget.reported("p/m", Usage(input_tokens=1500))
    assert budget.calibration.factor == 1.5 and not (tmp_path / "token-estimates.json").exists()
    budget.save()
    assert TokenCalibrations(tmp_path).get("p/m").samples == 2


def test_a_settled_model_is_stored_again_only_when_its_factor_moves(tmp_path) -> None:
    path = tmp_path / "token-estimates.json"
    path.write_text(json.dumps({"p/m": {"factor": 1.5, "samples": 40, "last_error": 0.01, "mean_error": 0.02}}))
    request = ModelRequest("m", SystemPrompt("s" * 400), (Message.user("a" * 3600),))  # rough 1,000
    steady = TokenBudget(TokenCalibrations(tmp_path), "p/m")
    steady.expect(request)
    steady.reported("p/m", Usage(input_tokens=1502))  # within 1%: nothing to write
    before = path.read_bytes()
    steady.save()
    assert path.read_bytes() == before
    moved = TokenBudget(TokenCalibrations(tmp_path), "p/m")
    moved.expect(request)
    moved.reported("p/m", Usage(input_tokens=2000))  # the tokenizer changed: stored
    moved.save()
    assert TokenCalibrations(tmp_path).get("p/m").samples == 41
