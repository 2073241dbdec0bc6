"""The ``[plugins.tools.exec]`` table: how ``exec`` decides, and the limits it runs under.

Kept free of other ``clawbot_tools`` imports: ``clawbot_tools.config`` imports it.
"""

from __future__ import annotations

from typing import Literal

import attrs
from clawbot.types import AGENT_WRITABLE, InRange

# Read-only utilities that only print (to stdout) what they read: they count as allowed in
# ``allowlist`` mode. No interpreter, no file writer, nothing that runs another program
# (no find, xargs, env, awk, sed -i), and no cat (kept out so reading a file stays an
# explicit choice of the allowlist). Each runs unasked only with the options
# clawbot_tools.runtime.safe_bins knows to be read-only (``sort -o``, ``sort
# --compress-program``, ``uniq IN OUT``, ``date -s`` ask) and only on files inside the workspace.
DEFAULT_SAFE_BINS = (
    "echo",
    "printf",
    "pwd",
    "ls",
    "wc",
    "head",
    "tail",
    "sort",
    "uniq",
    "cut",
    "tr",
    "grep",
    "date",
    "true",
    "false",
    "basename",
    "dirname",
    "which",
)


def _names(instance: object, attribute: attrs.Attribute, value: list[str]) -> None:
    for item in value:
        if not item.strip():
            raise ValueError(f"{attribute.name} must not contain empty entries")


@attrs.frozen(kw_only=True)
class ExecSettings:
    # deny: exec refuses everything; allowlist: known executables run, others ask the user;
    # full: everything runs. Destructive patterns and sudo ask in every mode.
    security: Literal["deny", "allowlist", "full"] = "allowlist"
    # The OS sandbox every command runs in: auto picks the strongest usable one (bwrap where
    # user namespaces work, else landlock (with or without namespaces); none on macOS and Windows yet); off runs commands
    # unconfined, and the gate then asks before any command reads or writes a file by name.
    sandbox: Literal["auto", "landlock", "bwrap", "off"] = "auto"
    # Extra paths commands may read (and run) inside the sandbox, e.g. "~/.gitconfig", "~/.pyenv".
    sandbox_read: list[str] = attrs.field(factory=list, validator=_names)
    # Extra paths commands may write inside the sandbox (the workspace and a private temp dir always).
    # clawbot never reads its configuration from below them.
    sandbox_write: list[str] = attrs.field(factory=list, validator=_names, metadata={AGENT_WRITABLE: True})
    # Memory (MB, RLIMIT_DATA) each process of a command may use; more fails inside the command.
    memory_limit_mb: int = attrs.field(default=2048, validator=InRange(64, 1_048_576))
    # Processes and threads of the user a command may bring about (RLIMIT_NPROC; root is exempt).
    process_limit: int = attrs.field(default=4096, validator=InRange(64, 4_194_304))
    # The largest file (MB) a command may write.
    file_size_limit_mb: int = attrs.field(default=8192, validator=InRange(1, 1_048_576))
    # Command names (resolved on PATH), absolute paths or path globs ("/usr/bin/*", "~/bin/tool").
    allowlist: list[str] = attrs.field(factory=list, validator=_names)
    # Read-only stdout utilities that count as allowed in allowlist mode.
    safe_bins: list[str] = attrs.field(factory=lambda: list(DEFAULT_SAFE_BINS), validator=_names)
    # Variables of clawbot's environment that commands see besides PATH, HOME, USER, LOGNAME,
    # SHELL, LANG, LC_*, LANGUAGE, TERM, TZ and the colour/size ones (names or patterns: "JAVA_*").
    env_passthrough: list[str] = attrs.field(factory=list, validator=_names)
    # Variables the model may set for a command besides the locale, TZ, TERM, COLUMNS, LINES,
    # colour switches, CI and PYTHONUNBUFFERED-style ones.
    env_allow: list[str] = attrs.field(factory=list, validator=_names)
    # Milliseconds a command runs in the foreground before it continues in the background.
    yield_ms: int = attrs.field(default=10_000, validator=InRange(0, 3_600_000))
    # Seconds a command may run in total (the model may ask for less, or more up to max_timeout_s).
    timeout_s: int = attrs.field(default=1800, validator=InRange(1, 604_800))
    # The longest timeout the model may ask for, in seconds.
    max_timeout_s: int = attrs.field(default=7200, validator=InRange(1, 604_800))
    # Characters of output put in one tool result (the rest is cut in the middle).
    max_output_chars: int = attrs.field(default=30_000, validator=InRange(1000, 10_000_000))
    # Seconds an approval request waits for /approve before it expires.
    approval_expiry_s: int = attrs.field(default=1800, validator=InRange(10, 604_800))
    # Tell the model (a system event) when a command that went to the background finishes.
    notify_on_exit: bool = True
    # Commands one session may have running at once (background ones included); one more
    # is refused until one finishes or is killed with the process tool.
    max_processes: int = attrs.field(default=8, validator=InRange(1, 1000))
