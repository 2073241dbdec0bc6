"""Which configuration files clawbot trusts: never one an agent can write.

An agent writes its workspace (the file tools, commands in the sandbox) and whatever a
plugin's table grants it (a key marked :data:`~clawbot.types.AGENT_WRITABLE`, such as a
sandbox's extra write folders). A configuration file there could switch the sandbox off or
send the API key to another server at the next start, so it is refused whoever named it
(``--config``, ``$CLAWBOT_CONFIG``, even the user's own file). The folders come from the
file being loaded and from the user's own file, so neither can hide the other's grants.

The path is checked at every place resolving it passes through: a link the agent planted
in its workspace is refused even when it points outside, and a link outside pointing into a
workspace is refused too. The same holds for clawbot's state folder (``$CLAWBOT_HOME``):
it is refused, with its stored credentials unused, when an agent can write it.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from clawbot.config.problems import ConfigError, ConfigProblem, join
from clawbot.config.schema import AgentDefaults, ClawbotConfig
from clawbot.paths import expand_user_path, inside
from clawbot.types.context import AGENT_WRITABLE

MAX_LINK_HOPS = 40  # what the kernel allows before ELOOP
DEFAULTS = "the built-in defaults"


class UntrustedConfigError(ConfigError):
    """A configuration file an agent can write: refused, with where the user's own file is."""


@attrs.frozen
class WritableFolder:
    """A folder an agent can write, and which key of which file makes it so."""

    path: str  # absolute, links resolved
    key: str  # "agents.defaults.workspace", or the marked key of a plugin's table
    source: str  # the file the key is in, or "the built-in defaults"

    def describe(self) -> str:
        return f"{self.path}, by {self.key} of {self.source}"


def _absolute(value: str, env: Mapping[str, str], cwd: Path) -> str:
    return os.path.realpath(cwd / expand_user_path(value, env))


def _marked_values(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """``(key path, path value)`` of every field marked AGENT_WRITABLE in an attrs value."""
    if not attrs.has(type(value)):
        return
    for field in attrs.fields(type(value)):
        item = getattr(value, field.name)
        key = join(path, field.alias or field.name)
        if field.metadata.get(AGENT_WRITABLE):
            for entry in [item] if isinstance(item, str) else item if isinstance(item, list | tuple) else ():
                if isinstance(entry, str) and entry.strip():
                    yield key, entry
        else:
            yield from _marked_values(item, key)


def writable_folders(config: ClawbotConfig, env: Mapping[str, str], cwd: Path, source: str | None) -> list[WritableFolder]:
    """Every folder an agent of ``config`` can write (``source``: the file it came from, ``None`` for the defaults)."""
    source = source or DEFAULTS
    workspace = config.agents.defaults.workspace
    found = [WritableFolder(_absolute(workspace, env, cwd), "agents.defaults.workspace", source if workspace != AgentDefaults().workspace else DEFAULTS)]
    for index, agent in enumerate(config.agents.list):
        if agent.workspace:
            found.append(WritableFolder(_absolute(agent.workspace, env, cwd), f"agents.list[{index}].workspace (agent {agent.id})", source))
    for table, section in sorted(config.sections.items()):
        found += [WritableFolder(_absolute(value, env, cwd), key, source) for key, value in _marked_values(section, table)]
    return found


def resolution_steps(path: str) -> Iterator[str]:
    """Every location resolving the absolute ``path`` passes through, each with its folder
    already resolved: the links on the way (and where they point) and the final file."""
    pending = deque(part for part in path.split("/") if part)
    current = "/"
    hops = 0
    while pending:
        name = pending.popleft()
        if name == ".":
            continue
        if name == "..":
            current = os.path.dirname(current)
            continue
        candidate = os.path.join(current, name)
        yield candidate
        try:
            target = os.readlink(candidate)
        except OSError:  # not a link, or not there
            current = candidate
            continue
        hops += 1
        if hops > MAX_LINK_HOPS:
            return  # a loop: opening the file fails on its own
        if target.startswith("/"):
            current = "/"
        pending.extendleft(reversed([part for part in target.split("/") if part]))


def writable_by_agent(path: Path, folders: Sequence[WritableFolder]) -> WritableFolder | None:
    """The first folder an agent can write that resolving ``path`` passes through."""
    steps = list(resolution_steps(os.path.abspath(path)))
    return next((folder for folder in folders for step in steps if inside(folder.path, step)), None)


def refuse_if_writable(path: Path, named_by: str, folders: Sequence[WritableFolder], user_file: Path) -> None:
    """Raise :class:`UntrustedConfigError` when an agent can write ``path``."""
    folder = writable_by_agent(path, folders)
    if folder is None:
        return
    own = "" if os.path.abspath(path) == os.path.abspath(user_file) else f"; your own configuration file is {user_file}"
    message = (
        f"refused ({named_by}): an agent can write there ({folder.describe()}), so the file could change the "
        f"agent's own sandbox, approvals or model server. Keep the configuration outside every workspace and "
        f"every folder an agent may write{own}."
    )
    raise UntrustedConfigError(str(path), [ConfigProblem("", message)])


def refuse_state_in_writable(state_root: Path, folders: Sequence[WritableFolder]) -> None:
    """Raise :class:`UntrustedConfigError` when an agent can write clawbot's state folder
    (``$CLAWBOT_HOME``): it holds the stored API keys and their servers (``credentials/``),
    the remembered command approvals, the cron jobs and the user's own configuration file,
    all read as the owner's."""
    folder = writable_by_agent(state_root, folders)
    if folder is None:
        return
    message = (
        f"refused: clawbot's state folder {os.path.abspath(state_root)} ($CLAWBOT_HOME) is where an agent can write "
        f"({folder.describe()}), so the agent could change the stored credentials, the command approvals, the cron "
        "jobs and your configuration. Move the state folder out of every workspace and every folder an agent may "
        "write (set CLAWBOT_HOME), or move the workspace elsewhere."
    )
    raise UntrustedConfigError(str(state_root), [ConfigProblem("", message)])


def ignored_local_config(cwd: Path, folders: Sequence[WritableFolder], user_file: Path) -> str | None:
    """The note for a ``clawbot.toml`` in the current directory, which is never read implicitly."""
    local = cwd / user_file.name
    if not local.is_file() or os.path.realpath(local) == os.path.realpath(user_file):
        return None
    folder = writable_by_agent(local, folders)
    reads = f"clawbot reads {user_file}" if user_file.is_file() else f"clawbot uses the built-in defaults, as there is no {user_file}"
    if folder is not None:
        return f"note: {local} is ignored: an agent can write there ({folder.describe()}); {reads}"
    return f"note: {local} is ignored ({reads}); to use it: clawbot --config ./{user_file.name} ..."


__all__ = [
    "UntrustedConfigError",
    "WritableFolder",
    "ignored_local_config",
    "refuse_if_writable",
    "refuse_state_in_writable",
    "resolution_steps",
    "writable_by_agent",
    "writable_folders",
]
