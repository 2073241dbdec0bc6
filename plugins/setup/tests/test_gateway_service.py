"""``clawbot gateway install|uninstall|status``, against a stand-in ``systemctl``.

The stand-in is a small script first on PATH that records its arguments (it is not clawbot
code: it plays the user's service manager). HOME and XDG_CONFIG_HOME live under tmp_path.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from clawbot.testing.cli import invoke_cli
from clawbot_setup.service_files import launchd_plist, service_spec

FAKE_SYSTEMCTL = """#!/bin/sh
echo "$@" >> "{record}"
{body}
"""


def _env(tmp_path: Path, body: str = "exit 0") -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "systemctl"
    script.write_text(FAKE_SYSTEMCTL.format(record=tmp_path / "calls.txt", body=body))
    script.chmod(0o755)
    return {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "CLAWBOT_HOME": str(tmp_path / "state"),
        "ANTHROPIC_API_KEY": "sk-ant-never-in-the-unit",
    }


def _calls(tmp_path: Path) -> list[str]:
    path = tmp_path / "calls.txt"
    return path.read_text().splitlines() if path.exists() else []


def _invoke(env: dict[str, str], *args: str) -> SimpleNamespace:
    """``clawbot ARGS`` in this process, its output as a terminal shows it (both streams)."""
    done = invoke_cli(*args, home=Path(env["HOME"]), env=env)
    return SimpleNamespace(exit_code=done.returncode, output=done.stdout + done.stderr)


@pytest.fixture(autouse=True)
def _linux(monkeypatch) -> None:
    monkeypatch.setattr("clawbot_setup.service._platform", lambda: "linux")


def test_install_writes_the_unit_and_enables_it(tmp_path: Path) -> None:
    env = _env(tmp_path)
    config = tmp_path / "my clawbot.toml"
    config.write_text("")
    done = _invoke(env, "gateway", "install", "--config", str(config))
    assert done.exit_code == 0, done.output
    unit = (tmp_path / "xdg" / "systemd" / "user" / "clawbot-gateway.service").read_text()
    assert f'ExecStart={Path(sys.executable).absolute()} -m clawbot.cli.main run --config "{config}"' in unit.splitlines()
    assert f"WorkingDirectory={tmp_path / 'state'}" in unit.splitlines()
    assert f"Environment=CLAWBOT_HOME={tmp_path / 'state'}" in unit.splitlines()
    assert "Restart=on-failure" in unit and "RestartSec=5" in unit and "WantedBy=default.target" in unit
    assert "sk-ant" not in unit and "PATH" not in unit.replace("PYTHONUNBUFFERED", "")
    assert _calls(tmp_path) == ["--user daemon-reload", "--user enable --now clawbot-gateway.service"]


def test_install_refuses_a_configuration_an_agent_can_write_and_writes_nothing(tmp_path: Path) -> None:
    env = _env(tmp_path)
    planted = tmp_path / "home" / "clawbot" / "clawbot.toml"  # in the default workspace, ~/clawbot
    planted.parent.mkdir(parents=True)
    planted.write_text('[plugins.tools.exec]\nsandbox = "off"\n')
    done = _invoke(env, "gateway", "install", "--config", str(planted))
    assert done.exit_code == 2
    assert f"{planted}: 1 problem:" in done.output and "refused (named by --config): an agent can write there" in done.output
    assert not (tmp_path / "xdg").exists() and _calls(tmp_path) == []


def test_the_unit_goes_under_home_without_xdg_config_home(tmp_path: Path) -> None:
    env = _env(tmp_path)
    del env["XDG_CONFIG_HOME"]
    env["XDG_CONFIG_HOME"] = ""
    assert _invoke(env, "gateway", "install").exit_code == 0
    assert (tmp_path / "home" / ".config" / "systemd" / "user" / "clawbot-gateway.service").exists()


def test_without_a_user_bus_the_unit_is_written_and_the_user_told_what_to_do(tmp_path: Path) -> None:
    env = _env(tmp_path, body='echo "Failed to connect to bus: No medium found" >&2; exit 1')
    done = _invoke(env, "gateway", "install")
    assert done.exit_code == 1
    assert "systemctl --user is not available here (Failed to connect to bus: No medium found)" in done.output
    assert "loginctl enable-linger" in done.output and "Traceback" not in done.output
    assert (tmp_path / "xdg" / "systemd" / "user" / "clawbot-gateway.service").exists()


def test_uninstall_stops_disables_and_removes_it(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _invoke(env, "gateway", "install")
    done = _invoke(env, "gateway", "uninstall")
    assert done.exit_code == 0 and "Removed" in done.output
    assert not (tmp_path / "xdg" / "systemd" / "user" / "clawbot-gateway.service").exists()
    assert _calls(tmp_path)[2:] == ["--user disable --now clawbot-gateway.service", "--user daemon-reload"]
    assert "No clawbot service is installed" in _invoke(env, "gateway", "uninstall").output


def test_status_shows_the_manager_and_a_running_gateway(tmp_path: Path) -> None:
    env = _env(tmp_path, body="echo active")
    _invoke(env, "gateway", "install")
    done = _invoke(env, "gateway", "status")
    assert "Service manager: active" in done.output and "Gateway: not running" in done.output
    endpoint = tmp_path / "state" / "gateway" / "endpoint.json"
    endpoint.parent.mkdir(parents=True)
    endpoint.write_text(json.dumps({"pid": os.getpid(), "host": "127.0.0.1", "port": 18789}))
    assert f"Gateway: running (pid {os.getpid()}), control API on 127.0.0.1:18789" in _invoke(env, "gateway", "status").output
    endpoint.write_text(json.dumps({"pid": 2**22 + 12345, "host": "127.0.0.1", "port": 18789}))  # a pid nobody has
    assert "Gateway: not running" in _invoke(env, "gateway", "status").output


def test_the_launchd_agent_for_macos(tmp_path: Path) -> None:
    spec = service_spec({"CLAWBOT_HOME": str(tmp_path / "st&ate"), "OPENAI_API_KEY": "sk-x"}, None, tmp_path / "st&ate", python="/opt/py/bin/python3")
    plist = launchd_plist(spec)
    assert "<string>ai.clawbot.gateway</string>" in plist
    assert "<string>/opt/py/bin/python3</string>\n    <string>-m</string>\n    <string>clawbot.cli.main</string>\n    <string>run</string>" in plist
    assert f"<key>CLAWBOT_HOME</key>\n    <string>{tmp_path}/st&amp;ate</string>" in plist
    assert "<key>RunAtLoad</key>\n  <true/>" in plist and "<key>SuccessfulExit</key>\n    <false/>" in plist
    assert "sk-x" not in plist
    import plistlib

    assert plistlib.loads(plist.encode())["ProgramArguments"][-1] == "run"
