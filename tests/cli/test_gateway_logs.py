"""``clawbot gateway logs``: the gateway's log rotates, hides secrets, and the command shows its end."""

from __future__ import annotations

import logging
from pathlib import Path

from clawbot.cli.main import cli
from click.testing import CliRunner


def test_the_gateway_log_rotates_and_never_shows_a_secret(tmp_path: Path) -> None:
    from clawbot.cli.logs import configure_logging

    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        configure_logging("info", {"TELEGRAM_BOT_TOKEN": "123456:secret-token"}, state_root=tmp_path, log_name="gateway", max_bytes=2_000, backups=2)
        log = logging.getLogger("clawbot.gateway.test")
        for index in range(100):
            log.warning("line %d with the token 123456:secret-token in it", index)
    finally:
        for handler in root.handlers:
            handler.close()
        root.handlers[:], _ = saved
        root.setLevel(saved[1])
    files = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert files == ["gateway.log", "gateway.log.1", "gateway.log.2"]
    text = "".join((tmp_path / "logs" / name).read_text() for name in files)
    assert "secret-token" not in text and "line 99 with the token *** in it" in text
    assert all((tmp_path / "logs" / name).stat().st_size <= 2_000 for name in files)

    env = {"HOME": str(tmp_path / "home"), "CLAWBOT_HOME": str(tmp_path)}
    assert (
        CliRunner()
        .invoke(cli, ["gateway", "logs", "-n", "2"], env=env, catch_exceptions=False)
        .output.splitlines()[-1]
        .endswith("line 99 with the token *** in it")
    )
