"""A small but real memory provider for the kernel's memory tests: plain files, plain substrings.

Each agent's memory is its workspace's MEMORY.md and memory/**/*.md, read from disk on every
call (no index), searched for the query's words line by line. It keeps to the contract the
way any backend must: every call is scoped to one agent, and ``get`` refuses anything that is
not one of that agent's memory files. What it was asked to start and close is appended to
``<state dir>/files-memory.log`` (and ``open`` each time a kernel makes one), so a test in another process can see it.

Tests use this module both ways a user's plugin arrives: registered directly
(``build_kernel(plugins={"memo_files": filememory})``) and installed as a distribution whose
entry point the kernel finds (:func:`install`). Environment switches, read from the kernel's
environment: ``FILES_MEMORY_STATUS_FAILS`` (``status()`` raises), ``FILES_MEMORY_DEGRADED``
(searches say the embedder failed and fell back to keywords), ``FILES_MEMORY_START_FAILS``
(``start()`` raises after logging).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from clawbot import (
    MemoryExcerpt,
    MemoryHit,
    MemoryPathError,
    MemoryProvider,
    MemorySearch,
    MemoryStatus,
    MemorySyncProgress,
    MemorySyncReport,
    hookimpl,
)
from clawbot.types import Settings

MODULE = "memo_files"
NAME = "files"


@hookimpl
def clawbot_memory_providers(ctx):  # noqa: ANN001, ANN201 - the hook's signature
    return [FileMemory(ctx.clawbot, ctx.env, Path(ctx.state_dir))]


class FileMemory(MemoryProvider):
    name = NAME

    def __init__(self, settings: Settings, env, state_dir: Path) -> None:  # noqa: ANN001
        self.settings, self.env, self.state_dir = settings, env, state_dir
        self.synced: dict[str, int] = {}
        self._log("open")

    def _log(self, line: str) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with (self.state_dir / "files-memory.log").open("a", encoding="utf-8") as log:
            log.write(line + "\n")

    def _root(self, agent_id: str) -> Path:
        return self.settings.workspace_of(agent_id).resolve()

    def _files(self, agent_id: str) -> dict[str, Path]:
        """relative path -> real file, for this agent's memory files inside its workspace."""
        root = self._root(agent_id)
        found = [root / "MEMORY.md", *sorted((root / "memory").rglob("*.md"))]
        return {str(p.relative_to(root)): p for p in found if p.is_file() and p.resolve().is_relative_to(root)}

    async def search(self, query: str, *, agent_id: str, max_results: int | None = None, min_score: float | None = None) -> MemorySearch:
        words = [w for w in query.lower().split() if len(w) > 2] or [query.lower()]
        hits = []
        for relative, path in self._files(agent_id).items():
            lines = path.read_text(encoding="utf-8").splitlines()
            for index, line in enumerate(lines):
                score = sum(w in line.lower() for w in words) / len(words)
                if score > (min_score or 0.0):
                    end = min(len(lines), index + 3)
                    hits.append(MemoryHit(relative, index + 1, end, score, "\n".join(lines[index:end])))
        hits.sort(key=lambda h: (-h.score, h.path, h.start_line))
        degraded = bool(self.env.get("FILES_MEMORY_DEGRADED"))
        notice = "the embedder failed (connection refused), so this search used keywords only" if degraded else None
        return MemorySearch(tuple(hits[: max_results or 6]), "keyword", notice=notice)

    async def get(self, path: str, *, agent_id: str, from_line: int = 1, lines: int | None = None) -> MemoryExcerpt:
        root = self._root(agent_id)
        wanted = (root / path).resolve()
        if wanted not in {p.resolve() for p in self._files(agent_id).values()}:
            raise MemoryPathError(f"{path} is not a memory file of agent {agent_id}")
        text = wanted.read_text(encoding="utf-8").splitlines()
        end = len(text) if lines is None else min(len(text), from_line + lines - 1)
        return MemoryExcerpt(str(wanted.relative_to(root)), from_line, end, len(text), "\n".join(text[from_line - 1 : end]))

    async def sync(self, *, agent_id: str, force: bool = False, progress: Callable[[MemorySyncProgress], None] | None = None) -> MemorySyncReport:
        files = self._files(agent_id)
        chunks = 0
        for done, (relative, path) in enumerate(files.items(), 1):
            chunks += len(path.read_text(encoding="utf-8").splitlines())
            if progress is not None:
                progress(MemorySyncProgress(done, len(files), relative))
        self.synced[agent_id] = chunks
        self._log(f"sync {agent_id} force={force}")
        return MemorySyncReport(files_indexed=len(files), chunks=chunks, seconds=0.01)

    async def status(self, *, agent_id: str) -> MemoryStatus:
        if self.env.get("FILES_MEMORY_STATUS_FAILS"):
            raise RuntimeError("the status table is unreadable")
        files = self._files(agent_id)
        return MemoryStatus(
            provider=NAME,
            agent_id=agent_id,
            mode="keyword",
            reasons=("this backend has no embedder",),
            files=len(files),
            chunks=sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files.values()),
            keyword_backend="substring",
            driver="plain files",
            details={"root": self._root(agent_id)},  # a Path: details may hold any value
        )

    async def start(self, *, agent_ids: Sequence[str]) -> None:
        self._log(f"start {','.join(agent_ids)}")
        if self.env.get("FILES_MEMORY_START_FAILS"):
            raise OSError("the memory folder cannot be watched")

    async def close(self) -> None:
        self._log("close")


def install(site: Path) -> None:
    """Install this module into ``site`` as the distribution ``clawbot-memo-files``."""
    from clawbot.testing import install_distribution

    source = Path(__file__).read_text(encoding="utf-8")
    install_distribution(site, "clawbot-memo-files", entry_points={MODULE: MODULE}, modules={f"{MODULE}.py": source})


def log_lines(state_dir: Path) -> list[str]:
    path = state_dir / "files-memory.log"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []
