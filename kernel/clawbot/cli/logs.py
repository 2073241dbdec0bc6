"""Logging for CLI commands: warnings to stderr, tracebacks to a log file; hook tracing when asked for.

On the terminal an error is one line (what failed, the exception's type and first line, and
where the details are); its traceback goes to ``<state dir>/logs/clawbot.log`` (the
gateway, ``clawbot run``, writes ``gateway.log`` beside it; rotated at ``logging.file_max_bytes``,
``logging.file_backups`` old files kept), or to the terminal too with ``--verbose``. A
record marked ``extra=FILE_ONLY`` (:mod:`clawbot.log_marks`: a model call's retries, a
failed turn's traceback, which the user is told about in one line of clawbot's own) stays in
the file. Where the terminal is a chat (``clawbot run``: ``chat_terminal``), no log line
reaches it unless ``--verbose``: the file has them all. The"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from clawbot.cli.output import echo
from clawbot.plugins.tracing import tracing_enabled
from clawbot.safetext import visible
from clawbot.statefile import make_private_dir

TRACE_LOGGER = "clawbot.trace"
LOG_FILE_BYTES = 5_000_000
LOG_FILE_BACKUPS = 5
#: environment variables whose values never appear in a log line
SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
MASK = "***"
#: The most of an exception's message a terminal line shows.
ERROR_LINE_LIMIT = 300


def log_file(state_root: Path, name: str = "clawbot") -> Path:
    """Where ``clawbot agent`` (``clawbot``) and the gateway (``gateway``) keep their log,
    tracebacks included."""
    return state_root / "logs" / f"{name}.log"


def gateway_log_file(state_root: Path) -> Path:
    return log_file(state_root, "gateway")


def secret_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """The values of secret-looking environment variables, longest first (short ones would
    mask ordinary words)."""
    found = {v for k, v in env.items() if k.upper().endswith(SECRET_SUFFIXES) and len(v) >= 8}
    return tuple(sorted(found, key=len, reverse=True))


class VisibleFormatter(logging.Formatter):
    def __init__(self, fmt: str | None = None, *, secrets: tuple[str, ...] = ()) -> None:
        super().__init__(fmt)
        self.secrets = secrets

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return visible(text)


def _one_line(error: BaseException | None) -> str:
    if error is None:
        return ""
    text = " ".join(str(error).split())
    if len(text) > ERROR_LINE_LIMIT:
        text = text[: ERROR_LINE_LIMIT - 1] + "\u2026"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class TerminalFormatter(VisibleFormatter):
    """Log lines as the terminal shows them: an error's traceback becomes one line naming the
    exception and the log file that keeps the whole traceback (all of it with ``verbose``)."""

    def __init__(self, fmt: str, *, verbose: bool = False, details: Path | None = None, secrets: tuple[str, ...] = ()) -> None:
        super().__init__(fmt, secrets=secrets)
        self.verbose = verbose
        self.details = details

    def format(self, record: logging.LogRecord) -> str:
        if self.verbose or not (record.exc_info or record.stack_info):
            return super().format(record)
        saved = record.exc_info, record.exc_text, record.stack_info
        record.exc_info = record.exc_text = record.stack_info = None
        try:
            text = super().format(record)
        finally:
            record.exc_info, record.exc_text, record.stack_info = saved
        error = saved[0][1] if saved[0] else None
        summary = _one_line(error)
        where = f"traceback in {self.details}" if self.details is not None else "--verbose shows the traceback"
        return text + visible(f" ({summary}; {where})" if summary else f" ({where})")


def _not_file_only(record: logging.LogRecord) -> bool:
    return not getattr(record, "file_only", False)


def _is_trace(record: logging.LogRecord) -> bool:
    return record.name == TRACE_LOGGER or record.name.startswith(f"{TRACE_LOGGER}.")


def default_logging() -> None:
    """What Python would print without any set-up (warnings, the bare message), made visible."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(VisibleFormatter("%(message)s"))
        handler.setLevel(logging.WARNING)
        root.addHandler(handler)
    logging.captureWarnings(True)  # warnings.warn text goes through the same handler


class PrivateLogFile(logging.handlers.RotatingFileHandler):
    """A rotating log file only its owner can read: tracebacks quote requests, paths and
    provider answers."""

    def _open(self):  # noqa: ANN202 - the base class's signature
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.fchmod(fd, 0o600)  # a file an older version created with the umask's mode
        return os.fdopen(fd, self.mode, encoding=self.encoding, errors=self.errors)


def _file_handler(path: Path, max_bytes: int, backups: int, secrets: tuple[str, ...]) -> logging.Handler | None:
    try:
        make_private_dir(path.parent)  # the state dir too, on a first run: 0700 all the way
        handler = PrivateLogFile(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
    except OSError as exc:  # a read-only state dir: the terminal still gets every line
        echo(f"clawbot: cannot write the log file {path} ({exc}); logging to the terminal only", err=True)
        return None
    handler.setFormatter(VisibleFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s", secrets=secrets))
    return handler


def configure_logging(
    level: str,
    env: Mapping[str, str],
    *,
    state_root: Path | None = None,
    verbose: bool = False,
    log_name: str = "clawbot",
    max_bytes: int = LOG_FILE_BYTES,
    backups: int = LOG_FILE_BACKUPS,
    chat_terminal: bool = False,
) -> None:
    """clawbot's loggers at ``level``; every other one (plugins log under their own package
    names, libraries under theirs) at warning. All end on the terminal, made visible and
    without tracebacks unless ``verbose`` (never a ``FILE_ONLY`` record unless ``verbose``);
    with ``state_root``, also in its log file ``log_name``, whole, rotated at ``max_bytes``
    with ``backups`` old files kept. ``chat_terminal``: the terminal is a chat, so with a log
    file only ``verbose`` (or hook tracing, its own lines) shows log lines there."""
    handlers: list[logging.Handler] = []
    details = None
    secrets = secret_values(env)
    if state_root is not None:
        file_handler = _file_handler(log_file(state_root, log_name), max_bytes, backups, secrets)
        if file_handler is not None:
            handlers.append(file_handler)
            details = log_file(state_root, log_name)
    everything = verbose or details is None or not chat_terminal
    if everything or tracing_enabled(env):
        terminal = logging.StreamHandler()
        if not verbose:
            terminal.addFilter(_not_file_only)
        if not everything:  # hook tracing was asked for on this terminal: its lines, the rest in the file
            terminal.addFilter(_is_trace)
        terminal.setFormatter(TerminalFormatter("%(levelname)s %(name)s: %(message)s", verbose=verbose, details=details, secrets=secrets))
        handlers.append(terminal)
    root = logging.getLogger()
    for old in root.handlers:
        if old not in handlers:
            old.close()
    root.handlers[:] = handlers
    root.setLevel(logging.WARNING)
    ours = logging.getLogger("clawbot")
    ours.handlers.clear()
    ours.setLevel(level.upper())
    ours.propagate = True
    logging.captureWarnings(True)
    if tracing_enabled(env):
        logging.getLogger(TRACE_LOGGER).setLevel(logging.INFO)
