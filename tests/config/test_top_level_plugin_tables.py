"""A plugin may claim a top-level table of its own (the automation plugin's ``[cron]``): it is
validated like any claimed table, one nobody claims is an unknown key, and while a plugin
did not load its table is skipped, as disabling a plugin never breaks the file."""

from __future__ import annotations

from pathlib import Path

import attrs
from clawbot import ConfigSection
from clawbot.testing import plugin_from_hooks

from .confighelpers import load_config, problems_of


@attrs.frozen(kw_only=True)
class AlarmsConfig:
    loud: bool = False


ALARMS = {"alarms": plugin_from_hooks(clawbot_config_schema=lambda: ConfigSection("alarms", AlarmsConfig))}


def test_a_claimed_top_level_table_is_validated_as_its_plugins(tmp_path: Path) -> None:
    loaded = load_config(tmp_path, "[alarms]\nloud = true\n", plugins=ALARMS, load_entrypoints=False)
    assert loaded.config.section("alarms") == AlarmsConfig(loud=True)
    assert problems_of(tmp_path, '[alarms]\nloud = "yes"\n', plugins=ALARMS, load_entrypoints=False) == ['alarms.loud: expected true or false, got "yes"']
    assert problems_of(tmp_path, "alarms = 3\n", plugins=ALARMS, load_entrypoints=False) == ["alarms: expected a table, got 3"]


def test_an_unclaimed_top_level_table_is_an_unknown_key_naming_the_claimed_ones(tmp_path: Path) -> None:
    [problem] = problems_of(tmp_path, "[alarm]\nloud = true\n", plugins=ALARMS, load_entrypoints=False)
    assert problem == "alarm: unknown key (did you mean alarms?)"


def test_the_table_of_a_plugin_that_did_not_load_is_skipped(tmp_path: Path) -> None:
    loaded = load_config(tmp_path, '[plugins]\ndeny = ["alarms"]\n\n[alarms]\nloud = true\n', plugins=ALARMS, load_entrypoints=False)
    assert loaded.config.section("alarms") is None
