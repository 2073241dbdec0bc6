"""Helpers for plugins that add CLI commands (``clawbot_commands``).

A plugin command shares the root group's options and its lazily loaded configuration and
kernel through :class:`CliState` (``click.get_current_context().find_object(CliState)``).

A command prints with :func:`echo`, :func:`echo_json` and :func:`console` (rich), never with
``click.echo`` or ``print``: they show control characters as ``\\uXXXX``, so a file name or a
note from the workspace cannot send escape sequences to the user's terminal.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from clawbot.cli.lazy import LazyCommand
from clawbot.cli.output import console, echo, echo_json
from clawbot.cli.state import EXIT_CONFIG, CliState, config_option, run_async, user_errors
from clawbot.control.errors import ApiAnswerLost as GatewayAnswerLost
from clawbot.control.errors import ApiUnavailable
from clawbot.paths import StatePaths

if TYPE_CHECKING:  # annotations only: plugins import commandkit while `clawbot --help` lists commands
    from clawbot.types import AgentHost, HealthCheck, LLMProvider, Settings


def load_config(state: CliState | None) -> Any:
    """The validated configuration (the defaults when there is no file); exit 2 if broken.

    ``state`` is ``None`` when the command runs outside the clawbot group (embedded, tests).
    """
    with user_errors():
        if state is None:
            # deferred: plugins import commandkit when `clawbot --help` lists their commands, and the config loads cattrs
            from clawbot.boot import load

            return load(None).config
        return state.load().config


def load_settings(state: CliState | None) -> Settings:
    """What a plugin may read of the configuration (:class:`~clawbot.types.Settings`), as
    hooks see it as ``ctx.clawbot``; exit 2 if the configuration is broken."""
    from clawbot.boot import load
    from clawbot.plugin_settings import plugin_settings

    with user_errors():
        loaded = load(None) if state is None else state.load()
        return plugin_settings(loaded.config, loaded.env)


def config_file_in_use(state: CliState | None) -> Path | None:
    """The configuration file clawbot reads (``None``: the built-in defaults); exit 2 if a named one is missing."""
    # deferred: plugins import commandkit when `clawbot --help` lists their commands, and the config loads cattrs
    from clawbot.config.edit import file_in_use

    with user_errors():
        return file_in_use(state.config_path if state else None, state.env if state else os.environ, Path.cwd())[0]


def set_config_string(state: CliState | None, table: str, key: str, value: str, *, entry: str | None = None) -> list[str]:
    """Set ``[table] key = "value"`` in the file clawbot writes (``<state>/clawbot.toml``);
    with ``entry``, ``table`` names an array of tables and the key is set in its entry whose
    ``id`` is ``entry`` (one agent of ``[[agents.list]]``).

    Returns what to tell the user: what was written, or, when another file is named instead
    (``--config``, ``$CLAWBOT_CONFIG``; never rewritten) or the file cannot be edited safely,
    exactly which line to put where.
    """
    # deferred: plugins import commandkit when `clawbot --help` lists their commands, and the config loads cattrs
    from clawbot.config.edit import file_in_use, precedence, set_entry_string, set_string, write_private

    env = state.env if state else os.environ
    target = StatePaths.resolve(env).config_file
    with user_errors():
        in_use, named = file_in_use(state.config_path if state else None, env, Path.cwd())
    line = f"{key} = {json.dumps(value, ensure_ascii=False)}"
    place = f"the [[{table}]] entry with id = {json.dumps(entry)}" if entry is not None else f"[{table}]"
    if in_use is not None and in_use.resolve() != target.resolve():
        return [
            f"{precedence(in_use, target, named)}; it was not changed. To make this the setting in use,",
            f"put this line under {place} in {in_use}:",
            "",
            f"    {line}",
            "",
        ]
    text = target.read_text(encoding="utf-8") if target.is_file() else ""
    parts = tuple(table.split("."))
    new = set_string(text, parts, key, value) if entry is None else set_entry_string(text, parts, entry, key, value)
    if new is None:
        return [f"{target} could not be edited safely and was not changed; put this line under {place} in it:", "", f"    {line}", ""]
    if new != text:
        try:
            write_private(target, new)
        except OSError as exc:
            return [f"{target} could not be written ({exc.strerror or exc}); put this line under {place} in it:", "", f"    {line}", ""]
    if entry is not None:
        return [f"Set {line} in {place} of {target}"]
    return [f"Set {table}.{line} in {target}"]


def direct_chat_session(state: CliState | None, channel: str, sender_id: str, account_id: str = "default") -> str | None:
    """The session key the gateway gives ``sender_id``'s direct messages on ``channel``, as the
    configuration says now (bindings, ``session.dm_scope``, ``session.non_owners_share_main``,
    the owner ids); ``None`` when the configuration has a problem (``clawbot config validate``)."""
    # deferred, as in the helpers above: plugins import this module while `clawbot --help` lists commands
    from clawbot.boot import load
    from clawbot.config import ConfigError
    from clawbot.gateway.routing import Router
    from clawbot.types import InboundMessage

    try:
        config = state.load().config if state is not None else load(None).config
    except ConfigError:
        return None
    message = InboundMessage(channel=channel, peer_id=sender_id, sender_id=sender_id, account_id=account_id, text="")
    return Router.for_config(config, config.default_agent_id()).route(message).session_key


def is_main_session(session_key: str) -> bool:
    """Whether ``session_key`` is an agent's main session (the owner's history and MEMORY.md)."""
    from clawbot.sessions.keys import session_kind

    return session_kind(session_key) == "main"


def call_gateway(state: CliState, method: str, path: str, *, timeout: float = 30.0) -> tuple[int, Any] | None:
    """(status, decoded JSON) of one request to the control API of the gateway running on
    this state folder; ``None`` when none runs (or it went away before taking the request).
    Raises :class:`GatewayAnswerLost` when the gateway took the request but its answer never
    came back (it died meanwhile): what was asked may have been done, or cut off half-way."""
    from clawbot.control.client import find_gateway  # reads the endpoint file only when a command asks

    client = find_gateway(state.paths().root)
    if client is None:
        return None
    client.timeout = timeout
    try:
        return client.call(method, path)
    except GatewayAnswerLost:
        raise
    except ApiUnavailable:
        return None


@contextlib.asynccontextmanager
async def agent_host(state: CliState) -> AsyncIterator[AgentHost]:
    """clawbot's agents without a gateway, for a command that runs turns itself (a turn's
    reply cannot reach a chat from here: ``gateway_running`` is false); closed on exit."""
    from clawbot.agent.runtime import AgentRuntime  # the agents' machinery: only for the command that runs a turn

    with user_errors():
        kernel = await state.kernel()
    runtime = AgentRuntime(kernel)
    try:
        yield runtime.services.host
    finally:
        await runtime.aclose()
        await kernel.aclose()


def apply_log_level(state: CliState) -> None:
    """Log as the configuration's ``logging.level`` says, as ``clawbot run`` does; exit 2 if broken."""
    from clawbot.cli.logs import configure_logging

    with user_errors():
        loaded = state.load()
    configure_logging(loaded.config.logging.level, state.env)


@attrs.frozen
class ConfigFileInUse:
    """The configuration file clawbot reads (``None``: the built-in defaults) and what named it
    (``--config``, ``$CLAWBOT_CONFIG`` or ``None``), for a command that writes ``<state>/clawbot.toml``."""

    path: Path | None
    named_by: str | None

    def overrides(self, target: Path) -> str | None:
        """Why ``target`` is not read (one sentence naming both files), or ``None`` when it is the file in use."""
        from clawbot.config.edit import precedence

        if self.path is None or self.path.resolve() == target.resolve():
            return None
        return precedence(self.path, target, self.named_by)


def config_in_use(state: CliState) -> ConfigFileInUse:
    """The configuration file clawbot reads and what named it; exit 2 if a named one is missing."""
    from clawbot.config.edit import file_in_use

    with user_errors():
        return ConfigFileInUse(*file_in_use(state.config_path, state.env, Path.cwd()))


def set_toml_string(text: str, table: tuple[str, ...], key: str, value: str) -> str | None:
    """``text`` (a TOML file) with ``[table] key = "value"`` set, comments and layout kept;
    ``None`` when it cannot be edited safely (then nothing should be written)."""
    from clawbot.config.edit import set_string

    return set_string(text, table, key, value)


def write_private_text(path: Path, text: str) -> None:
    """Replace ``path`` atomically with ``text``, mode 0600 (a symbolic link's target is replaced); ``OSError`` if it cannot be."""
    from clawbot.config.edit import write_private

    write_private(path, text)


def unknown_provider(provider: str, installed: Collection[str]) -> str:
    """``no installed provider is named 'opnai' (did you mean openai?)``."""
    from clawbot.config.refs import unknown_provider as message

    return message(provider, installed)


@attrs.frozen
class ModelProviders:
    """The model providers one kernel boot registered, and what the configuration file sets for them."""

    providers: Mapping[str, LLMProvider]
    config: Any = attrs.field(repr=False)

    @property
    def config_source(self) -> str:
        """The configuration file read (``clawbot.toml`` when none was)."""
        return str(self.config.source or "clawbot.toml")

    def set_in_file(self, provider: str, field: str) -> bool:
        """Whether ``[providers.<provider>]`` of the configuration file sets ``field`` (``api_key``, ``base_url``)."""
        return bool(getattr(self.config.section(f"providers.{provider}"), field, ""))


@contextlib.asynccontextmanager
async def model_providers(state: CliState, env: Mapping[str, str] | None = None) -> AsyncIterator[ModelProviders]:
    """The installed model providers, configured as a boot with ``env`` would configure them
    (default: the user's, stored credentials included; given: exactly ``env``, no stored
    credentials merged in); the kernel is closed on exit. Exit 2 if the configuration is broken."""
    from clawbot.boot import load
    from clawbot.kernel import bootstrap  # the plugin manager and registries: only for the command that asks

    with user_errors():
        loaded = state.load() if env is None else load(state.config_path, env=env, stored_credentials=False)
        kernel = await bootstrap(loaded)
    try:
        yield ModelProviders({name: kernel.llm_providers[name] for name in kernel.llm_providers.names()}, kernel.config)
    finally:
        await kernel.aclose()


def kernel_health(state: CliState, *, live: bool = False) -> list[HealthCheck]:
    """What ``clawbot doctor`` reports of the kernel, booted once as ``clawbot run`` would:
    the configuration, every plugin (loaded, blocked, failed, conflicting) and what each said
    (``clawbot_doctor_checks``), the tool policy, the memory and compaction engines, each
    agent's model, key, cooldowns and workspace, who can write into the main session; ``live``
    also sends one real request to the default model. Never raises: a failure is a line."""
    from clawbot.doctor import check_plugins_and_config  # boots the kernel: only for the command that asks
    from clawbot.types import HealthCheck  # the value types: never for `clawbot --help`, which imports this module

    return [HealthCheck(f.level, f.check, f.detail, f.fix) for f in check_plugins_and_config(state.config_path, state.env, live)]


__all__ = [
    "EXIT_CONFIG",
    "CliState",
    "ConfigFileInUse",
    "ModelProviders",
    "apply_log_level",
    "config_in_use",
    "kernel_health",
    "model_providers",
    "set_toml_string",
    "unknown_provider",
    "write_private_text",
    "GatewayAnswerLost",
    "LazyCommand",
    "agent_host",
    "call_gateway",
    "config_file_in_use",
    "config_option",
    "console",
    "direct_chat_session",
    "echo",
    "echo_json",
    "is_main_session",
    "load_config",
    "run_async",
    "load_settings",
    "set_config_string",
    "user_errors",
]
