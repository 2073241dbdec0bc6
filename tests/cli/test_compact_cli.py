"""``/compact [instructions]`` from the terminal and from a chat, an agent's own strategy, a
process killed while compacting, and the token estimate's error in ``/status``.

Real ``clawbot agent`` runs (in process, and one subprocess that is SIGKILLed) against the
fake LLM served from a thread; the strategies come from a real plugin distribution found
through its entry point, and ask the model through the kernel's ``summarize``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clawbot.sessions.transcript import load_transcript
from clawbot.testing.cli import invoke_cli, subprocess_env
from clawbot.testing.distributions import install_distribution

STRATEGIES = """\
from clawbot import CompactionResult, CompactionStrategy, hookimpl


class Ask(CompactionStrategy):
    def __init__(self, name):
        self.name = name

    async def compact(self, request):
        head = f"[{self.name} {request.reason}] focus={request.instructions}\\n"
        summary = await request.summarize("Summarise.", head + "\\n".join(m.text for m in request.messages[:-1]))
        return CompactionResult(self.name + ": " + summary, len(request.messages) - 1, 1000, 100)


@hookimpl
def clawbot_compaction_strategies(ctx):
    return [Ask("alpha"), Ask("beta")]
"""

# the meeting's minutes: a conversation long enough that a summary is shorter
MINUTES = "The minutes of the meeting, item by item, with everyone's view on each. " * 20

CONFIG = """\
[agents.defaults.model]
primary = "openai/gpt-a"

[agents.defaults.compaction]
strategy = "alpha"

[[agents.list]]
id = "main"
default = true

[[agents.list]]
id = "helper"
compaction = { strategy = "beta" }

[providers.openai]
base_url = "BASE/v1"
api_key = "sk-test"
"""


@pytest.fixture
def home(clawbot_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_llm_thread) -> Path:
    install_distribution(tmp_path / "site", "ask-compaction", entry_points={"ask-compaction": "ask_compaction"}, modules={"ask_compaction.py": STRATEGIES})
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    (clawbot_home / "clawbot.toml").write_text(CONFIG.replace("BASE", fake_llm_thread.base_url))
    return clawbot_home


def agent(home: Path, *args: str):  # noqa: ANN201 - CliRun
    run = invoke_cli("agent", *args, home=home)
    assert "Traceback" not in run.stdout + run.stderr
    assert run.returncode == 0, run.stderr
    return run


def compactions(home: Path, agent_id: str = "main") -> list[dict]:
    [path] = (home / "sessions" / agent_id).glob("*.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [e for e in lines if e.get("type") == "compaction"]


@pytest.mark.parametrize(("agent_id", "strategy"), [("main", "alpha"), ("helper", "beta")])
def test_compact_from_the_terminal_uses_the_agents_strategy_and_the_instructions(home: Path, fake_llm_thread, agent_id: str, strategy: str) -> None:
    fake = fake_llm_thread
    assert agent(home, "--agent", agent_id, "-m", "/compact").stdout.startswith("Nothing to compact yet")
    fake.reply("Noted: ship on Friday.")
    agent(home, "--agent", agent_id, "-m", "decision: ship on Friday. " + MINUTES)
    fake.reply("They chose Friday.")

    run = agent(home, "--agent", agent_id, "-m", "/compact focus on decisions")

    [entry] = compactions(home, agent_id)
    assert run.stdout.strip() == "Compacted the conversation: 1,000 -> 100 tokens (summary)."
    assert (entry["strategy"], entry["reason"], entry["summary"]) == (strategy, "manual", f"{strategy}: They chose Friday.")
    summary_call = fake.requests[-1]
    assert summary_call.tools == [] and summary_call.messages[-1]["content"].startswith(f"[{strategy} manual] focus=focus on decisions\n")
    fake.reply("Friday it is.")
    assert agent(home, "--agent", agent_id, "-m", "when do we ship?").stdout.strip() == "Friday it is."
    assert f"{strategy}: They chose Friday." in json.dumps(fake.requests[-1].messages)


async def test_compact_typed_in_a_chat_is_answered_by_the_gateway(make_kernel, fake_channel, fake_llm) -> None:
    from clawbot.testing import plugin_from_hooks

    from ..e2e.e2etools import make_provider, providers_plugin
    from ..gateway.chatkit import open_chat
    from ..plugins_for_tests import AskTheModel

    strategy = AskTheModel()
    provider = make_provider("openai-chat", fake_llm)
    plugins = {"llm": providers_plugin(provider), "compaction": plugin_from_hooks(clawbot_compaction_strategies=lambda ctx: [strategy])}
    chat = await open_chat(make_kernel, fake_channel, provider, config='[agents.defaults]\nowner_ids = ["fake:alice"]\n', plugins=plugins, model="gpt-test")
    await fake_channel.inject("/compact", peer_id="alice")
    fake_llm.reply("noted")
    await fake_channel.inject("we picked the blue logo. " + MINUTES, peer_id="alice")
    fake_llm.reply("They picked the blue logo.")
    await fake_channel.inject("/compact focus on open questions", peer_id="alice")
    await chat.close()
    texts = fake_channel.texts()
    assert texts[0].endswith("Nothing to compact yet: the conversation is still short.")
    assert "Compacted the conversation: " in texts[-1]
    assert (strategy.requests[0].reason, strategy.requests[0].instructions) == ("manual", "focus on open questions")


async def test_a_compaction_the_turn_needed_is_told_in_the_chat_before_the_reply(make_kernel, fake_channel, fake_llm) -> None:
    from clawbot.testing import plugin_from_hooks

    from ..e2e.e2etools import make_provider, providers_plugin
    from ..gateway.chatkit import open_chat
    from ..plugins_for_tests import AskTheModel

    provider = make_provider("openai-chat", fake_llm)
    plugins = {"llm": providers_plugin(provider), "compaction": plugin_from_hooks(clawbot_compaction_strategies=lambda ctx: [AskTheModel()])}
    # a window of 16,000 with a reserve of 4,000 leaves 12,000 a request may take
    config = (
        "[agents.defaults]\ncontext_tokens = 16000\n[agents.defaults.compaction]\nreserve_tokens_floor = 4000\n"
        "[agents.defaults.compaction.memory_flush]\nenabled = false\n"
    )
    chat = await open_chat(make_kernel, fake_channel, provider, config=config, plugins=plugins, model="gpt-test")
    big = "lorem ipsum dolor sit amet " * 900  # about 6,000 tokens
    fake_llm.reply("one")
    await fake_channel.inject("first " + big, peer_id="alice")
    fake_llm.reply("They sent a long text.")  # the summary
    fake_llm.reply("two")
    await fake_channel.inject("second " + big, peer_id="alice")
    await chat.close()
    texts = fake_channel.texts()
    assert texts[0] == "one" and texts[-1] == "two", texts
    assert len(texts) == 3 and texts[1].startswith("Compacted the conversation: ") and texts[1].endswith(" tokens (summary)."), texts
    assert [m.notice for m in fake_channel.sent] == [False, True, False]  # clawbot's own words, marked as such


def test_an_unknown_strategy_for_one_agent_is_a_startup_error_naming_its_key(home: Path) -> None:
    (home / "clawbot.toml").write_text((home / "clawbot.toml").read_text().replace('strategy = "beta"', 'strategy = "gamma"'))
    run = invoke_cli("agent", "-m", "hi", home=home)
    assert run.returncode != 0 and "Traceback" not in run.stdout + run.stderr
    assert "agents.list[1].compaction.strategy: no installed plugin offers the compaction strategy 'gamma'" in run.stderr


def test_a_process_killed_while_compacting_leaves_a_session_that_goes_on(home: Path, tmp_path: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    fake.reply("Noted.")
    agent(home, "-m", "remember the blue logo")
    fake.fail("slow", delay=30)  # the summary call hangs

    env = subprocess_env(home, None, tmp_path / "site")
    killed = subprocess.Popen(
        [sys.executable, "-m", "clawbot.cli.main", "agent", "-m", "/compact"], cwd=home, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while len(fake.requests) < 2:
            assert killed.poll() is None, killed.communicate()
            assert time.monotonic() < deadline, "the summary call never came"
            time.sleep(0.02)
    finally:
        killed.kill()  # SIGKILL while the strategy waits for the model
        killed.communicate(timeout=10)
    assert killed.returncode == -9

    [path] = (home / "sessions" / "main").glob("*.jsonl")
    history = load_transcript(path, _converter()).messages()
    assert [m.text for m in history] == ["remember the blue logo", "Noted."] and compactions(home) == []
    fake.reply("Blue.")
    assert agent(home, "-m", "which logo?").stdout.strip() == "Blue."


def _converter():  # noqa: ANN202
    from clawbot.sessions.codec import make_data_converter

    return make_data_converter()


def test_status_shows_how_far_the_token_estimate_was_from_the_reported_usage(home: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    fake.reply("one")
    agent(home, "-m", "hello")
    assert "Token estimate: " in agent(home, "-m", "/status").stdout
    for text in ("second", "third"):
        fake.reply("ok")
        agent(home, "-m", text * 200)
    state = json.loads((home / "token-estimates.json").read_text())["openai/gpt-a"]
    status = agent(home, "-m", "/status").stdout
    line = next(x for x in status.splitlines() if x.startswith("Token estimate: "))
    assert line == (
        f"Token estimate: off by {state['last_error']:.1%} at the last request, {state['mean_error']:.1%} on average "
        f"(3 requests; {state['factor']:.2f} tokens per rough estimate)"
    )
    # from the second request on, the estimate starts from the reported usage: close to it
    assert state["last_error"] < 0.05


def test_status_right_after_compact_tells_what_the_compaction_left(home: Path, fake_llm_thread) -> None:
    fake = fake_llm_thread
    fake.reply("Noted: ship on Friday.")
    agent(home, "-m", "decision: ship on Friday. " + MINUTES)
    fake.reply("They chose Friday.")
    compacted = agent(home, "-m", "/compact").stdout.strip()
    after = int(compacted.split("-> ")[1].split(" tokens")[0].replace(",", ""))
    context = next(x for x in agent(home, "-m", "/status").stdout.splitlines() if x.startswith("Context: "))
    assert (
        context
        == f"Context: about {after:,} tokens of conversation since the compaction, plus the system prompt and tools (the next request reports the whole)"
    )
