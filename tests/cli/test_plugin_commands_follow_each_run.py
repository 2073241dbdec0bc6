"""Each run of ``clawbot`` finds the commands of the plugins its own environment allows, also
when one process runs several (an embedder, the test suite): a command list found while a
plugin was blocked never hides that plugin's command from a later run."""

from __future__ import annotations

from pathlib import Path

from clawbot.testing.cli import invoke_cli


def test_a_plugin_blocked_in_one_run_still_offers_its_command_in_the_next(tmp_path: Path) -> None:
    blocked = invoke_cli("pairing", "list", home=tmp_path, env={"CLAWBOT_DISABLE_PLUGINS": "pairing"})
    assert blocked.returncode == 2 and "No such command 'pairing'" in blocked.stderr
    allowed = invoke_cli("pairing", "list", home=tmp_path, env={"CLAWBOT_DISABLE_PLUGINS": None})
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout == "No pairing requests.\n"
