"""``clawbot agent -m "/status"``: the session commands are answered on the terminal exactly as
a chat answers them, without a model request; the person at the terminal is the owner. And
the start-up line names the model the turn uses, a ``/model`` choice included.

Real CLI runs in process against the fake LLM served from a thread; the plugin chat command
comes from a real distribution found through its entry point.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawbot.testing.cli import invoke_cli
from clawbot.testing.distributions import install_distribution

WEATHER = """\
from clawbot import ChatCommand, hookimpl


@hookimpl
def clawbot_chat_commands(ctx):
    return [ChatCommand("weather", "today's forecast", lambda c: "sunny in " + c.session_key)]
"""

# the message: the start of what the terminal shows
COMMANDS = {
    "/status": "Session: agent:main:main (no messages yet)\nModel: openai/gpt-a (configured)",
    "/model": "This session uses openai/gpt-a (configured).",
    "/model openai/gpt-b": "This session now uses openai/gpt-b from its next message",
    "/model fast": "This session now uses openai/gpt-fast from its next message",
    "/new": "Started a new session; the previous conversation is kept on disk.",
    "/reset": "Started a new session; the previous conversation is kept on disk.",
    "/whoami": "Channel: cli (direct chat local)\nSender id: local\nOwner: yes (the channel says so)",
    "/help": "clawbot answers these commands itself, without the model",
    "/commands": "/help - ",
    "/context": "System prompt",
    "/compact": "Nothing to compact yet: the conversation is still short.",
    "/compact focus on decisions": "Nothing to compact yet: the conversation is still short.",
    "/stop": "Nothing is running: a one-shot run ends with its turn.",
    "/approve abc123": "Nothing waits for approval in a one-shot run",
    "/deny abc123": "Nothing waits for approval in a one-shot run",
    "/weather": "sunny in agent:main:main",
}


@pytest.fixture
def home(clawbot_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_llm_thread) -> Path:
    install_distribution(tmp_path / "site", "weather-cmd", entry_points={"weather-cmd": "weather_cmd"}, modules={"weather_cmd.py": WEATHER})
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    (clawbot_home / "clawbot.toml").write_text(
        '[agents.defaults]\nmodel_aliases = { fast = "openai/gpt-fast" }\n\n[agents.defaults.model]\nprimary = "openai/gpt-a"\n\n'
        f'[providers.openai]\nbase_url = "{fake_llm_thread.base_url}/v1"\napi_key = "sk-test"\n'
    )
    return clawbot_home


def agent(home: Path, *args: str):  # noqa: ANN201 - CliRun
    run = invoke_cli("agent", *args, home=home)
    assert "Traceback" not in run.stdout + run.stderr
    return run


@pytest.mark.parametrize("message", COMMANDS)
def test_a_session_command_is_answered_on_the_terminal_without_the_model(home: Path, fake_llm_thread, message: str) -> None:
    fake_llm_thread.reply("I am the model")
    run = agent(home, "-m", message)
    assert run.returncode == 0, run.stderr
    assert fake_llm_thread.requests == []
    assert run.stdout.startswith(COMMANDS[message]), run.stdout

    as_json = json.loads(agent(home, "-m", message, "--json").stdout)
    assert as_json["command"] == message.split()[0] and as_json["reply"].startswith(COMMANDS[message].split("\n")[0])
    assert (as_json["agent"], as_json["session"]) == ("main", "agent:main:main")
    assert fake_llm_thread.requests == []


def test_the_startup_line_names_the_model_the_turn_uses(home: Path, fake_llm_thread) -> None:
    assert agent(home, "-m", "/model openai/gpt-b").returncode == 0
    fake_llm_thread.reply("hi from b")
    run = agent(home, "-m", "hello")
    assert run.returncode == 0, run.stderr
    assert [r.model for r in fake_llm_thread.requests] == ["gpt-b"]
    assert run.stderr.splitlines()[0].startswith("clawbot: agent main on openai/gpt-b (chosen with /model); config ")

    assert agent(home, "-m", "/model default").stdout.startswith("This session uses the configured model again: openai/gpt-a.")
    fake_llm_thread.reply("hi from a")
    assert agent(home, "-m", "hello").stderr.splitlines()[0].startswith("clawbot: agent main on openai/gpt-a; config ")


def test_new_with_text_starts_the_new_session_with_it_and_keeps_the_model_choice(home: Path, fake_llm_thread) -> None:
    fake_llm_thread.reply("noted")
    assert agent(home, "-m", "remember 42").returncode == 0
    assert agent(home, "-m", "/model fast").returncode == 0
    fake_llm_thread.reply("fresh start")
    run = agent(home, "-m", "/new plan a trip")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "Started a new session; the previous conversation is kept on disk. It still uses openai/gpt-fast, chosen with /model (/model default goes back).",
        "fresh start",
    ]
    assert fake_llm_thread.requests[-1].model == "gpt-fast"
    assert len(fake_llm_thread.requests[-1].messages) == 2  # the system prompt and the new message: nothing older

    reset = invoke_cli("sessions", "reset", "main", home=home)
    assert reset.returncode == 0 and reset.stdout.rstrip().endswith("; it still uses openai/gpt-fast, chosen with /model")


def test_directives_before_a_question_apply_to_that_turn_only_and_never_reach_the_model(home: Path, fake_llm_thread) -> None:
    """``clawbot agent -m "/model fast /usage tokens what is 2+2?"``: as in a chat, the
    leading directives set this turn's model and footer and are taken off the text."""
    fake_llm_thread.reply("4")
    run = agent(home, "-m", "/model fast /usage tokens what is 2+2?")
    assert run.returncode == 0, run.stderr
    request = fake_llm_thread.requests[-1]
    assert request.model == "gpt-fast"
    assert request.messages[-1]["content"].rstrip().endswith("what is 2+2?") and "/model" not in request.messages[-1]["content"]
    lines = run.stdout.splitlines()
    assert lines[0] == "4" and lines[-1].startswith("Usage: ") and " in, " in lines[-1]  # the usage footer
    fake_llm_thread.reply("again")
    assert agent(home, "-m", "and now?").returncode == 0
    assert fake_llm_thread.requests[-1].model == "gpt-a"  # for that turn only
