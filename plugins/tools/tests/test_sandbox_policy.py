"""Choosing a mechanism, failing closed, and protected folders inside opened trees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from clawbot_tools.runtime.sandbox import SETTINGS, Limits, SandboxError, SandboxPolicy, choose

from .sandbox_variants import CONFINING, WITHOUT_NAMESPACES
from .sandbox_world import PATH, mechanism, run_sandboxed, usable

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    ws, temp = tmp_path / "ws", tmp_path / "tmp"
    ws.mkdir()
    temp.mkdir(mode=0o700)
    return ws, temp


def test_an_unknown_setting_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="auto, bwrap, landlock, off"):
        choose("firejail")


def test_off_confines_nothing_and_says_so() -> None:
    choice = choose("off")
    assert (choice.mechanism.name, choice.mechanism.confines, choice.problems) == ("off", False, ())
    assert any("no sandbox" in line for line in choice.mechanism.describe())


def test_auto_prefers_bwrap_then_landlock() -> None:
    choice = choose("auto")
    usable_here = [name for name in ("bwrap", "landlock") if choose(name).mechanism.name == name]
    assert choice.mechanism.name == (usable_here[0] if usable_here else "off")
    assert choice.wanted == "auto"


@pytest.mark.parametrize("name", CONFINING)
def test_each_mechanism_describes_its_guarantees_and_gaps(name: str) -> None:
    lines = mechanism(name).describe()
    assert any("no network" in line for line in lines)
    assert all(isinstance(line, str) and line for line in lines)
    assert any(line.startswith("gap:") for line in lines)


def test_limits_must_be_positive() -> None:
    for bad in (0, -1, True, "5"):
        with pytest.raises(ValueError, match="memory_mb"):
            Limits(memory_mb=bad)


@pytest.mark.parametrize("name", CONFINING)
def test_a_missing_workspace_or_a_cwd_outside_is_refused(dirs, name: str, tmp_path: Path) -> None:
    policy = SandboxPolicy(workspace=str(tmp_path / "gone"), temp_dir=str(dirs[1]))
    with pytest.raises(SandboxError, match="not an existing directory"):
        mechanism(name).prepare(["true"], env={}, cwd=str(dirs[0]), policy=policy)
    policy = SandboxPolicy(workspace=str(dirs[0]), temp_dir=str(dirs[1]))
    with pytest.raises(SandboxError, match="outside the workspace"):
        mechanism(name).prepare(["true"], env={}, cwd=str(tmp_path), policy=policy)


# --- protected folders (clawbot's state, the home folder) -----------------------------


@pytest.fixture
def state_in_workspace(dirs) -> SandboxPolicy:
    ws, temp = dirs
    (ws / "notes.txt").write_text("mine\n")
    (ws / ".clawbot" / "credentials").mkdir(parents=True)
    (ws / ".clawbot" / "credentials" / "openai.json").write_text("sk-canary-in-state")
    return SandboxPolicy(workspace=str(ws), temp_dir=str(temp), protected=(str(ws / ".clawbot"),))


def test_landlock_refuses_a_workspace_that_contains_the_state_dir(state_in_workspace: SandboxPolicy) -> None:
    with pytest.raises(SandboxError, match="contains the protected folder .*clawbot"):
        mechanism("landlock").prepare(["true"], env={}, cwd=state_in_workspace.workspace, policy=state_in_workspace)


def test_bwrap_masks_the_state_dir_inside_the_workspace(state_in_workspace: SandboxPolicy) -> None:
    done = run_sandboxed("bwrap", "cat notes.txt; ls -A .clawbot | wc -l; cat .clawbot/credentials/openai.json; echo x > .clawbot/planted", state_in_workspace)
    assert done.stdout.startswith("mine\n0\n"), done.stdout
    assert "sk-canary" not in done.stdout
    assert not (Path(state_in_workspace.workspace) / ".clawbot" / "planted").exists()


def test_bwrap_masks_the_home_inside_a_read_only_tree_but_keeps_what_is_opened_inside_it(dirs, tmp_path: Path) -> None:
    home = tmp_path / "users" / "me"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("key-canary")
    (home / ".config" / "tool").mkdir(parents=True)
    (home / ".config" / "tool" / "rc").write_text("setting\n")
    policy = SandboxPolicy(
        workspace=str(dirs[0]), temp_dir=str(dirs[1]), read_only=(str(tmp_path / "users"), str(home / ".config" / "tool")), protected=(str(home),)
    )
    done = run_sandboxed("bwrap", f"cat {home}/.ssh/id_rsa; cat {home}/.config/tool/rc", policy)
    assert "key-canary" not in done.stdout
    assert "setting\n" in done.stdout


@pytest.mark.parametrize("name", CONFINING)
def test_a_workspace_that_is_the_home_folder_is_refused(dirs, name: str) -> None:
    policy = SandboxPolicy(workspace=str(dirs[0]), temp_dir=str(dirs[1]), protected=(str(dirs[0]),))
    with pytest.raises(SandboxError, match="is a protected folder"):
        mechanism(name).prepare(["true"], env={}, cwd=str(dirs[0]), policy=policy)


@pytest.mark.parametrize("name", CONFINING)
def test_a_workspace_inside_the_home_folder_is_fine(dirs, name: str) -> None:
    policy = SandboxPolicy(workspace=str(dirs[0]), temp_dir=str(dirs[1]), protected=(str(dirs[0].parent),))
    assert run_sandboxed(name, "echo ok > f && cat f", policy).stdout == "ok\n"


# --- no user namespaces: Landlock without them, and nothing runs unconfined by accident ------

NO_USERNS_SCRIPT = """
import json, subprocess, tempfile, os
from clawbot_tools.runtime.sandbox import SandboxPolicy, choose
from clawbot_tools.runtime.sandbox.landlock import LandlockMechanism
import landlockpy
report = {}
for name in ("auto", "bwrap", "landlock"):
    choice = choose(name)
    report[name] = [choice.mechanism.name, getattr(choice.mechanism, "namespaces", None), list(choice.problems)]
ws = tempfile.mkdtemp()
launch = LandlockMechanism(landlockpy.abi_version()).prepare(
    ["/bin/sh", "-c", "echo ran > ran.txt"], env={"PATH": "/usr/bin:/bin"}, cwd=ws,
    policy=SandboxPolicy(workspace=ws, temp_dir=tempfile.mkdtemp()),
)
try:
    subprocess.run(launch.argv, env=launch.env, cwd=launch.cwd, preexec_fn=launch.preexec_fn, start_new_session=True)
    report["popen"] = "started"
except subprocess.SubprocessError:
    report["popen"] = "refused: " + str(launch.explain())
launch.close()
report["ran"] = os.path.exists(os.path.join(ws, "ran.txt"))
print(json.dumps(report))
"""


def test_without_user_namespaces_landlock_runs_without_them_and_a_namespaced_launch_fails_closed(dirs) -> None:
    """Run the probes inside bwrap, where creating user namespaces is disabled (as on
    hardened distributions and in most containers)."""
    usable("bwrap")
    trees = {os.path.realpath(path) for path in (sys.base_prefix, sys.prefix, REPO)}
    policy = SandboxPolicy(workspace=str(dirs[0]), temp_dir=str(dirs[1]), read_only=tuple(trees))
    done = run_sandboxed("bwrap", f"{sys.executable} -c '{NO_USERNS_SCRIPT}'", policy, env={"PATH": PATH}, timeout=60)
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["auto"][:2] == ["landlock", False] and report["auto"][2][0].startswith("bwrap:"), report
    assert report["bwrap"][0] == "off" and report["bwrap"][2][0].startswith("bwrap:"), report
    assert report["landlock"] == ["landlock", False, []], report
    assert report["popen"].startswith("refused: unshare(user, ipc, net namespaces)"), report
    assert report["ran"] is False


def test_landlock_without_namespaces_says_how_it_keeps_the_network_out() -> None:
    lines = " ".join(mechanism(WITHOUT_NAMESPACES).describe())
    assert "without user namespaces" in lines and "seccomp filter refuses every socket but Unix ones" in lines
    assert "no capabilities, also for root" in lines


def test_settings_are_the_four_documented_ones() -> None:
    assert SETTINGS == ("auto", "bwrap", "landlock", "off")
    for setting in SETTINGS:
        assert choose(setting).wanted == setting


def test_choose_probes_once_per_process() -> None:
    script = (
        "import time; from clawbot_tools.runtime.sandbox import choose\n"
        "t = time.perf_counter(); choose('auto'); first = time.perf_counter() - t\n"
        "t = time.perf_counter(); [choose('auto') for _ in range(100)]; again = (time.perf_counter() - t) / 100\n"
        "print(first > again * 10)\n"
    )
    assert subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout == "True\n"
