"""`clawbot run` end to end: the terminal channel, the real OpenAI SDK, the fake server."""

from __future__ import annotations

from pathlib import Path

from .clihelpers import run_cli


def test_run_answers_terminal_lines_and_remembers_the_conversation(tmp_path: Path, fake_llm_thread) -> None:
    fake_llm_thread.reply("Hello! How can I help?")
    fake_llm_thread.reply("You said hello first.")
    (tmp_path / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{fake_llm_thread.base_url}/v1"\napi_key = "sk-secret-test"\n'
    )
    result = run_cli("run", home=tmp_path, stdin="hello\nwhat did I say first?\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["Hello! How can I help?", "You said hello first."]
    assert "openai/gpt-test" in result.stderr and "terminal" in result.stderr
    second = fake_llm_thread.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert "sk-secret-test" not in result.stdout + result.stderr
    shown = run_cli("sessions", "show", "agent:main:main", home=tmp_path)
    assert "[assistant] You said hello first." in shown.stdout


def test_agent_closes_its_sdk_clients(tmp_path: Path, fake_llm_thread) -> None:
    fake_llm_thread.reply("bye")
    (tmp_path / "clawbot.toml").write_text(
        f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{fake_llm_thread.base_url}/v1"\napi_key = "sk-test"\n'
    )
    result = run_cli("agent", "-m", "hi", home=tmp_path, env={"PYTHONWARNINGS": "always::ResourceWarning"})
    assert result.returncode == 0 and result.stdout.strip() == "bye"
    assert "ResourceWarning" not in result.stderr, result.stderr


def test_a_named_session_belongs_to_the_chosen_agent(tmp_path: Path, fake_llm_thread) -> None:
    import json

    fake_llm_thread.reply("noted")
    (tmp_path / "clawbot.toml").write_text(
        '[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n'
        f'[providers.openai]\nbase_url = "{fake_llm_thread.base_url}/v1"\napi_key = "sk-test"\n\n'
        '[[agents.list]]\nid = "main"\ndefault = true\n\n[[agents.list]]\nid = "work"\n'
    )
    result = run_cli("agent", "-m", "remember this", "--agent", "work", "--session", "notes", "--json", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["session"] == "agent:work:notes"
    path = Path(run_cli("sessions", "path", "agent:work:notes", home=tmp_path).stdout.strip())
    assert path.parent.name == "work" and path.is_file()


def test_the_default_tools_work_in_a_real_turn_and_stay_in_the_workspace(tmp_path: Path, fake_llm_thread) -> None:
    from clawbot.testing.fake_llm import Reply, ToolCallSpec

    workspace = tmp_path / "ws"
    fake_llm_thread.queue(
        Reply(
            tool_calls=[
                ToolCallSpec("write", {"path": "hello.py", "content": "print('hi')\n"}, id="w1"),
                ToolCallSpec("write", {"path": "../escape.txt", "content": "x"}, id="w2"),
            ]
        ),
        Reply(tool_calls=[ToolCallSpec("read", {"path": "hello.py"}, id="r1")]),
        "Done: hello.py is written.",
    )
    (tmp_path / "clawbot.toml").write_text(
        f'[agents.defaults]\nworkspace = "{workspace}"\n\n[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n'
        f'[providers.openai]\nbase_url = "{fake_llm_thread.base_url}/v1"\napi_key = "sk-test"\n\n'
        '[tools]\nallow = ["group:fs"]\n'
    )
    result = run_cli("agent", "-m", "write hello.py", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Done: hello.py is written."
    assert (workspace / "hello.py").read_text() == "print('hi')\n"
    assert not (tmp_path / "escape.txt").exists()
    second = fake_llm_thread.requests[1].tool_results
    assert "Wrote hello.py" in str(second[0]["content"]) and "outside the workspace" in str(second[1]["content"])
    assert sorted(fake_llm_thread.requests[0].tools) == ["apply_patch", "edit", "find", "grep", "ls", "read", "write"]
