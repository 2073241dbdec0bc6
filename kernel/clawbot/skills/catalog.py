"""The skills of each agent: discovered, parsed, checked and filtered, re-read only on change.

:meth:`SkillCatalog.prompt_skills` runs every turn, so the common case is a comparison: each
source directory is listed (one ``scandir`` plus one ``stat`` per skill) and compared with
the listing the cached result was built from. Only when a listing differs is anything
rebuilt, and then only the ``SKILL.md`` files whose stamp changed are parsed again. PATH
directories are stamped too when a skill needs a binary (installing it makes the skill
eligible on the next turn), and the variables skills need are re-checked every call.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from clawbot.skills.discovery import SKILL_FILE, FolderStamp, SkillHost, SourceDir, inside_workspace, scan, source_dirs
from clawbot.skills.eligibility import EligibilityChecker
from clawbot.skills.frontmatter import Finding, ParseResult, SkillDocument, parse_skill
from clawbot.types.prompt import SkillEntry
from clawbot.workspacefiles import FileRefused, NotRegular, TooLarge, Unreadable, read_file

MAX_SKILL_BYTES = 256 * 1024  # the largest bundled skill is a few KiB; the catalogue needs only the start

log = logging.getLogger("clawbot.skills")


@attrs.frozen
class SkillProblem:
    """Something ``clawbot skills check`` reports. ``error``: the skill was skipped."""

    path: Path
    message: str
    line: int | None = None
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.message}"


@attrs.frozen
class ShadowedSkill:
    """A skill hidden by one of the same name found earlier in the precedence order."""

    name: str
    location: Path
    source: str
    winner_location: Path
    winner_source: str


@attrs.frozen
class SkillSnapshot:
    """Everything known about one agent's skills at one moment.

    ``entries``: every usable skill after precedence, eligible or not, sorted by name.
    ``prompt``: those the model sees, by source precedence (workspace first), then name. ``excluded``: for every other entry, why not.
    """

    entries: tuple[SkillEntry, ...] = ()
    prompt: tuple[SkillEntry, ...] = ()
    excluded: Mapping[str, str] = attrs.field(factory=dict)
    shadowed: tuple[ShadowedSkill, ...] = ()
    problems: tuple[SkillProblem, ...] = ()
    documents: Mapping[str, SkillDocument] = attrs.field(factory=dict, repr=False)

    @property
    def has_errors(self) -> bool:
        return any(p.severity == "error" for p in self.problems)


@attrs.define
class _Parsed:
    stamp: FolderStamp
    result: ParseResult
    real: str
    root: str | None = None


@attrs.define
class _AgentState:
    sources: tuple[SourceDir, ...]
    paths: tuple[str, ...]
    listings: tuple[tuple[FolderStamp, ...], ...] | None = None
    requirements: tuple[Any, ...] | None = None
    snapshot: SkillSnapshot = attrs.field(factory=SkillSnapshot)
    env_names: tuple[str, ...] = ()
    needs_bins: bool = False


class SkillCatalog:
    """The skills of every agent of one kernel (``kernel.skill_catalog``)."""

    def __init__(self, kernel: SkillHost) -> None:
        self._kernel = kernel
        self._config: Any = None
        self._agents: dict[str, _AgentState] = {}
        self._parsed: dict[str, _Parsed] = {}
        self._checker = EligibilityChecker(kernel.env, kernel.config)
        self._path_stamp: tuple[Any, ...] | None = None
        self._logged: set[str] = set()
        self._lock = threading.RLock()

    # -- the API -------------------------------------------------------------------------

    def entries(self, agent_id: str) -> list[SkillEntry]:
        """Every skill the agent could have, eligible or not, after precedence, by name."""
        return list(self.snapshot(agent_id).entries)

    def prompt_skills(self, agent_id: str) -> tuple[SkillEntry, ...]:
        """The skills the agent's model sees: eligible, allowed, model-invocable; by source
        precedence (workspace, user, extra, bundled, plugin), then name."""
        return self.snapshot(agent_id).prompt

    def problems(self, agent_id: str) -> tuple[SkillProblem, ...]:
        """Malformed ``SKILL.md`` files (errors), shadowed names and other warnings."""
        return self.snapshot(agent_id).problems

    def shadowed(self, agent_id: str) -> tuple[ShadowedSkill, ...]:
        return self.snapshot(agent_id).shadowed

    def snapshot(self, agent_id: str) -> SkillSnapshot:
        """The agent's skills now: the cached result unless a file, PATH or variable changed.

        Safe to call from worker threads (the system prompt reads skills off the event loop):
        one call at a time updates the cache."""
        with self._lock:
            return self._snapshot(agent_id)

    def _snapshot(self, agent_id: str) -> SkillSnapshot:
        if self._kernel.config is not self._config:
            self._reset()
        state = self._agents.get(agent_id)
        if state is None:
            sources = source_dirs(self._kernel, agent_id)
            state = self._agents[agent_id] = _AgentState(sources, tuple(os.fspath(s.path) for s in sources))
        listings = tuple(scan(path) for path in state.paths)
        requirements = self._requirements(state)
        if listings != state.listings or requirements != state.requirements:
            self._rebuild(agent_id, state, listings)
            state.requirements = self._requirements(state)
        return state.snapshot

    # -- caching -------------------------------------------------------------------------

    def _reset(self) -> None:
        self._config = self._kernel.config
        self._agents.clear()
        self._checker = EligibilityChecker(self._kernel.env, self._kernel.config)
        self._path_stamp = None

    def _requirements(self, state: _AgentState) -> tuple[Any, ...]:
        """What eligibility depends on besides the files: set variables, PATH and its dirs."""
        env = self._kernel.env
        path_stamp: tuple[Any, ...] = ()
        if state.needs_bins:
            path = env.get("PATH") or os.defpath
            path_stamp = (path, *(_mtime(d) for d in path.split(os.pathsep)))
            if path_stamp != self._path_stamp:
                self._checker.forget()
                self._path_stamp = path_stamp
        return (path_stamp, tuple(bool(env.get(name)) for name in state.env_names))

    def _parse(self, location: Path, stamp: FolderStamp, root: str | None) -> _Parsed:
        key = os.fspath(location)
        cached = self._parsed.get(key)
        if cached is not None and cached.stamp == stamp and cached.root == root:
            return cached
        try:
            text, linked = _read_skill(location, root)
        except UnicodeDecodeError as exc:
            result = ParseResult(None, (Finding(f"not UTF-8 text (byte {exc.start})"),))
        except TooLarge:
            result = ParseResult(None, (Finding(f"larger than {MAX_SKILL_BYTES // 1024} KiB; a SKILL.md is read whole, so it is skipped"),))
        except FileRefused as exc:
            result = ParseResult(None, (Finding(f"not read: {exc.reason}"),))
        except OSError as exc:
            result = ParseResult(None, (Finding(f"cannot read: {exc.strerror or exc}"),))
        else:
            result = parse_skill(text, location.parent.name, linked=linked)
        parsed = self._parsed[key] = _Parsed(stamp, result, os.path.realpath(location), root)
        return parsed

    def _rebuild(self, agent_id: str, state: _AgentState, listings: tuple[tuple[FolderStamp, ...], ...]) -> None:
        problems: list[SkillProblem] = []
        shadowed: list[ShadowedSkill] = []
        winners: dict[str, tuple[SkillDocument, Path, SourceDir]] = {}
        rank: dict[str, int] = {}  # skill name -> position of its source in the precedence order
        seen_files: set[str] = set()
        workspace = next((source.path.parent for source in state.sources if source.kind == "workspace"), None)
        for position, (source, listing) in enumerate(zip(state.sources, listings, strict=True)):
            # A workspace skill's description enters the prompt unasked; one whose SKILL.md leads
            # outside the workspace (a link someone may have planted to a key file) is read
            # only for its frontmatter, never for the first paragraph of its body.
            root = os.path.realpath(workspace) if workspace is not None and inside_workspace(source, workspace) else None
            if not listing and not source.optional and not source.path.is_dir():
                what = "skills.extra_dirs entry" if source.kind == "extra" else f"skill source {source.name!r}"
                problems.append(SkillProblem(source.path, f"{what} is not a directory", None, "warning"))
            for stamp in sorted(listing):
                location = source.path / stamp[0] / SKILL_FILE
                parsed = self._parse(location, stamp, root)
                problems += [SkillProblem(location, f.message, f.line, f.severity) for f in parsed.result.findings]
                document = parsed.result.document
                if document is None or parsed.real in seen_files:
                    continue  # broken, or the same file reached twice (a symlink, a repeated dir)
                seen_files.add(parsed.real)
                winner = winners.get(document.name)
                if winner is not None:
                    shadowed.append(ShadowedSkill(document.name, location, source.name, winner[1], winner[2].name))
                    problems.append(
                        SkillProblem(
                            location,
                            f"skill {document.name!r} is shadowed by {winner[1]} ({winner[2].name})",
                            None,
                            "warning",
                        )
                    )
                    continue
                winners[document.name] = (document, location, source)
                rank[document.name] = position
        state.listings = listings
        self._forget_unlisted()

        checked = [d for d, _, _ in winners.values() if not d.always]
        state.needs_bins = any(d.requires.bins or d.requires.any_bins for d in checked)
        state.env_names = tuple(sorted({name for d in checked for name in d.requires.env}))
        if state.needs_bins:
            self._requirements(state)  # refresh the binary cache if PATH changed
        entries = tuple(self._entry(document, location, source) for document, location, source in sorted(winners.values(), key=_by_name))
        excluded = {entry.name: why for entry in entries if (why := self._exclusion(agent_id, entry))}
        state.snapshot = SkillSnapshot(
            entries=entries,
            # Highest precedence first: the catalogue's size cap keeps the front of this list.
            prompt=tuple(sorted((e for e in entries if e.name not in excluded), key=lambda e: (rank[e.name], e.name))),
            excluded=excluded,
            shadowed=tuple(shadowed),
            problems=tuple(problems),
            documents={name: winner[0] for name, winner in winners.items()},
        )
        for problem in problems:
            text = str(problem)
            if text not in self._logged:  # once per process, not every turn
                self._logged.add(text)
                if problem.severity == "error":
                    log.warning("skill skipped: %s", text)
                else:
                    log.info("skill warning: %s", text)

    def _forget_unlisted(self) -> None:
        """Drop parsed files no agent's sources list any more (deleted skills)."""
        live: set[str] = set()
        for state in self._agents.values():
            for source, listing in zip(state.sources, state.listings or (), strict=False):
                live.update(os.fspath(source.path / stamp[0] / SKILL_FILE) for stamp in listing)
        if len(self._parsed) > 2 * max(len(live), 16):
            for key in set(self._parsed) - live:
                del self._parsed[key]

    def _entry(self, document: SkillDocument, location: Path, source: SourceDir) -> SkillEntry:
        reasons = self._checker.reasons(document)
        return SkillEntry(
            name=document.name,
            description=document.description,
            location=location,
            source=source.name,
            homepage=document.homepage,
            emoji=document.emoji,
            user_invocable=document.user_invocable,
            disable_model_invocation=document.disable_model_invocation,
            always=document.always,
            primary_env=document.primary_env,
            eligible=not reasons,
            reasons=reasons,
        )

    def _exclusion(self, agent_id: str, entry: SkillEntry) -> str:
        """Why ``entry`` stays out of the agent's prompt (empty: it goes in)."""
        config = self._kernel.config
        agent = config.agent(agent_id)
        own = agent.skills.allow if agent is not None and agent.skills is not None else None
        if not entry.eligible:
            return "not eligible: " + "; ".join(entry.reasons)
        if entry.name in config.skills.deny:
            return "denied by skills.deny"
        if own is not None and entry.name not in own:
            return f"not in the skills.allow of agent {agent_id!r}"
        if own is None and config.skills.allow and entry.name not in config.skills.allow:
            return "not in skills.allow"
        if entry.disable_model_invocation:
            return "disable-model-invocation: only a user can invoke it"
        return ""


def _read_skill(location: Path, root: str | None) -> tuple[str, bool]:
    """The text of ``location`` and whether it leads outside ``root`` (if given), read the one
    safe way (:mod:`clawbot.workspacefiles`): a regular file only, never blocking, at most
    :data:`MAX_SKILL_BYTES`. One that leads outside the workspace is still read, but only for
    its frontmatter (``linked``): the user may link a skill kept elsewhere."""
    if root is not None:
        try:
            return _decoded(location, read_file(location, root, max_bytes=MAX_SKILL_BYTES)), False
        except (NotRegular, TooLarge, Unreadable):
            raise
        except FileRefused:  # outside the workspace, or a hard link: frontmatter only
            pass
    return _decoded(location, read_file(location, None, max_bytes=MAX_SKILL_BYTES)), root is not None


def _decoded(location: Path, data: bytes | None) -> str:
    if data is None:
        raise FileNotFoundError(errno.ENOENT, "no such file", os.fspath(location))
    return data.decode("utf-8")


def _by_name(winner: tuple[SkillDocument, Path, SourceDir]) -> str:
    return winner[0].name


def _mtime(directory: str) -> int:
    try:
        return os.stat(directory or ".").st_mtime_ns
    except OSError:
        return 0
