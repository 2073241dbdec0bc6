"""Creating an agent workspace: ``clawbot init`` and the gateway's first start.

:func:`seed_workspace` writes the starter files shipped in ``clawbot_workspace/templates``
(AGENTS.md, SOUL.md, USER.md, TOOLS.md, IDENTITY.md, HEARTBEAT.md, BOOTSTRAP.md, MEMORY.md)
and an empty ``memory/`` folder. It never overwrites: a file that exists is kept, whatever
its content. A directory it creates gets mode 0700 (the workspace holds private notes).

Two callers:

* ``clawbot init [--workspace DIR] [--agent ID]`` seeds one workspace and says which files
  were created and which were kept;
* the ``clawbot_gateway_start`` hook (:func:`seed_on_first_start`) seeds the workspace of
  every configured agent **only if that directory does not exist or is empty**: a user who
  deleted a starter file on purpose does not get it back on the next start.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import click
from clawbot.commandkit import CliState, config_file_in_use, config_option, echo, load_settings, set_config_string

if TYPE_CHECKING:  # annotations only: `clawbot --help` imports this module to list `clawbot init`
    from clawbot.types import Settings

log = logging.getLogger(__name__)

TEMPLATE_NAMES = (
    "AGENTS.md",
    "SOUL.md",
    "USER.md",
    "TOOLS.md",
    "IDENTITY.md",
    "HEARTBEAT.md",
    "BOOTSTRAP.md",
    "MEMORY.md",
)
MEMORY_DIR = "memory"


@attrs.frozen
class SeedResult:
    """What :func:`seed_workspace` did: names created and names that already existed."""

    workspace: Path
    created: tuple[str, ...]
    kept: tuple[str, ...]
    created_workspace: bool = False


def template_text(name: str) -> str:
    """The starter text of one workspace file."""
    return resources.files("clawbot_workspace").joinpath("templates", name).read_text(encoding="utf-8")


def _exists(path: Path) -> bool:
    return os.path.lexists(path)  # a dangling symlink counts too: never write through it


def _write_new(path: Path, text: str) -> bool:
    """Create ``path`` with ``text``; ``False`` if something is already there (never replaced)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return True


def seed_workspace(workspace: Path) -> SeedResult:
    """Write the starter files into ``workspace``, creating it (mode 0700) if needed."""
    workspace = Path(workspace)
    created_workspace = not _exists(workspace)
    workspace.mkdir(parents=True, exist_ok=True, mode=0o700)
    created: list[str] = []
    kept: list[str] = []
    for name in TEMPLATE_NAMES:
        path = workspace / name
        if name == "MEMORY.md" and not _exists(path) and _exists(workspace / "memory.md"):
            kept.append("memory.md")  # the lower-case spelling is the same file to the loader
            continue
        (created if _write_new(path, template_text(name)) else kept).append(name)
    memory = workspace / MEMORY_DIR
    if _exists(memory):
        kept.append(f"{MEMORY_DIR}/")
    else:
        memory.mkdir(mode=0o700)
        created.append(f"{MEMORY_DIR}/")
    return SeedResult(workspace, tuple(created), tuple(kept), created_workspace)


def needs_seeding(workspace: Path) -> bool:
    """True unless ``workspace`` is a directory with something in it (hidden files count).

    A path that does not exist or is an empty directory is a first start. Anything else that
    is not a directory (a file in the way) also says yes, so that seeding fails loudly with
    the reason instead of the agent running without a workspace unnoticed.
    """
    try:
        with os.scandir(workspace) as entries:
            return next(entries, None) is None
    except OSError:
        return True


def agent_workspaces(settings: Settings) -> dict[Path, list[str]]:
    """Each configured agent's workspace (``~`` expanded) -> the agents that use it."""
    found: dict[Path, list[str]] = {}
    for agent in settings.agents:
        found.setdefault(agent.workspace, []).append(agent.id)
    return found


def seed_on_first_start(settings: Settings) -> list[SeedResult]:
    """Seed every configured agent's workspace that does not exist yet or is empty."""
    results = []
    for path, agents in agent_workspaces(settings).items():
        if not needs_seeding(path):
            continue
        try:
            result = seed_workspace(path)
        except OSError as exc:
            log.warning("could not create the workspace of agent %s at %s: %s", ", ".join(agents), path, exc)
            continue
        log.info("created the workspace of agent %s at %s: %s", ", ".join(agents), path, ", ".join(result.created))
        results.append(result)
    return results


# --------------------------------------------------------------------------- clawbot init


def _report(result: SeedResult) -> str:
    lines = [f"{'Created' if result.created_workspace else 'Workspace'}: {result.workspace}"]
    if result.created:
        lines.append("  created: " + ", ".join(result.created))
    if result.kept:
        lines.append("  kept (already there, not changed): " + ", ".join(result.kept))
    if result.created and "BOOTSTRAP.md" in result.created:
        lines.append("Next: edit USER.md and SOUL.md, or just start chatting; BOOTSTRAP.md guides the first conversation.")
    elif not result.created:
        lines.append("Nothing to do: every starter file is already there.")
    return "\n".join(lines)


@click.command("init")
@click.option(
    "--workspace",
    "workspace",
    type=click.Path(file_okay=False),
    default=None,
    help="Workspace folder (default: the agent's configured workspace, e.g. ~/clawbot).",
)
@click.option("--agent", "agent_id", default=None, help="Agent whose workspace to set up (default: the default agent).")
@config_option
@click.pass_context
def init_command(ctx: click.Context, workspace: str | None, agent_id: str | None) -> None:
    """Create an agent workspace with starter files (AGENTS.md, SOUL.md, MEMORY.md ...).

    Existing files are never overwritten. Works without a configuration file. With
    --workspace DIR, DIR becomes the workspace in use: agents.defaults.workspace is set in
    <state dir>/clawbot.toml (created if needed), or for --agent naming another agent than the
    default one, the workspace of its [[agents.list]] entry; when a file named by --config
    or $CLAWBOT_CONFIG is used instead, or the agent has a workspace of its own, init prints
    the line to put where instead. A DIR holding the configuration file is refused (an agent
    writes its workspace, so clawbot would refuse the file there).
    """
    from clawbot.paths import expand_user_path

    state = ctx.find_object(CliState)
    env = dict(state.env) if state is not None else dict(os.environ)

    if workspace is None:
        settings = load_settings(state)
        agent_id = agent_id or settings.default_agent_id
        if settings.agent_ids() and agent_id not in settings.agent_ids():
            echo(
                f"unknown agent {agent_id!r}; configured: {', '.join(settings.agent_ids())}. "
                "Add it under [[agents.list]] in clawbot.toml, or pass --workspace DIR.",
                err=True,
            )
            ctx.exit(2)
        path = settings.workspace_of(agent_id)
    else:
        path = expand_user_path(workspace, env)
    path = path.absolute()
    holds = _configuration_inside(state, path, env) if workspace is not None else None
    if holds is not None:
        echo(
            f"{path} holds the configuration file {holds}; an agent can write everything in its workspace, "
            "so clawbot would refuse that file. Choose a folder that does not contain it.",
            err=True,
        )
        ctx.exit(2)
    try:
        result = seed_workspace(path)
    except OSError as exc:
        echo(f"cannot set up the workspace {path}: {exc.strerror or exc}", err=True)
        ctx.exit(1)
    echo(_report(result))
    if workspace is not None:
        for line in _make_it_used(state, path, agent_id, env):
            echo(line)


def _configuration_inside(state: CliState | None, folder: Path, env: Mapping[str, str]) -> Path | None:
    """The configuration file (in use, or the user's own) that lies in ``folder``, if any."""
    from clawbot.paths import StatePaths, inside

    root = os.path.realpath(folder)
    candidates = (config_file_in_use(state), StatePaths.resolve(env).config_file)
    return next((f for f in candidates if f is not None and inside(root, os.path.realpath(f))), None)


def _make_it_used(state: CliState | None, path: Path, agent_id: str | None, env: Mapping[str, str]) -> list[str]:
    """Point the configuration at ``path``, or say exactly how."""
    import json
    import tomllib

    from clawbot.paths import expand_user_path

    in_use = config_file_in_use(state)
    try:
        data = tomllib.loads(in_use.read_text(encoding="utf-8")) if in_use is not None else {}
    except (OSError, tomllib.TOMLDecodeError):
        data = {}  # every command that reads it reports the problem
    agents = data.get("agents", {}) if isinstance(data.get("agents"), dict) else {}
    raw_list = agents.get("list", [])
    listed = [a for a in raw_list if isinstance(a, dict)] if isinstance(raw_list, list) else []
    default_id = next((a.get("id") for a in listed if a.get("default")), None) or (listed[0].get("id") if listed else "main")
    chosen = agent_id or default_id
    entry = next((a for a in listed if a.get("id") == chosen), None)
    own = entry.get("workspace") if entry is not None else None
    current = own or (agents.get("defaults") or {}).get("workspace") or "~/clawbot"
    if isinstance(current, str) and expand_user_path(current, env).absolute() == path:
        return [f"Agent {chosen} uses this workspace."]
    line = f"workspace = {json.dumps(str(path), ensure_ascii=False)}"
    if own:
        return [
            f"Agent {chosen} has a workspace of its own ({own}); to use {path}, set this line in its",
            f"[[agents.list]] entry in {in_use}:",
            "",
            f"    {line}",
            "",
        ]
    if chosen == default_id:
        return set_config_string(state, "agents.defaults", "workspace", str(path))
    # agents.defaults.workspace would move every agent without a workspace of its own (the
    # default agent too): only this agent's entry gets it
    if entry is None:
        return [
            f"Agent {chosen} is not configured; to give it this workspace, add this to {in_use or 'clawbot.toml'}:",
            "",
            "    [[agents.list]]",
            f"    id = {json.dumps(chosen, ensure_ascii=False)}",
            f"    {line}",
            "",
        ]
    return set_config_string(state, "agents.list", "workspace", str(path), entry=chosen)
