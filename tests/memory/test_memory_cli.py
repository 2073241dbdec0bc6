"""``clawbot memory status|index|search`` and the memory lines of ``clawbot doctor``, run as a
user runs them (in process; a subprocess where streaming line by line is the point), with
the small file-backed provider installed as a distribution."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from clawbot.testing.cli import subprocess_env

from . import filememory
from .memkit import ENV, NO_PROVIDER_ENV, clawbot, setup_home


@pytest.fixture
def home(clawbot_home: Path, site: Path) -> Path:
    setup_home(clawbot_home, site)
    return clawbot_home


def test_status_shows_each_agents_mode_and_why(home: Path) -> None:
    run = clawbot(home, "memory", "status")
    assert run.returncode == 0, run.stderr
    text = " ".join(run.stdout.split())
    assert "agent alice: keyword search only (provider files)" in text and "agent bob: keyword search only (provider files)" in text
    assert "why this backend has no embedder" in text and "driver plain files" in text and "keywords substring" in text

    statuses = json.loads(clawbot(home, "memory", "status", "--agent", "bob", "--json").stdout)
    assert [(s["agent_id"], s["mode"], s["files"], s["reasons"]) for s in statuses] == [("bob", "keyword", 1, ["this backend has no embedder"])]
    assert statuses[0]["details"] == {"root": str((home / "ws-bob").resolve())}
    assert f"root {(home / 'ws-alice').resolve()}" in text


def test_index_reports_each_agent_and_passes_force_on(home: Path) -> None:
    run = clawbot(home, "memory", "index")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "alice: 2 files indexed, 0 unchanged, 0 removed; 12 chunks (0 embedded, 0 from the cache) in 0.0 s",
        "bob: 1 files indexed, 0 unchanged, 0 removed; 3 chunks (0 embedded, 0 from the cache) in 0.0 s",
    ]
    assert clawbot(home, "memory", "index", "--agent", "bob", "--force").returncode == 0
    assert [line for line in filememory.log_lines(home) if line.startswith("sync")] == ["sync alice force=False", "sync bob force=False", "sync bob force=True"]


def test_index_draws_a_progress_bar_fed_by_the_provider(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal rich draws the bar from the provider's progress reports (done of total, the file)."""
    from rich.console import Console

    monkeypatch.setattr(Console, "is_terminal", property(lambda self: True))
    run = clawbot(home, "memory", "index", "--agent", "alice")
    assert run.returncode == 0, run.stderr
    assert "2/2" in run.stderr and "alice: memory/2026-01-20.md" in run.stderr


def test_search_prints_a_table_or_json_hits(home: Path) -> None:
    run = clawbot(home, "memory", "search", "GraphQL")
    assert run.returncode == 0, run.stderr
    assert "memory/2026-01-20.md:7-8" in run.stdout and "We chose REST over GraphQL" in run.stdout

    hits = json.loads(clawbot(home, "memory", "search", "the team", "--max-results", "1", "--json").stdout)
    assert hits == [
        {
            "path": "memory/2026-01-20.md",
            "start_line": 4,
            "end_line": 6,
            "score": 1.0,
            "snippet": "Talked through the API architecture with the team.\n\n### Decision",
        }
    ]
    assert json.loads(clawbot(home, "memory", "search", "zebra", "--agent", "bob", "--json").stdout)[0]["path"] == "MEMORY.md"
    assert json.loads(clawbot(home, "memory", "search", "zebra", "--json").stdout) == []  # alice's memory by default


def test_search_stdin_answers_one_json_line_per_query_with_the_kernel_loaded_once(home: Path) -> None:
    run = clawbot(home, "memory", "search", "--stdin", "--json", stdin="GraphQL\n\nbirthday\nnothing like this\n")
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert [[h["start_line"] for h in hits] for hits in lines] == [[7], [], [4], []]
    assert filememory.log_lines(home).count("open") == 1


def test_search_stdin_streams_each_answer_before_the_next_query(home: Path, site: Path) -> None:
    env = subprocess_env(home, ENV, site)
    command = [sys.executable, "-m", "clawbot.cli.main", "memory", "search", "--stdin", "--json"]
    with subprocess.Popen(command, cwd=home, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        assert process.stdin is not None and process.stdout is not None
        for query, path in (("GraphQL", "memory/2026-01-20.md"), ("birthday", "MEMORY.md")):
            process.stdin.write(query + "\n")
            process.stdin.flush()
            assert json.loads(process.stdout.readline())[0]["path"] == path  # answered while stdin is still open
        process.stdin.close()
        assert process.wait(timeout=30) == 0, process.stderr.read() if process.stderr else ""


@pytest.mark.parametrize("args", [("status",), ("index",), ("search", "api")], ids=["status", "index", "search"])
def test_no_provider_and_unknown_agents_are_one_clear_line(home: Path, args: tuple[str, ...]) -> None:
    missing = clawbot(home, "memory", *args, env=NO_PROVIDER_ENV)
    assert (missing.returncode, missing.stdout) == (1, "")
    assert missing.stderr.strip() == "no memory provider is installed: install a memory plugin (`clawbot plugins list` shows what is installed)"

    unknown = clawbot(home, "memory", *args, "--agent", "carol")
    assert (unknown.returncode, unknown.stderr.strip()) == (2, "unknown agent 'carol'; configured: alice, bob")


def test_a_failing_provider_and_a_bad_call_are_reported_without_a_traceback(home: Path) -> None:
    failed = clawbot(home, "memory", "status", env={"FILES_MEMORY_STATUS_FAILS": "1"})
    assert failed.returncode == 1
    assert failed.stderr.strip() == "memory status of agent 'alice' failed: RuntimeError: the status table is unreadable"
    for args in (("search",), ("search", "api", "--stdin")):
        usage = clawbot(home, "memory", *args)
        assert usage.returncode == 2 and "give either QUERY or --stdin" in usage.stderr


def test_doctor_shows_each_agents_memory_and_survives_a_failing_status(home: Path) -> None:
    text = " ".join(clawbot(home, "doctor").stdout.split())
    assert "memory memory provider 'files' is active (plugin memo_files)" in text
    assert "info memory agent alice: keyword search only — because this backend has no embedder (2 files, 12 chunks; driver plain files)" in text
    assert "info memory agent bob: keyword search only" in text

    text = " ".join(clawbot(home, "doctor", env={"FILES_MEMORY_STATUS_FAILS": "1"}).stdout.split())
    assert (
        "warn memory agent alice: memory provider 'files' could not report its status: RuntimeError: the status table is unreadable "
        "fix: run `clawbot memory status --agent alice` after fixing it" in text
    )
    assert "agent bob: memory provider 'files' could not report its status" in text


def test_help_loads_nothing_of_memory_and_memory_help_nothing_heavy(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from clawbot.cli.main import main\n"
        "def run(*args):\n"
        "    try:\n        main(list(args))\n    except SystemExit:\n        pass\n"
        "run('--help')\n"
        "print('AFTER HELP=' + ','.join(m for m in ('clawbot.cli.memory_cmd', 'clawbot.agent.memory') if m in sys.modules))\n"
        "run('memory', '--help')\n"
        "print('AFTER MEMORY HELP=' + ','.join(m for m in ('rich', 'clawbot.kernel', 'clawbot.agent', 'sqlean', 'numpy') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"CLAWBOT_HOME": str(tmp_path), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert "AFTER HELP=\n" in result.stdout and "AFTER MEMORY HELP=\n" in result.stdout, result.stdout
