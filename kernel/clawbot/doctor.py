"""What ``clawbot doctor`` (the clawbot-setup plugin) asks the kernel: the configuration, the
plugins and what a turn needs, checked on one boot, each problem with its fix
(:func:`clawbot.commandkit.kernel_health`); ``clawbot plugins list`` boots the same way."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import Any

import attrs

from clawbot.agent.memory import memory_agents, status_line
from clawbot.agent.policy import unknown_patterns
from clawbot.boot import Loaded, load
from clawbot.config import ConfigError
from clawbot.config.trust import UntrustedConfigError
from clawbot.credentials import CredentialsError
from clawbot.doctor_findings import Finding, Level
from clawbot.doctor_setup import setup_checks
from clawbot.gateway.commands import shadowed_commands
from clawbot.kernel import PluginConflictError, bootstrap
from clawbot.plugins import PluginManager, create_plugin_manager
from clawbot.types import HealthCheck


@attrs.frozen
class BootOutcome:
    """What booting the kernel once found, beyond ``manager.failures`` (which it fills)."""

    conflicts: list[str] = attrs.field(factory=list)
    error: str | None = None  # the boot itself failed unexpectedly
    policy: list[str] = attrs.field(factory=list)  # tool policy entries that match no installed tool
    checks: list[Finding] = attrs.field(factory=list)  # what plugins report (clawbot_doctor_checks)
    engines: list[Finding] = attrs.field(factory=list)  # the memory provider and compaction strategy in use
    setup: list[Finding] = attrs.field(factory=list)  # model, key, cooldowns, workspace
    shadowed: list[str] = attrs.field(factory=list)  # plugin chat commands named like a built-in one


def boot_kernel(loaded: Loaded, real_env: Mapping[str, str] | None = None, live: bool = False, *, findings: bool = True) -> BootOutcome:
    """Run every registration hook once, as ``clawbot run`` does, then close the kernel.

    Hooks that raise or return the wrong kind of object end up in ``loaded.plugins.failures``;
    names offered by two plugins are returned as conflicts. Nothing is started. ``findings``
    False leaves out the doctor's own findings (the model and its key, the workspace, each
    agent's memory index), which open files and load libraries a plugin listing never shows.
    """

    async def boot() -> BootOutcome:
        try:
            kernel = await bootstrap(loaded)
        except PluginConflictError as exc:
            return BootOutcome(conflicts=list(exc.conflicts))
        except ConfigError as exc:  # an engine the configuration names cannot be chosen
            fix = "name an installed one (`clawbot plugins list`), or leave the key empty"
            return BootOutcome(engines=[Finding("fail", "config", str(problem), fix) for problem in exc.problems])
        try:
            shadowed = shadowed_commands(kernel.chat_commands)
            checks = await plugin_checks(kernel)  # a check hook that raises is a failure to list too
            if not findings:
                return BootOutcome(checks=checks, shadowed=shadowed)
            setup = await setup_checks(kernel, loaded.env if real_env is None else real_env, live)
            memory = await memory_findings(kernel)
            found = [line for finding in engines(kernel) for line in ([finding, *memory] if finding.check == "memory" else [finding])]
            return BootOutcome(policy=unknown_patterns(kernel.tools, kernel.config), checks=checks, engines=found, setup=setup, shadowed=shadowed)
        finally:
            await kernel.aclose()

    try:
        return asyncio.run(boot())
    except Exception as exc:  # a doctor must report, not crash
        return BootOutcome(error=f"{type(exc).__name__}: {exc}")


_ENGINES = {
    "memory_providers": ("memory", "no memory provider is installed: the agent's memory is its workspace files"),
    "compaction_strategies": ("compact", "no compaction strategy is installed: a history too long for the model ends the turn with an error"),
}


def engines(kernel: Any) -> list[Finding]:
    """One line per engine the user chooses one of: which is active, from which plugin."""
    found = []
    for attribute, (area, none) in _ENGINES.items():
        name = kernel.active.get(attribute)
        registry = getattr(kernel, attribute)
        if name is None:
            found.append(Finding("info", area, none))
        else:
            found.append(Finding("ok", area, f"{registry.kind} {name!r} is active (plugin {registry.plugin_of(name)})"))
    return found


async def memory_findings(kernel: Any) -> list[Finding]:
    """One line per agent from the active memory provider's ``status()``: the search mode and
    why it is less than hybrid. A provider that fails to answer is reported, never fatal."""
    provider = kernel.memory_provider
    if provider is None:
        return []
    found = []
    for agent_id in memory_agents(kernel.config):
        try:
            status = await provider.status(agent_id=agent_id)
        except Exception as exc:
            detail = f"agent {agent_id}: memory provider {provider.name!r} could not report its status: {type(exc).__name__}: {exc}"
            found.append(Finding("warn", "memory", detail, f"run `clawbot memory status --agent {agent_id}` after fixing it; tell the author of its plugin"))
            continue
        if status.mode == "hybrid":
            level: Level = "ok"
        elif status.mode == "unavailable" or status.last_error:
            level = "warn"
        else:
            level = "info"
        fix = "" if level == "ok" else f"see `clawbot memory status --agent {agent_id}`"
        found.append(Finding(level, "memory", status_line(status), fix))
    return found


async def plugin_checks(kernel: Any) -> list[Finding]:
    """Every plugin's ``clawbot_doctor_checks`` lines; a wrong kind of answer is a failure line."""
    findings = []
    contributions = await kernel.plugins.collect("clawbot_doctor_checks", lambda name: {"ctx": kernel.plugin_context(name)})
    for contribution in contributions:
        check = contribution.value
        if isinstance(check, HealthCheck):
            findings.append(Finding(check.level, check.area, f"{check.detail} ({contribution.plugin})", check.fix))
        else:
            findings.append(
                Finding(
                    "fail", "plugins", f"{contribution.plugin} returned {check!r:.80} from clawbot_doctor_checks", f"tell the author of {contribution.plugin}"
                )
            )
    return findings


_CONFLICT_PLUGINS = re.compile(r"plugin '([^']+)' and plugin '([^']+)'")


def conflict_fix(conflict: str) -> str:
    names = _CONFLICT_PLUGINS.search(conflict)
    example = f" (e.g. CLAWBOT_DISABLE_PLUGINS={names[2]} or ={names[1]})" if names else ""
    return f"block one with plugins.deny or CLAWBOT_DISABLE_PLUGINS=<name>{example}"


def check_plugins_and_config(config_path: str | None, env: Mapping[str, str], live: bool = False) -> list[Finding]:
    try:
        loaded = load(config_path, env=env)
    except ConfigError as exc:
        # the message of a refused or unsafe file says what to do; editing it would not help
        fix = "" if isinstance(exc, CredentialsError | UntrustedConfigError) else "edit the file, then run `clawbot config validate`"
        area = "secrets" if isinstance(exc, CredentialsError) else "config"
        findings = [Finding("fail", area, f"{exc.source}: {problem}" if fix == "" else str(problem), fix) for problem in exc.problems]
        return findings + _plugin_findings(create_plugin_manager(env=env))
    source = loaded.config.source or "no file: built-in defaults"
    outcome = boot_kernel(loaded, env, live)
    # an engine the file names that no plugin offers is a configuration problem: the config
    # line says so instead of "valid"
    unusable = [f for f in outcome.engines if f.check == "config"]
    config = unusable or [Finding("ok", "config", f"configuration valid ({source})")]
    config += [Finding("warn", "config", notice.removeprefix("note: ")) for notice in loaded.notices]
    findings = [*config, *outcome.setup, *_plugin_findings(loaded.plugins)]
    for problem in outcome.policy:
        findings.append(Finding("warn", "tools", problem, "fix the spelling, or install the plugin that offers it"))
    findings.extend(f for f in outcome.engines if f.check != "config")
    findings.extend(outcome.checks)
    for conflict in outcome.conflicts:
        findings.append(Finding("fail", "plugins", f"conflict: {conflict}", conflict_fix(conflict)))
    findings += [Finding("warn", "plugins", shadowed, "rename the plugin's command") for shadowed in outcome.shadowed]
    if outcome.error:
        findings.append(
            Finding(
                "fail",
                "plugins",
                f"the kernel failed to start: {outcome.error}",
                "run `clawbot plugins list` to find the plugin, then disable it: CLAWBOT_DISABLE_PLUGINS=<name>",
            )
        )
    return findings


def _plugin_findings(manager: PluginManager) -> list[Finding]:
    records = manager.records
    findings = []
    for record in sorted(records.values(), key=lambda r: r.name):
        if record.status == "loaded":
            findings.append(Finding("ok", "plugins", f"{record.name} ({record.distribution or 'local'} {record.version or ''})".rstrip()))
        elif record.status == "blocked":
            findings.append(Finding("info", "plugins", f"{record.name} is blocked: {record.error}"))
        else:
            dist = record.distribution or record.name
            findings.append(
                Finding(
                    "fail",
                    "plugins",
                    f"{record.name} failed to load: {record.error}",
                    f"reinstall or upgrade {dist}, or disable it: CLAWBOT_DISABLE_PLUGINS={record.name}",
                )
            )
        for warning in record.warnings:
            findings.append(Finding("warn", "plugins", f"{record.name}: {warning}", f"tell the author of {record.name}"))
    for failure in manager.failures:
        failed = records.get(failure.plugin)
        dist = (failed.distribution if failed else None) or failure.plugin
        findings.append(
            Finding(
                "fail",
                "plugins",
                f"{failure.plugin} failed in {failure.hook}: {failure.error}",
                f"upgrade {dist} or tell its author; meanwhile disable it: CLAWBOT_DISABLE_PLUGINS={failure.plugin}",
            )
        )
    return findings
