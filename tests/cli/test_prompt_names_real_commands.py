"""The prompt's "clawbot CLI" section names only commands, subcommands, options and chat
commands that exist: the model is told "never invent commands", so the list itself must
not invent any.

The section is the workspace plugin's; what it is checked against is the kernel's own
command tree and chat commands, so the test lives with the kernel's tests."""

from __future__ import annotations

import re

import click
import pytest
from clawbot.cli.main import cli
from clawbot.gateway.commands import BUILTIN_COMMANDS
from clawbot_workspace.sections.control import CLI_COMMANDS
from clawbot_workspace.sections.control import cli as cli_section


def _command(path: list[str]) -> click.Command | None:
    ctx = click.Context(cli)
    command: click.Command | None = cli
    for name in path:
        if not isinstance(command, click.Group):
            return None
        command = command.get_command(ctx, name)
        if command is None:
            return None
    return command


def _options(command: click.Command) -> set[str]:
    return {opt for param in command.params for opt in getattr(param, "opts", [])}


@pytest.mark.parametrize("line", [c for c, _ in CLI_COMMANDS])
def test_every_cli_command_the_prompt_names_exists_with_its_options(line: str) -> None:
    words = line.split()
    assert words[0] == "clawbot"
    name = words[1]
    top = _command([name])
    assert top is not None, f"the prompt names `clawbot {name}`, which does not exist"
    subcommands = [w for w in words[2:] if re.fullmatch(r"[a-z][a-z|-]*", w)]
    for group in subcommands:
        for sub in group.split("|"):
            assert _command([name, sub]) is not None, f"the prompt names `clawbot {name} {sub}`, which does not exist"
    for flag in re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", line):
        assert flag in _options(top), f"the prompt names `{flag}` for `clawbot {name}`, which it does not take"


def test_every_chat_command_the_prompt_names_is_answered_by_clawbot() -> None:
    text = cli_section(None)  # type: ignore[arg-type]  # the section reads nothing of the context
    named = set(re.findall(r"(?<![\w/])/([a-z]+)\b", text.split("Chat commands", 1)[1]))
    assert named, "the section names no chat commands"
    assert named <= set(BUILTIN_COMMANDS), f"not chat commands clawbot answers: {sorted(named - set(BUILTIN_COMMANDS))}"
