"""One answer to every slash command, for a chat (the gateway) and for ``clawbot agent -m``.

:func:`command_of` says whether a message is a command clawbot answers itself (a built-in
one, or a plugin's chat command); :func:`answer_command` answers it, never the model. Who
may use which command is decided here, once (see :mod:`clawbot.gateway.commands`). What
only a running gateway has, its turns in flight, comes in as :class:`RunningTurns`; a
one-shot run has none, so ``/stop`` there says nothing runs and ``/approve`` / ``/deny`` say
nothing waits (``clawbot agent`` asks on the terminal while its turn runs).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

import attrs

from clawbot.agent.compaction import compact_session
from clawbot.agent.notices import quoted_line
from clawbot.agent.owners import is_owner, owner_ids_for
from clawbot.agent.prompt_report import prompt_report, report_text
from clawbot.agent.runtime import AgentRuntime
from clawbot.agent.session_control import reset_session
from clawbot.gateway import setting_commands as settings
from clawbot.gateway.commands import (
    BUILTIN_COMMANDS,
    OPEN_COMMANDS,
    OWNER_ONLY_COMMANDS,
    ParsedCommand,
    controls_own_session,
    parse_approval,
    parse_command,
    plugin_command,
    refusal,
    run_plugin_command,
)
from clawbot.gateway.directives import split_directives
from clawbot.gateway.session_commands import answer
from clawbot.gateway.setting_commands import SETTING_COMMANDS
from clawbot.kernel import Kernel
from clawbot.sessions.store import agent_of
from clawbot.types import ChatCommandContext, InboundMessage, SessionEvent

log = logging.getLogger(__name__)

#: commands that change what the session's next message finds: a chat acts on them before
#: it reads the next message; the others are answered beside a running turn
ACTS_AT_ONCE = ("stop", "new", "reset", *SETTING_COMMANDS)


@attrs.frozen
class CommandReply:
    text: str | None
    notice: bool = True
    """clawbot's own words (a plugin's command answers in its own)."""
    then: Callable[[], None] | None = None
    """Runs once the reply is out: an approved command starts after "Approved" is read."""
    follow_up: str | None = None
    """``/new <text>``: ``text``, answered as an ordinary message in the new session."""


class RunningTurns(Protocol):
    async def stop_turns(self, session_key: str) -> tuple[int, int]:
        """Cancel the session's turns: (running turns stopped, queued messages dropped)."""
        ...


def command_of(kernel: Kernel, text: str) -> ParsedCommand | None:
    """The command ``text`` is, or ``None`` for a message the agent answers (a slash word
    nobody offers, like ``/etc/hosts is broken``, is one)."""
    directives, rest = split_directives(text)
    if directives and rest:  # directives for this turn: the message goes to the agent
        return None
    if len(directives) == 1:  # one alone is its command (also written /think:high)
        return ParsedCommand(directives[0].name, directives[0].value)
    if directives:  # several alone: each kept for the session, like its command
        return ParsedCommand(directives[0].name, directives[0].value, directives=directives)
    command = parse_command(text)
    if command is None:
        return None
    if command.name in BUILTIN_COMMANDS or plugin_command(kernel.chat_commands, command.name) is not None:
        return command
    return None


async def answer_command(
    kernel: Kernel,
    runtime: AgentRuntime | None,
    message: InboundMessage,
    session_key: str,
    command: ParsedCommand,
    turns: RunningTurns | None,
) -> CommandReply:
    """The reply to ``command`` from ``message``'s sender in ``session_key``; ``turns`` is
    ``None`` in a one-shot run. A failure becomes a short reply, never a crash."""
    try:
        return await _answer(kernel, runtime, message, session_key, command, turns)
    except Exception as exc:
        log.exception("/%s failed", command.name)
        return CommandReply(f"/{command.name} failed: {type(exc).__name__}")


async def _stop_background(kernel: Kernel, session_key: str, command: str) -> str:
    """``/stop``, ``/new``, ``/reset``: the work plugins run for the session ends with it
    (``clawbot_session_stop``); what they say they stopped, for /stop's reply."""
    info = kernel.sessions.get(session_key)
    event = SessionEvent(agent_of(session_key), session_key, info.session_id if info is not None else "", f"/{command}")
    notes = await kernel.plugins.collect("clawbot_session_stop", event=event)
    return "".join(f" {note.value}" for note in notes if isinstance(note.value, str) and note.value)


async def _answer(
    kernel: Kernel,
    runtime: AgentRuntime | None,
    message: InboundMessage,
    session_key: str,
    command: ParsedCommand,
    turns: RunningTurns | None,
) -> CommandReply:
    name, args = command.name, command.args
    owner = is_owner(message, owner_ids_for(kernel.config, message.channel))
    if name in OWNER_ONLY_COMMANDS:  # anyone else is refused, whatever the id: it tells nothing about what waits
        if not owner:
            return CommandReply(refusal(name))
        return _approval(runtime, session_key, args, name == "deny", owner, turns)
    if name not in OPEN_COMMANDS and not owner and not controls_own_session(message, session_key):
        return CommandReply(refusal(name))
    stopped_too = await _stop_background(kernel, session_key, name) if name in ("stop", "new", "reset") else ""
    if name == "stop":
        if turns is None:
            return CommandReply("Nothing is running: a one-shot run ends with its turn.")
        running, queued = await turns.stop_turns(session_key)
        stopped = "Stopped." + _dropped(queued) + stopped_too
        return CommandReply(stopped if running or queued or stopped_too else "Nothing is running.")
    if name in ("new", "reset"):
        return await _new_session(kernel, session_key, name, args, turns)
    if name == "context":
        return CommandReply(await _context(runtime, message, session_key), notice=False)
    if name == "compact":
        return CommandReply(await _compact(runtime, session_key, args))
    if command.directives or name in SETTING_COMMANDS or name == "models":
        return CommandReply(await _settings(kernel, runtime, session_key, command, owner))
    plugin = plugin_command(kernel.chat_commands, name)
    if plugin is not None:
        ctx = ChatCommandContext(args, message, agent_of(session_key), session_key, kernel, owner=owner)
        return CommandReply(await run_plugin_command(plugin, ctx), notice=False)

    return CommandReply(await answer(kernel, runtime, message, session_key, name, args, owner=owner))


async def _settings(kernel: Kernel, runtime: AgentRuntime | None, session_key: str, command: ParsedCommand, owner: bool) -> str:
    if command.directives:
        return await settings.directives_text(kernel, runtime, session_key, command.directives, owner=owner)
    if command.name == "models":
        return await settings.models_text(kernel, runtime, session_key, owner=owner)
    return await settings.setting_text(kernel, session_key, command.name, command.args)


def _dropped(queued: int) -> str:
    if not queued:
        return ""
    return f" {queued} queued message{' was' if queued == 1 else 's were'} dropped unanswered."


def _approval(runtime: AgentRuntime | None, session_key: str, args: str, deny: bool, by_owner: bool, turns: RunningTurns | None) -> CommandReply:
    if runtime is None:
        return CommandReply("Nothing here asks for approvals.")
    if turns is None:
        return CommandReply("Nothing waits for approval in a one-shot run: clawbot agent asks on the terminal while its turn runs.")
    broker = runtime.approvals
    parsed = parse_approval(args, deny=deny)
    if isinstance(parsed, str):
        waiting = "".join(f"\n- {line}" for line in broker.waiting(session_key)) if by_owner else ""
        return CommandReply(parsed + (f"\nWaiting for your answer:{waiting}" if waiting else ""))
    approval_id, decision = parsed
    if decision is None:  # the owner reads what the notice left out before deciding
        return CommandReply(broker.show(session_key, approval_id, by_owner=by_owner))
    notice, commit = broker.answer(session_key, approval_id, decision, by_owner=by_owner)
    return CommandReply(notice, then=commit)  # confirmed first, then acted on


async def _new_session(kernel: Kernel, session_key: str, name: str, first: str, turns: RunningTurns | None) -> CommandReply:
    """``/new`` and ``/reset``: stop the session's turns, start a fresh session; the /model
    choice stays (it is this chat's, not its conversation's), and the reply says so."""
    running, queued = await turns.stop_turns(session_key) if turns is not None else (0, 0)
    _old, new = await reset_session(kernel, session_key, f"/{name}")  # a failure: answer_command's reply
    text = "Started a new session; the previous conversation is kept on disk."
    if running:
        text += " The running turn was stopped."
    text += _dropped(queued)
    if new.model_override:
        text += f" It still uses {quoted_line(new.model_override)}, chosen with /model (/model default goes back)."
    return CommandReply(text, follow_up=first or None)


async def _context(runtime: AgentRuntime | None, message: InboundMessage, session_key: str) -> str:
    """``/context``: the size of this session's system prompt, part by part."""
    if runtime is None:
        return "No agent answers here."

    try:
        conversation = await runtime.conversation(agent_of(session_key))
        return report_text(prompt_report(await conversation.build_prompt(session_key, message.channel)))
    except Exception as exc:  # a report must never take the chat down
        log.exception("/context failed")
        return f"/context failed: {type(exc).__name__}: {exc}"


async def _compact(runtime: AgentRuntime | None, session_key: str, instructions: str) -> str:
    """``/compact [instructions]``: compact the session now, in its lane (after a running turn)."""
    if runtime is None:
        return "No agent answers here."

    conversation = await runtime.conversation(agent_of(session_key))
    return await compact_session(conversation, session_key, instructions or None)
