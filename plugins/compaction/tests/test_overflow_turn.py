"""The shipped strategy in a real turn: ``clawbot agent -m`` on the fake LLM server, whose
reply to the second turn is a context-overflow error. The kernel asks the active strategy
(``summary``, from this plugin's entry point) to compact, the strategy asks the model through
the kernel's summary call, and the retried request starts from the summary, with the
identifiers the model left out appended."""

from __future__ import annotations

import json
from pathlib import Path

from clawbot.testing.cli import invoke_cli


def test_an_overflowing_turn_is_compacted_by_the_default_strategy_and_retried(clawbot_home: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    (clawbot_home / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{fake.base_url}/v1"\napi_key = "sk-test"\n',
        encoding="utf-8",
    )
    fake.reply("Noted: the config is /srv/app/config.yaml.")
    first = invoke_cli("agent", "-m", "Remember: our config lives in /srv/app/config.yaml (ticket ORD-48213).", home=clawbot_home)
    assert first.returncode == 0, first.stderr

    fake.fail("context_length")
    fake.reply("The user said where the config lives.")  # the summary call: drops the path and the ticket
    fake.reply("Still here.")
    second = invoke_cli("agent", "-m", "What next?", home=clawbot_home)

    assert second.returncode == 0, second.stderr
    assert "Still here." in second.stdout and "Traceback" not in second.stdout + second.stderr
    (path,) = [p for p in clawbot_home.rglob("*.jsonl") if '"type": "compaction"' in p.read_text(encoding="utf-8")]
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    (compaction,) = [e for e in entries if e["type"] == "compaction"]
    assert compaction["strategy"] == "summary" and compaction["method"] == "summary"
    assert compaction["summary"].startswith("The user said where the config lives.")
    summary_call = fake.requests[-2]
    assert summary_call.tools == [] and "/srv/app/config.yaml" in json.dumps(summary_call.messages)
    assert "/srv/app/config.yaml" in compaction["summary"] and "ORD-48213" in compaction["summary"]

    retried = fake.requests[-1]
    history = json.dumps(retried.messages)
    assert "ORD-48213" in history and "What next?" in history
    assert "Noted: the config is" not in history  # the first turn is now the summary
