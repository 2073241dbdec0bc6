"""``[channels.telegram]`` takes Telegram's numeric ids only: a username in owner_ids would
never match, and the owner would be treated as a stranger. Each mistake is named by key."""

from __future__ import annotations

from pathlib import Path

import pytest
from clawbot.testing.cli import invoke_cli

CASES = {
    "a username as owner": ('owner_ids = ["@myname"]', "channels.telegram.owner_ids[0]: must be a numeric Telegram user id"),
    "a name in allow_from": ('allow_from = ["42", "alice"]', 'channels.telegram.allow_from[1]: must be a numeric Telegram user id or "*"'),
    "a group by its title": ('groups = ["my friends"]', "channels.telegram.groups[0]: must be a numeric Telegram chat id"),
    "a sender by name": ('group_allow_from = ["bob"]', "channels.telegram.group_allow_from[0]: must be a numeric Telegram user id"),
    "open to anyone, unsaid": ('dm_policy = "open"', 'channels.telegram.dm_policy: "open" lets anyone in: say so with allow_from = ["*"]'),
    "no token": ('token = " "', "channels.telegram.token: must be the bot token @BotFather gave"),
}


@pytest.mark.parametrize("case", CASES)
def test_ids_that_are_not_telegram_ids_are_named_by_key(clawbot_home: Path, case: str) -> None:
    line, problem = CASES[case]
    token = "" if line.startswith("token") else 'token = "123:abc"\n'
    (clawbot_home / "clawbot.toml").write_text(f"[channels.telegram]\n{token}{line}\n", encoding="utf-8")
    result = invoke_cli("config", "validate", home=clawbot_home)
    assert result.returncode == 2 and problem in result.stdout + result.stderr, result.stdout + result.stderr


def test_numeric_ids_a_qualified_id_and_the_star_are_valid(clawbot_home: Path) -> None:
    (clawbot_home / "clawbot.toml").write_text(
        '[channels.telegram]\ntoken = "123:abc"\nowner_ids = ["123456789", "telegram:42"]\nallow_from = ["*"]\ngroups = ["-1001234567890"]\n',
        encoding="utf-8",
    )
    result = invoke_cli("config", "validate", home=clawbot_home)
    assert result.returncode == 0, result.stdout + result.stderr
