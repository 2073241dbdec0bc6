"""``clawbot doctor``: what a turn needs, checked on the booted kernel.

Each agent's model (configured or detected; its provider installed), where each provider's
key comes from (never the key itself), keys resting after a failure, each workspace, who
besides the owner can write into the main session, and with ``--live`` one real request to the default model.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clawbot.agent.cooldowns import until_text
from clawbot.agent.models import ModelError, choose_chain
from clawbot.auth_profiles import DEFAULT_PROFILE
from clawbot.credentials import ENV_NAMES, credential_file, load_credential
from clawbot.doctor_findings import Finding
from clawbot.doctor_main_session import check_main_session, check_strangers_answered
from clawbot.doctor_unserved import check_unserved
from clawbot.paths import expand_user_path
from clawbot.probe import probe


def key_sources(kernel: Any, provider: str, real_env: Mapping[str, str]) -> list[str]:
    """Where ``provider``'s keys come from, in the order they win; never the keys."""
    sources = []
    section = kernel.config.section(f"providers.{provider}")
    if getattr(section, "api_key", ""):
        sources.append(f"api_key in [providers.{provider}] of {kernel.config.source or 'clawbot.toml'}")
    names = ENV_NAMES.get(provider)
    if names is not None and real_env.get(names.api_key):
        sources.append(f"environment variable {names.api_key}")
    try:
        stored = credential_file(kernel.paths, provider)
        if stored.is_file() and load_credential(stored).api_key:
            sources.append(f"{stored} (clawbot onboard)")
    except Exception:  # an unsafe or broken file is reported by the configuration check
        pass
    profiles = [p.id for p in kernel.config.auth.profiles if p.provider == provider]
    if profiles:
        sources.append(f"[[auth.profiles]] {', '.join(profiles)} of {kernel.config.source or 'clawbot.toml'}")
    return sources


def check_key(kernel: Any, provider: Any, real_env: Mapping[str, str]) -> Finding:
    sources = key_sources(kernel, provider.name, real_env)
    names = ENV_NAMES.get(provider.name)
    if sources:
        return Finding("ok", "key", f"{provider.name}: key from {sources[0]}" + (f" (also: {'; '.join(sources[1:])})" if len(sources) > 1 else ""))
    if names is not None and not names.key_required:
        return Finding("ok", "key", f"{provider.name}: no key needed")
    if provider.api_key():
        return Finding("ok", "key", f"{provider.name}: the provider has a key of its own")
    variable = f"export {names.api_key}=..., " if names is not None else ""
    return Finding(
        "fail",
        "key",
        f"{provider.name}: no API key found",
        f"clawbot onboard --provider {provider.name}, or {variable}or api_key in [providers.{provider.name}]",
    )


def check_cooldowns(kernel: Any, provider: str) -> list[Finding]:
    fixes = {
        "auth": f"the key was rejected: fix it (clawbot onboard --provider {provider}); a changed key is used at once",
        "billing": "check your plan or credits with the provider",
        "rate_limit": "wait, or add another key under [[auth.profiles]]",
    }
    now = kernel.auth.now()
    return [
        Finding(
            "warn",
            "cooldown",
            f"{provider} key {rest.profile.id} rests until {until_text(rest.until, now)} ({rest.reason.replace('_', ' ')})",
            fixes.get(rest.reason, ""),
        )
        for rest in kernel.auth.resting(provider)
    ]


def check_all_rejected(kernel: Any, model: Any, agent_id: str) -> list[Finding]:
    """A failure when every key of the default model's provider rests because it was
    rejected (or refused for billing): no turn of the default agent can be answered by it."""
    name = model.provider.name
    resting = kernel.auth.resting(name)
    if not resting or len(resting) < len(kernel.auth.profiles(name)) or any(r.reason not in ("auth", "billing") for r in resting):
        return []
    why = (
        "rejected"
        if all(r.reason == "auth" for r in resting)
        else "refused for billing reasons"
        if all(r.reason == "billing" for r in resting)
        else "rejected or refused for billing reasons"
    )
    back = until_text(min(r.until for r in resting), kernel.auth.now())
    fixes = []
    if any(r.reason == "auth" for r in resting):
        fixes.append(f"fix the key: clawbot onboard --provider {name} (a changed key is used at once)")
    if any(r.reason == "billing" for r in resting):
        fixes.append(f"check your plan or credits with {name}")
    return [
        Finding(
            "fail",
            "key",
            f"{name}: every key was {why}, so agent {agent_id} cannot use {model.ref} (tried again at {back})",
            "; ".join(fixes),
        )
    ]


def check_workspace(path: Path, agents: list[str]) -> Finding:
    who = f"agent {', '.join(agents)}"
    if path.is_dir():
        if os.access(path, os.W_OK | os.X_OK):
            return Finding("ok", "workspace", f"{path} ({who})")
        return Finding("fail", "workspace", f"{path} ({who}) is not writable", f"chmod u+rwx {path}")
    if path.exists() or path.is_symlink():
        return Finding("fail", "workspace", f"{path} ({who}) is not a directory", "move it away, or set agents.defaults.workspace to a folder")
    parent = next((p for p in path.parents if p.exists()), Path("/"))
    if not os.access(parent, os.W_OK):
        return Finding(
            "fail", "workspace", f"{path} ({who}) cannot be created ({parent} is not writable)", "set agents.defaults.workspace to a folder you can write"
        )
    return Finding("warn", "workspace", f"{path} ({who}) does not exist yet", f"mkdir -p {path}")


async def setup_checks(kernel: Any, real_env: Mapping[str, str], live: bool = False) -> list[Finding]:
    """Model, key, cooldowns and workspace of every agent; ``live``: one request to the default model."""
    findings: list[Finding] = []
    providers: dict[str, Any] = {}
    default_model = None
    for agent_id in kernel.config.agent_ids():
        try:
            chain = await choose_chain(kernel, agent_id)
        except ModelError as exc:
            head, _, rest = str(exc).partition("\n")
            findings.append(
                Finding("fail", "model", f"agent {agent_id}: no usable model: {head}", rest.strip().removeprefix("Pick one:").strip() or "clawbot onboard")
            )
            continue
        how = "detected from the environment" if chain[0].detected else "configured"
        extra = f", fallbacks {', '.join(c.ref for c in chain[1:])}" if len(chain) > 1 else ""
        findings.append(Finding("ok", "model", f"agent {agent_id}: {chain[0].ref} ({how}{extra})"))
        for choice in chain:
            providers.setdefault(choice.provider.name, choice.provider)
        if agent_id == kernel.config.default_agent_id():
            default_model = chain[0]
    for name, provider in providers.items():
        findings.append(check_key(kernel, provider, real_env))
        findings.extend(check_cooldowns(kernel, name))
    if default_model is not None:
        findings.extend(check_all_rejected(kernel, default_model, kernel.config.default_agent_id()))
    workspaces: dict[Path, list[str]] = {}
    for agent_id in kernel.config.agent_ids():
        path = expand_user_path(kernel.config.agent_workspace(agent_id), real_env).absolute()
        workspaces.setdefault(path, []).append(agent_id)
    findings.extend(check_workspace(path, agents) for path, agents in workspaces.items())
    findings.extend(check_main_session(kernel))
    findings.extend(check_strangers_answered(kernel))
    findings.extend(check_unserved(kernel))
    if live:
        findings.append(await _live(kernel, default_model))
    return findings


async def _live(kernel: Any, model: Any) -> Finding:
    """One request with the key a turn would use now (the first usable auth profile)."""
    if model is None:
        return Finding("fail", "live", "no request sent: the default agent has no usable model", "clawbot onboard")
    candidates = kernel.auth.candidates(model.provider.name)
    if not candidates:
        return Finding("fail", "live", f"no request sent: every key of {model.provider.name} is resting (see the cooldown lines)", "")
    profile = candidates[0]
    which = "" if profile.id == DEFAULT_PROFILE else f" (key {profile.id})"  # an [[auth.profiles]] key
    failure = await probe(model.provider, model.model, profile.api_key)
    if failure is None:
        return Finding("ok", "live", f"{model.ref} answered one short request{which}")
    fix = {"auth": f"clawbot onboard --provider {model.provider.name}", "connection": "check the base URL and the network"}
    return Finding(
        "fail",
        "live",
        f"{model.ref} did not answer{which}: {failure.message}",
        fix.get(failure.kind, "check the model name and the provider's status"),
    )
