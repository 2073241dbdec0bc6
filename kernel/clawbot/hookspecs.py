"""Every hook clawbot calls, in one documented leaf module.

Plugins implement these with ``@clawbot.hookimpl``; every name starts with ``clawbot_``. A
plugin implementing an unknown (misspelled) hook is refused at load time and recorded as
failed, with the likely name ("did you mean clawbot_tools?"); ``check_pending()`` raises.

Each docstring says when the hook is called and its result rule: collect-all, chained
(``before_tool_call``, ``message_sending``), notification, or the wrapper chain of
``clawbot_bootstrap_files``. The rules, and which hooks may be ``async``, are spelled out
once, in docs/plugins/hooks.md; :class:`clawbot.plugins.manager.PluginManager` enforces them.

This module imports nothing at run time except pluggy: the value types are only named for
type checkers, so loading the specs stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    import click

    from clawbot.types import (
        BootstrapContext,
        BootstrapFile,
        Capability,
        Channel,
        ChatCommand,
        CompactionEvent,
        CompactionNearEvent,
        CompactionStrategy,
        ConfigSection,
        GatewayEvent,
        HealthCheck,
        InboundEvent,
        LLMProvider,
        MemoryProvider,
        OutboundEvent,
        OutboundMessage,
        PluginContext,
        PromptContext,
        PromptSection,
        Service,
        SessionEvent,
        SkillSource,
        StrangerAnswer,
        StrangerEvent,
        Tool,
        ToolCallAdapter,
        ToolCallDecision,
        ToolCallEvent,
        ToolResultEvent,
        Usage,
        WebRoute,
    )
    from clawbot.types.automation import AgentEndEvent

hookspec = pluggy.HookspecMarker("clawbot")

# -- Registration: called once, while the kernel boots (unless the hook says otherwise).


@hookspec
def clawbot_config_schema() -> type | ConfigSection | list[ConfigSection] | None:
    """Declare the configuration this plugin reads.

    Called once, synchronously, while the configuration is validated (before any other hook).

    Return an attrs class to validate the plugin's own ``[plugins.<name>]`` table, or one or
    more :class:`~clawbot.ConfigSection` to claim tables elsewhere, e.g.
    ``ConfigSection("channels.telegram", TelegramConfig)``. Claimable roots are ``plugins``,
    ``channels`` and ``providers``; a plugin may also claim a top-level table of its own that
    no core table has (``ConfigSection("cron", CronConfig)``). Every problem in a claimed table is reported together
    with the core configuration's problems, by key path. A table nobody claims is an error.

    Result rule: collect-all; two plugins claiming the same table is a startup error.
    """


@hookspec
def clawbot_commands(cli: click.Group) -> None:
    """Add subcommands to the ``clawbot`` command line.

    Called synchronously when the CLI needs its full command list (e.g. ``clawbot --help``
    or an unknown built-in name). Keep it cheap: import heavy modules inside the command
    function, not here. ``click.get_current_context().obj`` is a
    :class:`clawbot.commandkit.CliState` whose ``kernel()`` boots the kernel on demand.

    Result rule: notification (add commands with ``cli.add_command``); a name that clashes
    with a built-in or another plugin's command is reported naming both. A group named
    ``plugins`` or ``gateway`` adds its commands to that built-in group instead.
    """


@hookspec
def clawbot_channels(ctx: PluginContext) -> list[Channel] | None:
    """Return the chat channels this plugin provides (terminal, web chat, Telegram ...).

    Called once at kernel start. ``ctx.settings`` is the plugin's validated
    ``[plugins.<name>]`` object; ``ctx.section("channels.<name>")`` gives a claimed table.
    A channel runs only when its ``[channels.<name>]`` table says ``enabled = true`` (or its
    config class defaults to enabled).

    Result rule: collect-all; a channel name offered by two plugins is a startup error.
    """


@hookspec
def clawbot_llm_providers(ctx: PluginContext) -> list[LLMProvider] | None:
    """Return LLM providers; models are addressed as ``<provider>/<model>``.

    Called once at kernel start. The kernel calls a provider's ``complete()`` for every model
    call of an agent turn whose model ref (``agents.defaults.model.primary``, its
    ``fallbacks``, an agent's own ``model``) names it. Providers must not import their SDK
    until first used.

    Result rule: collect-all; a provider name offered by two plugins is a startup error.
    """


@hookspec
def clawbot_tool_call_adapters(ctx: PluginContext) -> list[ToolCallAdapter] | None:
    """Return the adapter that lets models without native tool calling use tools.

    Called once at kernel start. For every call to a model whose provider reports
    ``ModelInfo.native_tools = False`` (for example ``providers.ollama.native_tools = false``)
    the kernel passes the request through the adapter's ``encode`` (tools into the prompt)
    and the reply through its ``decode`` (calls read back from the text), so the turn sees
    ordinary tool calls. Without an adapter such a model cannot serve a turn that offers
    tools: the next model of the chain is tried.

    Result rule: collect-all; only one adapter may be installed (two are a startup error).
    """


@hookspec
def clawbot_memory_providers(ctx: PluginContext) -> list[MemoryProvider] | None:
    """Return long-term memory backends.

    Called once at kernel start. The kernel registers every provider, chooses the active one
    (the one ``memory.provider`` names, else the only one installed) and exposes it as
    ``kernel.memory_provider``. The active provider serves the ``memory_search`` and
    ``memory_get`` tools (offered only while one is active), ``clawbot memory status|index|
    search`` and ``clawbot doctor`` (its ``status()``). ``clawbot run`` calls its
    ``start(agent_ids=...)`` once it is up; ``close()`` of every provider runs when the kernel
    shuts down.

    Result rule: collect-all; duplicate names are a startup error, and so are a
    ``memory.provider`` that no plugin offers and several providers with none named.
    """


@hookspec
def clawbot_compaction_strategies(ctx: PluginContext) -> list[CompactionStrategy] | None:
    """Return compaction strategies: ways to shrink a history too long for the model.

    Called once at kernel start. An agent's strategy is the one its
    ``agents.list[].compaction.strategy`` names, else the one
    ``agents.defaults.compaction.strategy`` names, else the only one installed. The kernel
    calls ``compact()`` (between ``clawbot_before_compaction`` and
    ``clawbot_after_compaction``, in the session's lane) when the next request would leave
    less than ``reserve_tokens_floor`` free in the window (reason ``threshold``), when the
    provider says the context overflowed (``overflow``: the request is then retried once),
    and for ``/compact [instructions]`` (``manual``). A strategy that raises, or returns an
    empty summary or an index outside the history, changes nothing: the kernel stores no
    compaction and the conversation goes on with its whole history. With no strategy
    installed, an overflow ends the turn with the provider's error.

    Result rule: collect-all; duplicate names are a startup error, and so are a strategy
    name that no plugin offers (the default's "summary" excepted: then the only one
    installed is used) and several strategies with none named.
    """


@hookspec
def clawbot_skill_sources(ctx: PluginContext) -> list[SkillSource] | None:
    """Return directories of skills (folders holding ``SKILL.md``) this plugin ships.

    Called once at kernel start; the skills in them join the catalogue the system prompt
    lists (``clawbot skills list`` shows them). Each source carries a precedence; when two sources hold a skill of the same name the
    higher precedence wins (workspace > user > extra dirs > bundled > plugin).

    Result rule: collect-all; duplicate source names are a startup error.
    """


@hookspec
def clawbot_tools(ctx: PluginContext) -> list[Tool] | None:
    """Return the tools this plugin offers to agents.

    Called once at kernel start. A :class:`~clawbot.Tool` is a static description (name,
    JSON schema, group, summary) plus an async handler; everything that differs per run
    (agent, session, workspace, cancellation) reaches the handler in its ``ToolCall``.
    Tool policy (``tools.allow`` / ``tools.deny``) filters the registry per agent; the model
    only ever sees allowed tools.

    Result rule: collect-all; a tool name offered by two plugins is a startup error.
    """


@hookspec
def clawbot_chat_commands(ctx: PluginContext) -> list[ChatCommand] | None:
    """Return slash commands users can type in any channel (``/weather berlin``).

    Called once at kernel start. The gateway answers ``/<name> args`` itself when a
    message starts with a registered name, before (and instead of) the agent; its own
    built-in commands (``/stop``, ``/approve`` ...) cannot be shadowed: a plugin command with
    such a name is ignored with a warning.

    Result rule: collect-all; a command name offered by two plugins is a startup error.
    """


@hookspec
def clawbot_services(ctx: PluginContext) -> list[Service] | None:
    """Return background services to run beside the channels while the gateway runs.

    Called once at kernel start. ``clawbot run`` starts each :class:`~clawbot.types.Service`
    once its channels are up, with the :class:`~clawbot.types.AgentHost` (run a turn of an
    agent, deliver through the gateway, queue a system event), and cancels it when the
    gateway stops; other commands never run services. A service that raises is logged and
    restarted with backoff, like a channel, and never stops the gateway; ``clawbot status``
    shows each one's state and its own :meth:`~clawbot.types.Service.health`.

    Result rule: collect-all; a service name offered by two plugins is a startup error.
    """


@hookspec
def clawbot_capabilities(ctx: PluginContext) -> list[Capability] | None:
    """Return capabilities tools may ask for by type (``call.services.capability(Kind)``).

    Called once at kernel start. Each :class:`~clawbot.types.Capability` pairs a ``kind``
    (the type tools ask for) with ``provide``, which builds it for one tool call from a
    :class:`~clawbot.types.CapabilityScope` (agent, session, the message that started the
    turn, its trust, the :class:`~clawbot.types.AgentHost`); ``provide`` refuses with
    :class:`~clawbot.types.ServiceUnavailable`. A kind nobody provides raises
    ``ServiceUnavailable`` too, so the tool can tell the model.

    Result rule: collect-all; a kind provided by two plugins is a startup error.
    """


@hookspec
def clawbot_doctor_checks(ctx: PluginContext) -> list[HealthCheck] | None:
    """Return what ``clawbot doctor`` should report about this plugin's environment.

    Called by ``clawbot doctor`` only, after the kernel booted once (never by ``clawbot
    run``), so a check may take a moment: probe a binary, a kernel feature, a server. Each
    :class:`~clawbot.types.HealthCheck` is one line: ``ok``/``info`` say what works,
    ``warn``/``fail`` say what does not and carry a ``fix``. A check that raises is
    reported as a failure of the plugin, never crashes the doctor.

    Result rule: collect-all; every line is shown, attributed to its plugin.
    """


@hookspec
def clawbot_web_routes(ctx: PluginContext) -> list[WebRoute] | None:
    """Return pages and WebSocket endpoints to serve on the gateway's control API.

    Called once by ``clawbot run`` when the control API starts (never at boot or by other
    commands): the serving channel (the ``clawbot-control`` plugin's ``api``) asks the kernel
    for them through :meth:`clawbot.types.GatewayControl.web_routes`. Pages are served as they are; a socket's handler runs only for clients that
    proved they hold the token (:mod:`clawbot.types.web`), which plugins never see. Paths
    under ``/v1/`` belong to the API itself and are refused.

    Result rule: collect-all; a path offered by two plugins is a startup error naming both.
    """


# -- Per turn: called while the system prompt of one run is assembled.


@hookspec
def clawbot_prompt_sections(ctx: PromptContext) -> list[PromptSection] | None:
    """Return system prompt sections for this run.

    Called each time the kernel builds a system prompt: at every agent turn (``clawbot run``
    and ``clawbot agent``) and for ``clawbot context``. Each section declares the prompt modes it appears in
    (``full``, ``minimal``, ``none``), its sort ``order`` and whether it is *stable* (before
    the provider's cache boundary) or *volatile* (after it). The kernel filters by
    ``ctx.mode``, sorts by ``(stable first, order, key)`` and joins; it never edits text.

    Result rule: collect-all; when two plugins offer the same key, the first (in pluggy's
    calling order) is kept and the other is dropped and recorded as a failure naming both.
    """


@hookspec(firstresult=True)
def clawbot_bootstrap_files(ctx: BootstrapContext) -> list[BootstrapFile] | None:
    """Return the workspace files injected into the system prompt (AGENTS.md, SOUL.md ...).

    Called each time a system prompt is built, synchronously, through
    ``PluginManager.bootstrap_files(ctx)``, in a worker thread (never on the event loop); the
    kernel then applies the size caps. The default
    implementation (the workspace plugin) loads the standard files from the agent's
    workspace. Other plugins override it with a wrapper that edits the list::

        @hookimpl(wrapper=True)
        def clawbot_bootstrap_files(ctx):
            files = yield
            return [f for f in files if f.name != "HEARTBEAT.md"]

    Result rule: first result wins among plain implementations (so wrappers receive one
    list, not a list of lists); the outermost wrapper's return value is what the prompt
    uses. A wrapper that raises is dropped and recorded; the call is repeated without it.
    """


# -- Lifecycle: tool calls, messages, sessions, compaction, the gateway.


@hookspec
def clawbot_before_tool_call(event: ToolCallEvent) -> ToolCallDecision | None:
    """Inspect a tool call before it runs: allow it, block it, or rewrite its arguments.

    Called for every tool call the model makes, after policy and argument validation.
    Return ``None`` to allow unchanged, ``ToolCallDecision.block(reason)`` to refuse (the
    model receives the reason as an error result) or ``ToolCallDecision.rewrite(args)``.

    Result rule: chained; later implementations see rewritten arguments in
    ``event.arguments``; the first block wins and stops the chain. An implementation that
    raises blocks the call (fail closed) and is recorded. The final rewrite is checked
    against the tool's schema again; invalid arguments never reach the tool.
    """


@hookspec
def clawbot_after_tool_call(event: ToolResultEvent) -> None:
    """Observe a finished tool call and its result (audit logs, metrics).

    Called after every tool call whose handler ran (successfully, with an error result or
    after its timeout), with the arguments it ran with. Not called for a call refused before
    it ran (unknown tool, invalid arguments, blocked by ``clawbot_before_tool_call``).

    Result rule: notification; every implementation runs, errors are logged.
    """


@hookspec
def clawbot_message_received(event: InboundEvent) -> None:
    """Observe a user's message before the agent answers it.

    Called by the gateway (``clawbot run``) for each message it hands to the agent; not for
    slash commands the gateway answers itself, not for clawbot's own system events, and not
    by the one-shot ``clawbot agent`` command.

    Result rule: notification; every implementation runs, errors are logged.
    """


@hookspec(firstresult=True)
def clawbot_direct_stranger(ctx: PluginContext, event: StrangerEvent) -> StrangerAnswer | None:
    """Answer for a stranger in a direct chat: let them in, or refuse, with a reply or none.

    Called by the gateway (``clawbot run``), synchronously, for a direct message the
    channel's access rules do not let in by themselves: not the owner, not in ``allow_from``,
    ``dm_policy`` ``pairing`` (the default) or ``allowlist``. ``event.ask`` false (always on
    ``allowlist``, and when a channel only checks a message before costly work): only look,
    change nothing, no reply. The pairing plugin answers here (approved senders are let in,
    a new stranger gets a code).

    Result rule: first result wins; ``None`` passes to the next plugin. Nobody answering
    means refused, silently (fail closed, as ``allowlist``). An implementation that raises or
    returns anything but a :class:`~clawbot.types.StrangerAnswer` refuses the message; it is
    recorded and the channel keeps running.
    """


@hookspec
def clawbot_message_sending(event: OutboundEvent) -> OutboundMessage | bool | None:
    """Rewrite or cancel a reply before a channel sends it.

    Called by the gateway (``clawbot run``) for everything it sends to a channel: replies,
    notices, and messages of the ``message`` tool. The one-shot ``clawbot agent`` command
    prints its reply without it. Return ``None`` to keep ``event.message``, a new :class:`~clawbot.OutboundMessage` to
    replace it, or ``False`` to cancel sending. While any plugin implements it, replies do not
    stream to channels (they could not be cancelled or rewritten once shown): channels get
    the final reply only.

    Result rule: chained; each implementation sees the previous rewrite; ``False`` wins.
    """


@hookspec
def clawbot_session_start(event: SessionEvent) -> None:
    """A session was created.

    Called when a turn opens a session key that has none yet (reason ``"first message"``); by
    ``/new``, ``/reset`` or ``clawbot sessions reset`` right after ending the old one, and by
    ``/model`` before a first message (reason: the command); by a turn whose session the
    ``session.reset`` policy ended (reason e.g. ``"daily reset at 04:00"``, ``"idle for 60
    minutes"``).

    Result rule: notification; every implementation runs, errors are logged.
    """


@hookspec
def clawbot_session_end(event: SessionEvent) -> None:
    """A session was closed because its key starts afresh.

    Called by ``/new`` or ``/reset`` in a chat (its running turn stopped first) or ``clawbot
    sessions reset`` (reason: the command), or when a message arrives for a session the
    ``session.reset`` policy finds stale (reason: the policy's), once for the old session,
    whose transcript is kept, before ``clawbot_session_start`` of the new one.
    Also called when a plugin says a session of its own is over
    (:meth:`~clawbot.AgentHost.end_session`, e.g. a sub-agent's run ended: reason
    ``"sub-agent done"``).

    Result rule: notification; every implementation runs, errors are logged.
    """


@hookspec
def clawbot_session_stop(event: SessionEvent) -> str | None:
    """A person stopped the work of a session.

    Called by ``/stop``, ``/new`` and ``/reset`` in a chat or a one-shot ``clawbot agent -m``
    (reason: the command, ``"/stop"``), before the session's turns are stopped.

    End the background work the session started and whose result nobody wants now (a
    plugin's sub-agents of that chat), and return one short sentence saying what stopped
    (``"2 sub-agent(s) stopped too."``), which ``/stop`` adds to its reply; ``None``: nothing
    of yours ran. ``event.session_id`` is ``""`` when the session has none yet.

    Result rule: collect; every implementation runs, errors are logged.
    """


@hookspec
def clawbot_before_compaction(event: CompactionEvent) -> None:
    """A session's history is about to be compacted.

    Called before the session's compaction strategy runs: the next request would not leave
    the reserve free, the provider said the context overflowed, or the user typed
    ``/compact`` (see ``clawbot_compaction_strategies``). ``event.tokens_before`` is the
    kernel's estimate of the history's size.

    Result rule: notification; every implementation runs, errors are logged.
    """


@hookspec
def clawbot_compaction_near(event: CompactionNearEvent) -> Usage | None:
    """A turn's history is nearing compaction: act on it before a summary replaces it.

    Called by the agent loop, in the session's lane and awaited before the turn's next model
    request, the first time in a turn that request passes the line
    ``agents.defaults.compaction.memory_flush.soft_threshold_tokens`` below the compaction
    line (never earlier than three quarters of the room between the system prompt and that
    line), and only where a compaction strategy is installed and the request still fits the
    window. Once a turn; what is once a compaction cycle is the plugin's rule
    (``event.recorded_this_cycle`` and ``event.record``). clawbot's memory plugin stores
    durable notes here (the pre-compaction memory flush).

    Run a silent exchange beside the turn with ``event.ask`` and ``event.run_tools`` on a
    copy of ``event.messages``; nothing of it joins the history or reaches the chat. Return
    its usage (counted in the turn's), or ``None`` when nothing ran.

    Result rule: collect; every implementation runs in turn, errors are logged and the turn
    goes on.
    """


@hookspec
def clawbot_after_compaction(event: CompactionEvent) -> None:
    """A session's history was compacted; ``event.summary`` holds the result.

    Called after the strategy returned and its compaction entry was written to the
    transcript, before the next model request; not called when the strategy failed or
    returned nothing usable (nothing was stored then).

    Result rule: notification; every implementation runs, errors are logged.
    """


@hookspec
def clawbot_agent_end(event: AgentEndEvent) -> None:
    """Called after every agent turn, whatever started it: a chat message, a heartbeat, a
    cron job or a sub-agent (``event.kind``), with how it ended and the tokens it used.

    Result rule: notification; every implementation runs, errors are logged.
    """


@hookspec
def clawbot_gateway_start(event: GatewayEvent) -> None:
    """The gateway has started its channels and accepts messages.

    Called once by ``clawbot run``, right after it launched every enabled channel.

    Result rule: notification; every implementation runs, errors are logged.
    """


@hookspec
def clawbot_gateway_stop(event: GatewayEvent) -> None:
    """The gateway is shutting down; channels are still open.

    Called once when ``clawbot run`` stops (every channel finished, Ctrl-C, a signal),
    before the channels are stopped.

    Result rule: notification; every implementation runs, errors are logged.
    """


def hook_names() -> list[str]:
    """Names of every hook spec in this module, in definition order."""
    return [name for name, value in globals().items() if name.startswith("clawbot_") and callable(value)]
