"""A protected folder inside a system tree that is a link (/opt -> /data/opt) stays hidden
under bwrap, whichever name the command uses.

Models a service account whose home is /opt/clawbot on a host where /opt links to a bigger
disk (``ln -s /data/opt /opt``); the extra system tree stands in for /opt so the host's /opt
is left alone."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from clawbot_tools.runtime.sandbox import SandboxPolicy, paths

from .sandbox_variants import find

CANARY = "STATE-CREDENTIAL-CANARY-1618"


def test_a_protected_folder_inside_a_symlinked_system_tree_stays_hidden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mechanism = find("bwrap")[0]
    if mechanism is None:
        pytest.skip("bwrap not usable")
    real_opt = tmp_path / "data" / "opt"
    opt = tmp_path / "opt"  # stands in for /opt
    opt.symlink_to(real_opt)  # absolute target, like ln -s /data/opt /opt
    home = opt / "clawbot"
    (real_opt / "clawbot" / ".clawbot" / "credentials").mkdir(parents=True)
    (real_opt / "clawbot" / ".clawbot" / "credentials" / "openai.json").write_text(CANARY)
    (real_opt / "clawbot" / "workspace").mkdir()
    temp = tmp_path / "exec-tmp"
    temp.mkdir(mode=0o700)
    monkeypatch.setattr(paths, "SYSTEM_TREES", (*paths.SYSTEM_TREES, str(opt)))
    policy = SandboxPolicy(workspace=str(home / "workspace"), temp_dir=str(temp), protected=[str(home / ".clawbot"), str(home)])
    line = f"cat {home}/.clawbot/credentials/openai.json {real_opt}/clawbot/.clawbot/credentials/openai.json; ls {home}"
    launch = mechanism.prepare(["/bin/sh", "-c", line], env={"PATH": "/usr/bin:/bin"}, cwd=policy.workspace, policy=policy)
    try:
        done = subprocess.run(
            launch.argv,
            env=launch.env,
            cwd=launch.cwd,
            preexec_fn=launch.preexec_fn,
            pass_fds=launch.pass_fds,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
        )
    finally:
        launch.close()
    assert CANARY not in done.stdout, done.stdout + done.stderr
