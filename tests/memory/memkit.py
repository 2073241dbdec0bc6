"""Shared by the memory tests: two agents with memory files, the test provider installed.

The real clawbot-memory plugin is disabled in these runs: the kernel's side must work with
any provider, and two installed providers with none named is (rightly) a startup error.
"""

from __future__ import annotations

from pathlib import Path

from clawbot.testing.cli import CliRun, invoke_cli

from . import filememory

# Only the kernel's own side is under test: the shipped memory backend stays out.
ENV = {"CLAWBOT_DISABLE_PLUGINS": "memory"}
NO_PROVIDER_ENV = {"CLAWBOT_DISABLE_PLUGINS": f"memory,{filememory.MODULE}"}

ALICE_DAY = """# 2026-01-20

## API discussion
Talked through the API architecture with the team.

### Decision
We chose REST over GraphQL: simpler to build,
better caching, and the team knows it.
"""
ALICE_LONG_TERM = "# Long-term memory\n\n- Prefers short answers.\n- Birthday: March 3.\n"
BOB_LONG_TERM = "# Bob's memory\n\n- The vault code is 7481, kept by the zebra team.\n"


def write_workspaces(root: Path) -> dict[str, Path]:
    """Workspaces of agents ``alice`` (the default) and ``bob``, each with its own memory."""
    alice, bob = root / "ws-alice", root / "ws-bob"
    (alice / "memory").mkdir(parents=True)
    (bob / "memory").mkdir(parents=True)
    (alice / "memory" / "2026-01-20.md").write_text(ALICE_DAY, encoding="utf-8")
    (alice / "MEMORY.md").write_text(ALICE_LONG_TERM, encoding="utf-8")
    (bob / "MEMORY.md").write_text(BOB_LONG_TERM, encoding="utf-8")
    return {"alice": alice, "bob": bob}


def agents_config(workspaces: dict[str, Path], base_url: str | None = None, extra: str = "") -> str:
    model = ""
    if base_url is not None:
        model = f'[agents.defaults.model]\nprimary = "openai/gpt-test"\n\n[providers.openai]\nbase_url = "{base_url}/v1"\napi_key = "sk-test"\n\n'
    agents = "".join(
        f'[[agents.list]]\nid = "{agent}"\nworkspace = "{path}"\n' + ("default = true\n" if agent == "alice" else "") + "\n"
        for agent, path in workspaces.items()
    )
    return model + extra + agents


def setup_home(home: Path, site: Path, base_url: str | None = None, extra: str = "") -> dict[str, Path]:
    """The provider installed in ``site``, two agents' workspaces, ``home/clawbot.toml``."""
    filememory.install(site)
    workspaces = write_workspaces(home)
    (home / "clawbot.toml").write_text(agents_config(workspaces, base_url, extra), encoding="utf-8")
    return workspaces


def clawbot(home: Path, *args: str, env: dict[str, str] | None = None, stdin: str = "") -> CliRun:
    run = invoke_cli(*args, home=home, env={**ENV, **(env or {})}, stdin=stdin)
    assert "Traceback" not in run.stdout + run.stderr
    return run
