"""The answers of the setting commands: /think, /verbose, /reasoning, /usage, /models, and of
a message that holds only directives (``/think high /usage tokens``).

Each setting is the session's (stored with it, kept across restarts and ``/new``); without an
argument a command shows the current value, ``default`` goes back to the default. Who may
change them is decided in :mod:`clawbot.gateway.command_dispatch`, as for ``/model``.
"""

from __future__ import annotations

from clawbot.agent.models import ModelError
from clawbot.agent.notices import quoted_line
from clawbot.agent.runtime import AgentRuntime
from clawbot.agent.session_control import set_session_setting
from clawbot.gateway.directives import Directive
from clawbot.gateway.session_commands import NO_AGENT, model_text, offered_models
from clawbot.kernel import Kernel
from clawbot.sessions.settings import CHAT_SETTINGS, setting_of, setting_word
from clawbot.sessions.store import agent_of

SETTING_COMMANDS = tuple(CHAT_SETTINGS)
DEFAULT_WORDS = ("default", "reset")

#: setting -> what it is, for its replies
WHAT = {
    "think": "Thinking",
    "verbose": "Verbose (a line per tool call)",
    "reasoning": "Reasoning shown",
    "usage": "Usage footer",
}


def _default(kernel: Kernel, name: str) -> str:
    return kernel.config.agents.defaults.thinking if name == "think" else CHAT_SETTINGS[name][0]


def _usage(name: str) -> str:
    return f"Usage: /{name} {'|'.join(CHAT_SETTINGS[name])} (or /{name} default)"


async def setting_text(kernel: Kernel, session_key: str, name: str, args: str) -> str:
    """``/<name>`` shows the session's value, ``/<name> <word>`` sets it."""
    info = kernel.sessions.get(session_key)
    stored = info.settings if info is not None else {}
    default = _default(kernel, name)
    if not args:
        value = setting_of(stored, name, default)
        how = f"set for this session; default {default}" if name in stored else "the default"
        return f"{WHAT[name]}: {value} ({how}).\n{_usage(name)}"
    if args.lower() in DEFAULT_WORDS:
        await set_session_setting(kernel, session_key, name, None, f"/{name}")
        return f"{WHAT[name]}: {default} (the default) from the next message."
    word = setting_word(name, args)
    if word is None:
        return f"{quoted_line(args)} is not a value of /{name}. {_usage(name)}"
    await set_session_setting(kernel, session_key, name, word, f"/{name}")
    return f"{WHAT[name]}: {word} in this session from its next message."


async def models_text(kernel: Kernel, runtime: AgentRuntime | None, session_key: str, *, owner: bool) -> str:
    """``/models``: the models this session may switch to, their aliases, the current one marked."""
    if runtime is None:
        return NO_AGENT
    agent_id = agent_of(session_key)
    offered = await offered_models(kernel, runtime, agent_id)
    info = kernel.sessions.get(session_key)
    try:
        conversation = await runtime.conversation(agent_id)
        current = conversation.models_for(info)[0].ref
    except ModelError:
        current = None
    aliases: dict[str, list[str]] = {}
    for alias, ref in sorted(kernel.config.agents.defaults.model_aliases.items()):
        aliases.setdefault(ref, []).append(alias)
    refs = offered + ([current] if current and current not in offered else [])
    lines = ["Models (/model <name or alias> switches this session):"]
    for ref in refs:
        mark = "*" if ref == current else "-"
        extra = [f"alias {', '.join(quoted_line(a) for a in aliases.get(ref, []))}"] if aliases.get(ref) else []
        extra += ["current"] if ref == current else []
        lines.append(f"{mark} {quoted_line(ref)}" + (f" ({'; '.join(extra)})" if extra else ""))
    if current is None:
        lines.append("No model is usable now: see clawbot doctor.")
    if owner:
        lines.append("You may also choose any model of an installed provider as <provider>/<model>.")
    return "\n".join(lines)


async def directives_text(kernel: Kernel, runtime: AgentRuntime | None, session_key: str, directives: tuple[Directive, ...], *, owner: bool) -> str:
    """A message of directives alone: each is kept for the session, as its command would;
    the reply is one short line per directive."""
    lines = []
    for directive in directives:
        if directive.name == "model":
            text = await model_text(kernel, runtime, session_key, directive.value, owner=owner)
        else:
            text = await setting_text(kernel, session_key, directive.name, directive.value)
        lines.append(text.splitlines()[0])
    return "\n".join(lines)
