"""No command lets text from the workspace, a transcript or a skill draw on the terminal.

The model can write AGENTS.md, create skill folders and fill transcripts; a chat fills
session keys. Escape sequences planted in all of them (a title change, an OSC 52 clipboard
write, an OSC 8 link, a CSI erase, a C1 CSI, a bell, a bidi override, a character that
draws nothing) must reach the user's terminal as ``\\uXXXX`` text from every command,
run through the real ``clawbot`` CLI. A second check keeps every command module printing
through :mod:`clawbot.cli.output`.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from clawbot.sessions.store import SessionStore
from clawbot.testing.cli import invoke_cli
from clawbot.types import Message, Role, TextBlock, ToolCallBlock, Usage

ROOT = Path(__file__).resolve().parents[2]
# Without "/" so that it can also be part of a folder name.
PAYLOAD = "\x1b]0;pwned\x07\x1b]52;c;Y3VybCBldmlsfHNo\x1b\\\x1b]8;;https:evil\x1b\\\x1b[2K\x9b1m\u202e\u034f"
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u034f")
SESSION = f"agent:main:chat{PAYLOAD}"


def _plant(home: Path) -> None:
    """A workspace, skills, sessions and configuration, each carrying the payload."""
    ws = home / f"ws{PAYLOAD}"
    (ws / "skills" / "evil").mkdir(parents=True)
    (ws / "AGENTS.md").write_text(f"Be nice.\n{PAYLOAD}\n")
    (ws / "skills" / "evil" / "SKILL.md").write_text(f"---\nname: evil\ndescription: {json.dumps('hi ' + PAYLOAD)}\n---\n{PAYLOAD}\n")
    (ws / "skills" / f"bad{PAYLOAD}").mkdir()
    (ws / "skills" / f"bad{PAYLOAD}" / "SKILL.md").write_text('---\nname: "bad name!"\ndescription: d\n---\n')
    (home / "clawbot.toml").write_text(f"[agents.defaults]\nworkspace = {json.dumps(str(ws))}\n")
    store = SessionStore(home / "sessions")
    for key in ("agent:main:main", SESSION):
        session = store.open(key)
        session.transcript.append_message(Message.user(f"hi {PAYLOAD}"))
        call = ToolCallBlock(id="c1", name=f"exec{PAYLOAD}", arguments={"command": PAYLOAD})
        session.transcript.append_message(Message(Role.ASSISTANT, (TextBlock(PAYLOAD), call)))
        store.record_turn(key, usage=Usage(), model=f"openai/gpt{PAYLOAD}")


# command line -> whether its output must show the payload (escaped)
COMMANDS = {
    "context": (("context",), True),
    "context --show": (("context", "--show"), True),
    "context --json": (("context", "--json"), True),
    "skills list": (("skills", "list"), True),
    "skills list --json": (("skills", "list", "--json"), True),
    "skills check": (("skills", "check"), True),
    "sessions list": (("sessions", "list"), True),
    "sessions list --json": (("sessions", "list", "--json"), True),
    "sessions show": (("sessions", "show", "agent:main:main"), True),
    "sessions show --json": (("sessions", "show", "agent:main:main", "--json"), True),
    "sessions show (key from a chat)": (("sessions", "show", SESSION), True),
    "sessions path": (("sessions", "path", SESSION), False),
    "config show": (("config", "show"), True),
    "config show --json": (("config", "show", "--json"), True),
    "config validate": (("config", "validate"), False),
    "doctor": (("doctor",), False),
    "plugins list": (("plugins", "list"), False),
    "init (workspace plugin)": (("init",), True),
    "unknown session": (("sessions", "show", f"agent:main:none{PAYLOAD}"), True),
    "unknown agent": (("context", "--agent", f"x{PAYLOAD}"), True),
}


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    _plant(home)
    return home


@pytest.mark.parametrize("name", COMMANDS)
def test_no_command_writes_an_escape_sequence_from_planted_text(planted: Path, name: str) -> None:
    args, shows = COMMANDS[name]
    result = invoke_cli(*args, home=planted)
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    for char in RAW:
        assert char not in output, f"{name} wrote {char!r}: {output[:600]!r}"
    if shows:
        assert "\\u001b" in output or "\\x1b" in output, f"{name} did not show the planted text: {output[:600]!r}"


def test_json_output_still_decodes_to_what_was_stored(planted: Path) -> None:
    listed = json.loads(invoke_cli("skills", "list", "--json", home=planted).stdout)
    assert {s["name"]: s["description"] for s in listed["skills"]}["evil"] == "hi " + PAYLOAD
    report = json.loads(invoke_cli("context", "--json", home=planted).stdout)
    assert report["skills"]["entries"]


# Modules whose commands print; each must print through clawbot.cli.output.
COMMAND_MODULES = sorted(
    {*(ROOT / "kernel" / "clawbot" / "cli").glob("*.py"), ROOT / "plugins" / "workspace" / "clawbot_workspace" / "init.py"}
    - {ROOT / "kernel" / "clawbot" / "cli" / "output.py"}
)


def _raw_printing(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
            if name in ("print", "Console") and not owner or (owner, name) in (("click", "echo"), ("click", "secho"), ("sys", "stdout")):
                found.append(f"{path.name}:{node.lineno} {owner + '.' if owner else ''}{name}")
        if isinstance(node, ast.ImportFrom) and node.module == "rich.console":
            found.append(f"{path.name}:{node.lineno} imports rich.console")
    return found


@pytest.mark.parametrize("path", COMMAND_MODULES, ids=lambda p: p.name)
def test_commands_print_only_through_the_visible_helpers(path: Path) -> None:
    assert _raw_printing(path) == []


def test_plugin_commands_print_only_through_the_visible_helpers() -> None:
    """Every plugin module that adds a command (``clawbot_commands``) prints the same way."""
    plugin_modules = [p for p in (ROOT / "plugins").glob("*/clawbot_*/**/*.py") if "click" in p.read_text(encoding="utf-8")]
    assert plugin_modules, "the workspace plugin's `clawbot init` is expected here"
    assert [line for path in plugin_modules for line in _raw_printing(path)] == []
