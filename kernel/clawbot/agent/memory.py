"""What the kernel does with the active memory provider, whichever plugin offers it.

The provider does the work (index, search, watch); the kernel decides which agents it serves,
starts it with the gateway, and says in one sentence how each agent's memory stands (for
``clawbot doctor`` and ``clawbot memory status``).
"""

from __future__ import annotations

import logging

from clawbot.config import ClawbotConfig
from clawbot.kernel import Kernel
from clawbot.types import MemoryStatus

log = logging.getLogger(__name__)

NO_PROVIDER = "no memory provider is installed: install a memory plugin (`clawbot plugins list` shows what is installed)"

_MODES = {
    "hybrid": "hybrid search (by meaning and by words)",
    "keyword": "keyword search only",
    "vector": "search by meaning only",
    "unavailable": "no search",
}


def memory_agents(config: ClawbotConfig) -> list[str]:
    """The agents whose memory the provider serves: every configured one."""
    return config.agent_ids() or [config.default_agent_id()]


def unknown_agent(config: ClawbotConfig, agent_id: str) -> str | None:
    """Why ``agent_id`` names no agent (naming the configured ones), or ``None``."""
    known = memory_agents(config)
    return None if agent_id in known else f"unknown agent {agent_id!r}; configured: {', '.join(known)}"


def mode_text(status: MemoryStatus) -> str:
    return _MODES.get(status.mode, status.mode)


def status_line(status: MemoryStatus) -> str:
    """One line: the mode, why it is less than hybrid, and what it runs on."""
    parts = [f"agent {status.agent_id}: {mode_text(status)}"]
    if status.reasons:
        parts.append("because " + "; ".join(status.reasons))
    if status.last_error and status.last_error not in status.reasons:
        parts.append(f"last error: {status.last_error}")
    used = [
        f"{status.files} files, {status.chunks} chunks",
        *(f"{label} {value}" for label, value in (("embedder", status.embedder), ("vectors", status.vector_backend), ("driver", status.driver)) if value),
    ]
    return " — ".join(parts) + f" ({'; '.join(used)})"


async def start_memory(kernel: Kernel) -> None:
    """Start the active provider for every agent (sync, then watch); a failure is logged and
    leaves memory working as a one-shot run has it (searches sync when stale)."""
    provider = kernel.memory_provider
    if provider is None:
        return
    try:
        await provider.start(agent_ids=memory_agents(kernel.config))
    except Exception:
        log.warning("memory provider %s failed to start; searches still work and sync when stale", provider.name, exc_info=True)
