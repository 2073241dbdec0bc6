"""The answers of the session commands: /help, /commands, /status, /whoami, /model.

They are clawbot's own notices, answered by the gateway without asking the model, so
whatever came from outside (a sender's name, a model name someone typed, an error naming
one, a plugin's description) is shown through :func:`~clawbot.agent.notices.quoted`.
Which command runs, and who may use it, is decided in :mod:`clawbot.gateway.command_dispatch`.
"""

from __future__ import annotations

import logging

from clawbot.agent.cooldowns import until_text
from clawbot.agent.models import ModelChoice, ModelError, configured_refs, resolve_ref
from clawbot.agent.notices import quoted, quoted_line
from clawbot.agent.owners import channel_owner_ids, listed_as_owner
from clawbot.agent.runtime import AgentRuntime
from clawbot.agent.session_control import set_session_model
from clawbot.agent.token_budget import TokenCalibrations
from clawbot.gateway.commands import BUILTIN_HELP, plugin_command
from clawbot.gateway.routing import Router
from clawbot.kernel import Kernel
from clawbot.sessions.index import SessionInfo
from clawbot.sessions.store import agent_of
from clawbot.sessions.transcript import load_transcript
from clawbot.types import InboundMessage, Role

log = logging.getLogger(__name__)

NO_AGENT = "No agent answers here."
DEFAULT_WORDS = ("default", "reset")  # /model default: the configured model again


def command_list(kernel: Kernel) -> str:
    """``/commands``: every command clawbot answers itself, built-in ones first."""
    lines = [f"/{name} - {text}" for name, text in BUILTIN_HELP.items()]
    plugins = [c for c in (plugin_command(kernel.chat_commands, n) for n in kernel.chat_commands.names()) if c is not None]
    if plugins:
        lines.append("From plugins:")
        lines += [f"/{quoted_line(c.name)} - {quoted_line(c.description)}" for c in sorted(plugins, key=lambda c: c.name)]
    return "\n".join(lines)


def help_text(kernel: Kernel) -> str:
    """``/help``: what the commands are, and that everything else goes to the agent."""
    return "clawbot answers these commands itself, without the model; anything else you write goes to the agent.\n" + command_list(kernel)


def whoami_text(kernel: Kernel, message: InboundMessage, session_key: str) -> str:
    if message.from_owner:
        owner = "yes (the channel says so)"
    elif listed_as_owner(message, kernel.config.agents.defaults.owner_ids):
        owner = "yes (agents.defaults.owner_ids lists you)"
    elif listed_as_owner(message, channel_owner_ids(kernel.config, message.channel)):
        owner = f"yes (channels.{message.channel}.owner_ids lists you)"
    else:
        owner = "no (add <channel>:<sender id> to agents.defaults.owner_ids to make a sender the owner)"
    sender = message.sender_id or (message.peer_id if message.chat_type == "direct" else None)
    lines = [
        f"Channel: {quoted_line(message.channel)} ({message.chat_type} chat {quoted_line(message.peer_id)})",
        f"Sender id: {quoted_line(sender) if sender else 'unknown'}",
    ]
    if message.sender_name:
        lines.append(f"Name: {quoted_line(message.sender_name)}")
    lines += [f"Owner: {owner}", f"Session: {quoted_line(session_key)}", f"Agent: {quoted_line(_routed(kernel, message, session_key))}"]
    return "\n".join(lines)


def _routed(kernel: Kernel, message: InboundMessage, session_key: str) -> str:
    """The session's agent and what routed this chat to it (``[[bindings]]`` or the default)."""
    route = Router.for_config(kernel.config, agent_of(session_key)).route(message)
    return route.describe() if route.session_key == session_key else agent_of(session_key)


async def _models(runtime: AgentRuntime, session_key: str, info: SessionInfo | None) -> list[ModelChoice]:
    conversation = await runtime.conversation(agent_of(session_key))
    return conversation.models_for(info)


def _context_share(kernel: Kernel, info: SessionInfo, model: ModelChoice) -> str:
    """How full the context window was at the session's last model request."""
    store = kernel.sessions
    try:
        loaded = load_transcript(store.path_of(info, agent_of(info.key)), store.converter)
    except FileNotFoundError:
        loaded = None
    messages = loaded.messages() if loaded is not None else []
    last = next((m.usage for m in reversed(messages) if m.role == Role.ASSISTANT and m.usage is not None), None)
    if last is None:
        # Just compacted: the kept replies lost their usage (it counted requests that no
        # longer exist); what the compaction left is the best figure until the next request.
        compaction = next((e for e in reversed(loaded.entries) if e.type == "compaction"), None) if loaded is not None else None
        after = compaction.data.get("tokens_after") if compaction is not None else None
        if isinstance(after, int) and not isinstance(after, bool):
            return f"about {after:,} tokens of conversation since the compaction, plus the system prompt and tools (the next request reports the whole)"
        return "no model request yet"
    used = last.prompt_tokens + last.output_tokens
    window = model.info().context_window
    return f"{used:,} of {window:,} tokens ({used / window:.0%}) at the last request"


def _estimate_error(kernel: Kernel, model: ModelChoice) -> str:
    """How far clawbot's token estimate was from the usage the provider reported."""
    return TokenCalibrations(kernel.paths.root).get(model.ref).text()


def _resting(kernel: Kernel, models: list[ModelChoice]) -> list[str]:
    now = kernel.auth.now()
    lines = []
    for provider in dict.fromkeys(m.provider.name for m in models):
        for rest in kernel.auth.resting(provider):
            why = rest.reason.replace("_", " ")
            lines.append(f"  {quoted_line(provider)} key {quoted_line(rest.profile.id)}: {why}, until {until_text(rest.until, now)}")
    return lines


async def status_text(kernel: Kernel, runtime: AgentRuntime | None, session_key: str) -> str:
    """``/status``: this session's model, tokens, context use, the token estimate's error,
    cost and resting keys."""
    if runtime is None:
        return NO_AGENT
    info = kernel.sessions.get(session_key)
    lines = [f"Session: {quoted_line(session_key)}" + (f" ({info.turns} turns)" if info else " (no messages yet)")]
    try:
        models = await _models(runtime, session_key, info)
    except ModelError as exc:
        lines.append(f"Model: none usable. {quoted(str(exc))}")
        return "\n".join(lines)
    how = "chosen with /model, no fallback" if info is not None and info.model_override else "configured"
    lines.append(f"Model: {quoted_line(models[0].ref)} ({how})")
    if len(models) > 1:
        lines.append("Fallbacks: " + ", ".join(quoted_line(m.ref) for m in models[1:]))
    if info is not None:
        u = info.usage
        lines.append(f"Tokens: {u.prompt_tokens:,} in ({u.cache_hit_share:.0%} from the cache), {u.output_tokens:,} out")
        if info.heartbeats:  # clawbot's own check-ins, apart from what the chat cost
            h = info.heartbeat_usage
            lines.append(f"Heartbeats: {info.heartbeats:,} runs, {h.prompt_tokens + h.output_tokens:,} tokens of these")
        lines.append(f"Context: {_context_share(kernel, info, models[0])}")
        lines.append(f"Token estimate: {_estimate_error(kernel, models[0])}")
        cost = "no price configured (usage.prices)" if info.cost_usd is None else f"${info.cost_usd:.4f}"
        lines.append(f"Cost: {cost}")
        lines.append(f"Auth profile: {quoted_line(info.auth_profile or 'default')}")
    resting = _resting(kernel, models)
    lines.append("Resting keys: " + ("none" if not resting else "\n" + "\n".join(resting)))
    return "\n".join(lines)


async def offered_models(kernel: Kernel, runtime: AgentRuntime, agent_id: str) -> list[str]:
    """The models the configuration names, and those the agent runs on (maybe detected)."""
    refs = configured_refs(kernel, agent_id)
    try:
        conversation = await runtime.conversation(agent_id)
        refs += [m.ref for m in conversation.models_for(None)]
    except ModelError:
        pass
    return list(dict.fromkeys(refs))


def _listing(kernel: Kernel, offered: list[str], owner: bool) -> str:
    aliases = kernel.config.agents.defaults.model_aliases
    lines = ["Configured models: " + (", ".join(quoted_line(r) for r in offered) or "none in clawbot.toml")]
    if aliases:
        lines.append("Aliases: " + ", ".join(f"{quoted_line(a)} = {quoted_line(r)}" for a, r in sorted(aliases.items())))
    if owner:
        lines.append("/model <alias> or <provider>/<model> uses another one in this session only; /model default goes back.")
    else:
        lines.append("/model <alias> or one of these uses it in this session only; /model default goes back.")
    return "\n".join(lines)


async def model_text(kernel: Kernel, runtime: AgentRuntime | None, session_key: str, args: str, *, owner: bool) -> str:
    """``/model``: show this session's model; ``/model <ref>`` chooses one for it alone.

    The owner may choose any model of an installed provider; anyone else (in a session of
    their own) only one the configuration names, since every request is paid with the
    owner's key."""
    if runtime is None:
        return NO_AGENT
    agent_id = agent_of(session_key)
    offered = await offered_models(kernel, runtime, agent_id)
    info = kernel.sessions.get(session_key)
    if not args:
        try:
            current = quoted_line((await _models(runtime, session_key, info))[0].ref)
        except ModelError as exc:
            current = f"none usable ({quoted_line(str(exc))})"
        how = "chosen with /model" if info is not None and info.model_override else "configured"
        return f"This session uses {current} ({how}).\n" + _listing(kernel, offered, owner)
    if args.lower() in DEFAULT_WORDS:
        await set_session_model(kernel, session_key, None, "/model")
        try:
            back = quoted_line((await _models(runtime, session_key, None))[0].ref)
        except ModelError as exc:
            back = f"none usable ({quoted_line(str(exc))})"
        return f"This session uses the configured model again: {back}."
    try:
        choice = resolve_ref(kernel, args, agent_id, offered)
    except ModelError as exc:
        return quoted(str(exc))
    if not owner and choice.ref not in offered:
        return f"Only the owner can choose {quoted_line(choice.ref)}: it is not among the configured models.\n" + _listing(kernel, offered, owner)
    await set_session_model(kernel, session_key, choice.ref, "/model")
    text = f"This session now uses {quoted_line(choice.ref)} from its next message, without falling back to other models. /model default goes back."
    if choice.ref not in offered:
        text += f"\n{quoted_line(choice.ref)} is not among the configured models: its provider checks the name at the next message."
    return text


async def answer(
    kernel: Kernel,
    runtime: AgentRuntime | None,
    message: InboundMessage,
    session_key: str,
    name: str,
    args: str,
    *,
    owner: bool = False,
) -> str:
    """The reply to session command ``name``; a failure becomes a short reply, never a crash.
    ``owner``: the sender is the owner (who alone may choose an unconfigured model)."""
    try:
        if name == "help":
            return help_text(kernel)
        if name == "commands":
            return command_list(kernel)
        if name == "whoami":
            return whoami_text(kernel, message, session_key)
        if name == "status":
            return await status_text(kernel, runtime, session_key)
        if name == "model":
            return await model_text(kernel, runtime, session_key, args, owner=owner)
    except Exception as exc:  # a report must never take the chat down
        log.exception("/%s failed", name)
        return f"/{name} failed: {type(exc).__name__}"
    raise ValueError(f"not a session command: /{name}")
