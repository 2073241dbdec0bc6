"""``session.reset``: an idle reset needs a number of minutes, named by key when missing."""

from __future__ import annotations

from pathlib import Path

from .confighelpers import load_config, problems_of


def test_idle_mode_without_minutes_names_the_key(tmp_path: Path) -> None:
    assert problems_of(tmp_path, '[session.reset]\nmode = "idle"\n') == ['session.reset.idle_minutes: must be at least 1 when mode = "idle"']


def test_idle_and_daily_resets_are_accepted(tmp_path: Path) -> None:
    assert load_config(tmp_path, '[session.reset]\nmode = "idle"\nidle_minutes = 30\n').config.session.reset.idle_minutes == 30
    assert load_config(tmp_path, '[session.reset]\nmode = "daily"\nat_hour = 0\n').config.session.reset.at_hour == 0
