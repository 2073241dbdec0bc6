"""The environment a command gets: an allow-list of clawbot's own, plus what the model may add.

clawbot's environment holds the API keys it loaded, and the user's shell hands it more
(``MYSQL_PWD``, ``SSHPASS``, ``OP_SESSION_*``, an ``SSH_AUTH_SOCK`` ...). Guessing which
names are secret always misses one, so a child gets only the names it needs to work:
:data:`INHERITED` (``PATH``, ``HOME``, the locale, the terminal ...) plus the names the user
lists in ``env_passthrough``. The model may set only :data:`SETTABLE` names (formatting and
locale variables that change no program and inject no code) plus the user's ``env_allow``;
names that name files (``LANG``, ``LC_*``, ``TZ``, ``TERM``) only with a value without
``/``. The same rule judges ``NAME=value cmd`` written in a command line.

Values of secret-looking variables are still masked in anything shown back
(:func:`redact`): a command can print a key it found in a file.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

# What every command inherits from clawbot's environment (and LC_*).
INHERITED = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TERM",
        "TZ",
        "COLUMNS",
        "LINES",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
    }
)
# What the model may set for a command (and LC_*), besides the user's env_allow.
SETTABLE = frozenset(
    {
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "COLUMNS",
        "LINES",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "CI",
    }
)
# Settable only with a value without "/": the value names a file (a locale, a zone, a terminfo entry).
NAMES_A_FILE = frozenset({"LANG", "LANGUAGE", "TZ", "TERM"})
SETTABLE_SHOWN = ("LANG", "LC_*", "TZ", *sorted(SETTABLE - {"LANG", "TZ"}))

# Name patterns (case-insensitive) of variables whose values are masked in output.
SECRET_PATTERNS = (
    "*_API_KEY",
    "*_APIKEY",
    "*API_KEY*",
    "*_KEY",
    "*_KEY_*",
    "*_TOKEN",
    "*_TOKEN_*",
    "*TOKEN",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*_PASS",
    "*PASSPHRASE*",
    "*CREDENTIAL*",
    "*_PAT",
    "*_PWD",
    "*_AUTH",
    "*_AUTH_*",
    "*PRIVATE_KEY*",
    "*_DSN",
    "*_COOKIE*",
    "*_SESSION",
    "*_SESSION_*",
    "SSHPASS",
    "AWS_*",
    "AZURE_*",
    "GOOGLE_*",
    "GCP_*",
    "OPENAI_*",
    "ANTHROPIC_*",
    "OPENROUTER_*",
    "GEMINI_*",
    "HF_*",
    "HUGGING_FACE_*",
    "GITHUB_*",
    "GH_*",
    "GITLAB_*",
    "NPM_*",
    "PYPI_*",
    "TWINE_*",
    "DATABASE_URL",
    "REDIS_URL",
    "MONGODB_URI",
)
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")  # ASCII; \Z: "$" would accept a trailing newline
LOCALE_NAME = re.compile(r"LC_[A-Z_]+\Z")
MIN_REDACTED_LENGTH = 6
REDACTED = "[redacted]"


class EnvRefused(Exception):
    """The model's ``env`` argument cannot be used; ``str(exc)`` says why."""


def _locale(name: str) -> bool:
    return bool(LOCALE_NAME.match(name))


def settable(name: str, value: str | None, allowed: Iterable[str] = ()) -> bool:
    """Whether a command may get ``name`` set to ``value`` (``None``: not known) without asking."""
    if name in allowed:
        return value is None or "\x00" not in value
    if name not in SETTABLE and not _locale(name):
        return False
    if name in NAMES_A_FILE or _locale(name):
        return value is not None and "/" not in value  # a value with "/" is a path: it is loaded from there
    return True


def looks_secret(name: str) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in SECRET_PATTERNS)


def extra_env(raw: Any, allowed: Iterable[str] = ()) -> dict[str, str]:
    """The model's ``env`` argument, checked against :func:`settable`."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise EnvRefused("env must be an object of NAME: value strings")
    allowed = frozenset(allowed)
    checked: dict[str, str] = {}
    refused: list[str] = []
    for name, value in raw.items():
        if not isinstance(name, str) or not NAME.match(name):
            raise EnvRefused(f"env name {name!r} is not a valid variable name")
        if not isinstance(value, str) or "\x00" in value:
            raise EnvRefused(f"env value of {name} must be a string without NUL bytes")
        if not settable(name, value, allowed):
            refused.append(name)
        checked[name] = value
    if refused:
        extra = f", and what the user allows in [plugins.tools.exec] env_allow ({', '.join(sorted(allowed))})" if allowed else ""
        raise EnvRefused(
            f"env may not set {', '.join(sorted(refused))}: a command may be given only {', '.join(SETTABLE_SHOWN)}"
            f"{extra} (LANG, LC_*, TZ and TERM without '/'). Pass other values as arguments, or ask the user to add "
            "the name to env_allow."
        )
    return checked


def child_env(base: Mapping[str, str], passthrough: Iterable[str], extra: Mapping[str, str]) -> dict[str, str]:
    """The :data:`INHERITED` names of ``base`` (and ``LC_*``), the user's ``passthrough``
    names (exact, or patterns such as ``JAVA_*``), then ``extra`` on top."""
    patterns = [p for p in passthrough if p.strip()]
    env = {name: value for name, value in base.items() if name in INHERITED or _locale(name) or any(fnmatch.fnmatchcase(name, p) for p in patterns)}
    env.setdefault("PATH", os.defpath)
    env.update(extra)
    return env


def secret_values(base: Mapping[str, str]) -> tuple[str, ...]:
    """Values to mask in output: every secret-looking variable's value (longest first)."""
    values = {value for name, value in base.items() if looks_secret(name) and len(value) >= MIN_REDACTED_LENGTH}
    return tuple(sorted(values, key=len, reverse=True))


def redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text
