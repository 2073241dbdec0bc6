"""``clawbot plugins new``: the printed next steps work, run exactly as printed.

Two ways a user meets clawbot: installed (the kernel as a wheel in a fresh venv) and from this
source checkout (the test environment, whose kernel is the checkout's ``kernel/``). In both,
the commands printed after ``Created ...`` are parsed from the output and run in a shell in a
fresh directory, and the new plugin's own tests must pass. uv takes packages from its cache
and reaches only the package registry for what the cache lacks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

from clawbot.testing.cli import invoke_cli

REPO = Path(__file__).resolve().parents[3]


def clean_env(home: Path) -> dict[str, str]:
    """The user's shell: no test-run variables, no active venv, a private clawbot state dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAWBOT_", "PYTEST_"))}
    for key in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT", "UV_OFFLINE"):
        env.pop(key, None)
    home.mkdir(exist_ok=True)
    return {**env, "CLAWBOT_HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1"}


def run(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    return proc


def describe(proc: subprocess.CompletedProcess[str]) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def printed_commands(output: str) -> list[str]:
    """The indented lines under the ``Next, ...`` heading."""
    lines = output.splitlines()
    one_line = [line.removeprefix("Next:").split("   (")[0] for line in lines if line.startswith("Next:")]
    if one_line:  # the older single-line form: "Next: cd DIR && COMMAND   (or: ...)"
        return [part.strip() for part in one_line[0].split("&&")]
    start = next(i for i, line in enumerate(lines) if line.startswith("Next, "))
    commands = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        commands.append(line.strip())
    assert commands and commands[0].startswith("cd "), output
    return commands


def create_and_follow(clawbot: list[str], workdir: Path, env: dict[str, str]) -> tuple[Path, list[str]]:
    proc = run([*clawbot, "plugins", "new", "my-tool"], cwd=workdir, env=env)
    assert proc.returncode == 0, describe(proc)
    target = workdir / "clawbot-my-tool"
    assert f"Created {target}" in proc.stdout
    commands = printed_commands(proc.stdout)
    script = "set -e\n" + "\n".join(commands) + "\n"
    followed = run(["bash", "-c", script], cwd=workdir, env=env)
    assert followed.returncode == 0, f"commands:\n{script}\n{describe(followed)}"
    assert " passed" in followed.stdout and "failed" not in followed.stdout, followed.stdout
    return target, commands


def test_steps_work_from_an_installed_clawbot(tmp_path: Path) -> None:
    env = clean_env(tmp_path / "home")
    venv = tmp_path / "clawbot-env"
    proc = run(["uv", "venv", "--quiet", "--python", sys.executable, str(venv)], cwd=tmp_path, env=env)
    assert proc.returncode == 0, describe(proc)
    python = venv / "bin" / "python"
    # Wheels built from kernel/ and the setup plugin that adds `plugins new` (not editable): clawbot as `pip install` leaves it.
    proc = run(
        ["uv", "pip", "install", "--quiet", "--no-sources", "--python", str(python), str(REPO / "kernel"), str(REPO / "plugins" / "setup")],
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 0, describe(proc)
    workdir = tmp_path / "work"
    workdir.mkdir()

    target, commands = create_and_follow([str(venv / "bin" / "clawbot")], workdir, env)
    assert not any("--with-editable" in c for c in commands), commands  # no checkout to point at
    assert any(str(python) in c for c in commands), commands

    # Installed where clawbot runs, so clawbot loads it, from anywhere.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = run([str(venv / "bin" / "clawbot"), "plugins", "list", "--json"], cwd=elsewhere, env=env)
    assert proc.returncode == 0, describe(proc)
    record = {r["name"]: r for r in json.loads(proc.stdout)["plugins"]}["my_tool"]
    assert (record["status"], record["distribution"], record["module"]) == ("loaded", "clawbot-my-tool", "clawbot_my_tool.plugin")
    assert record["hooks"] == ["clawbot_capabilities", "clawbot_config_schema", "clawbot_services", "clawbot_tools"] and record["warnings"] == []
    config = elsewhere / "clawbot.toml"
    config.write_text('[plugins.my_tool]\ntop_words = "many"\n', encoding="utf-8")
    proc = run([str(venv / "bin" / "clawbot"), "--config", str(config), "config", "validate"], cwd=elsewhere, env=env)
    assert proc.returncode == 2, describe(proc)
    assert "plugins.my_tool.top_words" in proc.stdout + proc.stderr
    proc = run([str(python), "-c", "import clawbot_my_tool; print(clawbot_my_tool.__file__)"], cwd=elsewhere, env=env)
    assert Path(proc.stdout.strip()).is_relative_to(target), describe(proc)  # editable: edits take effect


def test_steps_work_from_a_source_checkout(tmp_path: Path) -> None:
    env = clean_env(tmp_path / "home")
    workdir = tmp_path / "work"
    workdir.mkdir()
    _, commands = create_and_follow([sys.executable, "-m", "clawbot.cli.main"], workdir, env)
    assert any(str(REPO / "kernel") in c for c in commands), commands
    # The checkout's environment is left as `uv sync` made it.
    proc = run([sys.executable, "-c", "import clawbot_my_tool"], cwd=tmp_path, env=env)
    assert proc.returncode != 0, "the checkout's own environment got the plugin installed"


def test_refuses_to_create_inside_the_source_checkout(tmp_path: Path) -> None:
    stray = REPO / "clawbot-my-tool"
    assert not stray.exists()
    try:
        result = invoke_cli("plugins", "new", "my-tool", home=tmp_path, cwd=REPO)
    finally:  # a clawbot that does not refuse leaves it in the checkout
        created = stray.exists()
        shutil.rmtree(stray, ignore_errors=True)
    assert not created and result.returncode == 2, result.stderr
    assert f"{REPO / 'clawbot-my-tool'} is inside the clawbot source checkout {REPO}" in result.stderr
    assert "-d DIR" in result.stderr and "--in-source-tree" in result.stderr
    result = invoke_cli("plugins", "new", "my-tool", "-d", str(REPO / "plugins" / "my-tool"), home=tmp_path, cwd=tmp_path)
    assert result.returncode == 2 and "inside the clawbot source checkout" in result.stderr
    assert not (REPO / "plugins" / "my-tool").exists()

    # Asked for, it goes there (build/ is ignored by git; removed again below).
    inside = REPO / "build" / f"plugin-{uuid.uuid4().hex[:8]}"
    try:
        result = invoke_cli("plugins", "new", "my-tool", "-d", str(inside), "--in-source-tree", home=tmp_path, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert (inside / "clawbot_my_tool" / "plugin.py").is_file()
    finally:
        shutil.rmtree(inside, ignore_errors=True)
