"""The user service that runs ``clawbot run``: a systemd user unit (Linux) or a launchd
agent (macOS), written as text here so both can be checked on any platform.

The service runs the interpreter clawbot is installed in (``python -m clawbot.cli.main
run``), so it keeps working whatever PATH the service manager gives it. Only the state dir
(``CLAWBOT_HOME``) and the configuration file go into the unit: keys stay in clawbot.toml
or the environment file clawbot reads, never in a file the service manager shows.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from xml.sax.saxutils import escape

import attrs
from clawbot.paths import CONFIG_ENV, HOME_ENV

UNIT_NAME = "clawbot-gateway.service"
LAUNCHD_LABEL = "ai.clawbot.gateway"
RESTART_SEC = 5


@attrs.frozen
class ServiceSpec:
    program: tuple[str, ...]
    working_dir: Path
    env: dict[str, str]
    log_path: Path


def service_spec(env: Mapping[str, str], config_path: str | None, state_root: Path, *, python: str | None = None) -> ServiceSpec:
    """What the service runs: this interpreter, ``--config`` made absolute when given, and
    ``CLAWBOT_HOME`` / ``CLAWBOT_CONFIG`` when they are set (nothing else of the environment)."""
    program = [str(Path(python or sys.executable).absolute()), "-m", "clawbot.cli.main", "run"]
    if config_path:
        program += ["--config", str(Path(config_path).expanduser().absolute())]
    kept = {name: env[name] for name in (HOME_ENV, CONFIG_ENV) if env.get(name)}
    if HOME_ENV in kept:
        kept[HOME_ENV] = str(Path(kept[HOME_ENV]).expanduser().absolute())
    return ServiceSpec(tuple(program), state_root, kept, state_root / "logs" / "gateway.log")


def systemd_unit_path(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "systemd" / "user" / UNIT_NAME


def launchd_plist_path(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home()) / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"


def _systemd_quote(word: str) -> str:
    # systemd splits ExecStart like a shell would, and expands % specifiers
    quoted = word.replace("%", "%%")
    return quoted if shlex.quote(quoted) == quoted else '"' + quoted.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_unit(spec: ServiceSpec) -> str:
    lines = [
        "[Unit]",
        "Description=clawbot gateway (your AI agent on your chat channels)",
        "After=network-online.target",
        "Wants=network-online.target",
        "",
        "[Service]",
        "Type=simple",
        "ExecStart=" + " ".join(_systemd_quote(w) for w in spec.program),
        f"WorkingDirectory={_systemd_quote(str(spec.working_dir))}",
    ]
    lines += [f"Environment={_systemd_quote(f'{k}={v}')}" for k, v in sorted(spec.env.items())]
    lines += [
        "Environment=PYTHONUNBUFFERED=1",
        "Restart=on-failure",
        f"RestartSec={RESTART_SEC}",
        # the gateway finishes or records its turns on SIGTERM; give it that time
        "TimeoutStopSec=30",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ]
    return "\n".join(lines)


def launchd_plist(spec: ServiceSpec) -> str:
    def string(value: str) -> str:
        return f"<string>{escape(value)}</string>"

    args = "\n".join(f"    {string(w)}" for w in spec.program)
    env = "\n".join(f"    <key>{escape(k)}</key>\n    {string(v)}" for k, v in sorted({**spec.env, "PYTHONUNBUFFERED": "1"}.items()))
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  {string(LAUNCHD_LABEL)}
  <key>ProgramArguments</key>
  <array>
{args}
  </array>
  <key>WorkingDirectory</key>
  {string(str(spec.working_dir))}
  <key>EnvironmentVariables</key>
  <dict>
{env}
  </dict>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>ThrottleInterval</key>
  <integer>{RESTART_SEC}</integer>
  <key>StandardOutPath</key>
  {string(str(spec.log_path.with_name("gateway.stdout.log")))}
  <key>StandardErrorPath</key>
  {string(str(spec.log_path.with_name("gateway.stderr.log")))}
</dict>
</plist>
"""


def write_service_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (0644: the service manager reads it; it holds no secret)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
