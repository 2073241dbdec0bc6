"""Slash commands typed in a chat, answered before (and instead of) the agent.

The gateway's own commands (:data:`BUILTIN_HELP`) act on its running turns, the approval
broker and the session (its prompt, model, history); every other name is looked up among the plugins' chat commands
(``clawbot_chat_commands``). A slash word nobody knows (``/etc/hosts is broken``) is an
ordinary message for the agent. A plugin command named like a built-in one is ignored: the
built-ins are how a user regains control, so no plugin may shadow them; ``clawbot doctor``
and ``clawbot plugins list`` name it, so its author sees it.

Who may use them is decided once, for every command: the owner anywhere; anyone else only
in a direct chat whose session is theirs alone (their own, the default; not the main session
``session.non_owners_share_main`` lets them into).
The main session is the owner's, and a group's session is shared, so a member's ``/stop``
there would cancel the owner's turn. ``/approve`` and ``/deny`` are the owner's alone, in every
chat: anyone else gets the same short refusal whatever id they name, so it tells nothing
about what waits. The owner is whoever the channel vouches for (``from_owner``) or
``agents.defaults.owner_ids`` / the channel's own ``owner_ids`` name (:mod:`clawbot.agent.owners`). ``/help``, ``/commands``
and ``/whoami`` change nothing and tell nothing about the session's conversation, so anyone
may use them anywhere (``/whoami`` is how a person learns the id that makes them the owner).
The settings (``/model``, ``/think``, ``/verbose``, ``/reasoning``, ``/usage``) follow the
general rule: in a group only the owner changes them.
"""

from __future__ import annotations

import inspect
import logging
import re

import attrs

from clawbot.agent.approvals import DECISION_WORDS, SHOW
from clawbot.gateway.directives import Directive
from clawbot.registry import Registry
from clawbot.sessions.keys import session_kind
from clawbot.types import ApprovalDecision, ChatCommand, ChatCommandContext, InboundMessage

log = logging.getLogger(__name__)

#: the gateway's own commands, in the order /help lists them
BUILTIN_HELP = {
    "help": "what clawbot answers itself (this list)",
    "commands": "the same list",
    "status": "this session's model, tokens, context use, cost and resting keys",
    "new": "start a fresh session (the old one is kept on disk, the /model choice stays); /new <text> starts it with <text>",
    "reset": "the same as /new",
    "model": "show this session's model; /model <alias> or <provider>/<model> switches this session, /model default goes back",
    "models": "the models this session may switch to, with their aliases; the current one is marked",
    "think": "show this session's thinking level; /think off|minimal|low|medium|high|xhigh sets it, /think default goes back",
    "verbose": "/verbose on|off: a line in the chat for each tool call the agent makes, with how it ended",
    "reasoning": "/reasoning on|off|stream: show the model's thinking before its reply (stream: as each step arrives)",
    "usage": "/usage off|tokens|full: a footer under each reply with its tokens (full: cost and model too)",
    "whoami": "your channel, sender id, whether you are the owner, and this chat's session",
    "context": "what this session's system prompt is made of, and its size",
    "compact": "summarise the older part of this conversation now to free the context window; /compact <instructions> says what the summary must keep",
    "stop": "stop the running turn",
    "approve": "/approve <id> [allow-once|allow-always]: allow what an approval request asks; /approve <id> show: see all of it first (owner only)",
    "deny": "/deny <id>: refuse what an approval request asks (owner only)",
}
BUILTIN_COMMANDS = tuple(BUILTIN_HELP)
OWNER_ONLY_COMMANDS = ("approve", "deny")
OPEN_COMMANDS = ("help", "commands", "whoami")
_NAME = re.compile(r"[a-z][a-z0-9_-]*")


@attrs.frozen
class ParsedCommand:
    name: str
    args: str
    #: a message of several directives alone (``/think high /usage tokens``): all of them
    directives: tuple[Directive, ...] = ()


def parse_command(text: str) -> ParsedCommand | None:
    """``/name args`` (also Telegram's ``/name@botname``), or ``None`` for plain text."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    parts = stripped[1:].split(maxsplit=1)
    head, rest = (parts[0], parts[1] if len(parts) > 1 else "") if parts else ("", "")
    name = head.split("@", 1)[0].lower()
    if not _NAME.fullmatch(name):
        return None
    return ParsedCommand(name, rest.strip())


def parse_approval(args: str, *, deny: bool) -> tuple[str, ApprovalDecision | None] | str:
    """``<id> [allow-once|allow-always|deny|show]`` -> (id, decision; ``None``: show it in
    full), or the usage text."""
    words = args.split()
    usage = "Usage: /deny <id>" if deny else f"Usage: /approve <id> [allow-once|allow-always|deny|{SHOW}]"
    if not words or len(words) > 2:
        return usage
    if deny:
        return (words[0], ApprovalDecision.DENY) if len(words) == 1 else usage
    if len(words) == 2 and words[1].lower() == SHOW:
        return words[0], None
    decision = DECISION_WORDS.get(words[1].lower() if len(words) == 2 else "")
    return usage if decision is None else (words[0], decision)


def controls_own_session(message: InboundMessage, session_key: str) -> bool:
    """A sender who is not the owner controls only a direct chat with a session of its own."""
    return message.chat_type == "direct" and session_kind(session_key) == "direct"


def refusal(name: str) -> str:
    return f"Only the owner can use /{name} in this chat."


def plugin_command(commands: Registry[ChatCommand], name: str) -> ChatCommand | None:
    if name in BUILTIN_COMMANDS:
        return None
    found = commands.get(name)
    return found if isinstance(found, ChatCommand) else None


def shadowed_commands(commands: Registry[ChatCommand]) -> list[str]:
    """One line per plugin command that takes a built-in name, naming the plugin."""
    return [
        f"plugin {commands.plugin_of(name)!r} offers /{name}, a built-in command: clawbot answers /{name} itself and ignores the plugin's"
        for name in BUILTIN_COMMANDS
        if name in commands
    ]


async def run_plugin_command(command: ChatCommand, ctx: ChatCommandContext) -> str | None:
    """Run a plugin's command; its failure becomes a short reply, never a crash."""
    if ctx.args and not command.accepts_args:
        return f"/{command.name} takes no arguments."
    try:
        outcome = command.handler(ctx)
        if inspect.isawaitable(outcome):
            outcome = await outcome
    except Exception as exc:
        log.exception("chat command /%s failed", command.name)
        return f"/{command.name} failed: {type(exc).__name__}: {exc}"
    return outcome if isinstance(outcome, str) else None
