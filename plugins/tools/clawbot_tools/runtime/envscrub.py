"""The environment a command gets: clawbot's own minus its secrets, plus what the model adds.

clawbot's environment holds the API keys it loaded; a command the model runs must not see
them (``env``, ``printenv`` or a crash dump would hand them to the model). Variables whose
names look secret are dropped unless the user lists them in ``env_passthrough``, and so are
``CDPATH`` (it would make ``cd`` go elsewhere than the gate assumes), ``POSIXLY_CORRECT``
and ``GLOBIGNORE`` (they change how options are parsed and what globs match). The model
may add variables, but none that change which program runs or what a shell executes at
start-up (``PATH``, ``LD_PRELOAD``, ``BASH_ENV`` ...): those would bypass the allowlist.
Values of secret variables are also masked in anything shown back (:func:`redact`).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

# Names the model may not set: they decide which program runs or inject code into one.
DANGEROUS_NAMES = frozenset({
    "PATH", "EXECIGNORE", "BASH_ENV", "ENV", "IFS", "CDPATH", "PS4", "SHELLOPTS", "BASHOPTS", "PROMPT_COMMAND",
    "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONINSPECT", "PERL5OPT", "PERL5LIB", "PERLLIB",
    "RUBYOPT", "RUBYLIB", "NODE_OPTIONS", "NODE_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXEC_PATH",
    "GIT_ASKPASS", "SSH_ASKPASS", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT", "GCONV_PATH", "LOCPATH", "HOSTALIASES", "RESOLV_HOST_CONF", "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS", "EDITOR", "VISUAL", "PAGER", "GIT_PAGER", "LESSOPEN", "LESSCLOSE", "BROWSER", "SHELL",
    # where programs read their configuration (a .gitconfig can name programs to run)
    "HOME", "XDG_CONFIG_HOME", "GIT_DIR", "GIT_WORK_TREE", "GIT_TEMPLATE_DIR", "GNUPGHOME", "ZDOTDIR",
    # how the safe bins parse their options or which files the shell's globs match
    "POSIXLY_CORRECT", "GREP_OPTIONS", "GLOBIGNORE",
})
# Inherited variables dropped: CDPATH makes "cd sub" go elsewhere than the gate's analysis
# follows it (see clawbot_tools.runtime.shell_analysis); POSIXLY_CORRECT changes how the
# safe bins parse options ("head a.txt -n FILE"); GLOBIGNORE makes bash's globs match dot files.
NOT_INHERITED = frozenset({"CDPATH", "POSIXLY_CORRECT", "GLOBIGNORE"})
DANGEROUS_PREFIXES = ("LD_", "DYLD_", "BASH_FUNC_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "MALLOC_")

# Name patterns (case-insensitive) of variables treated as secrets.
SECRET_PATTERNS = (
    "*_API_KEY", "*_APIKEY", "*API_KEY*", "*_KEY", "*_KEY_*", "*_TOKEN", "*_TOKEN_*", "*TOKEN",
    "*SECRET*", "*PASSWORD*", "*PASSWD*", "*_PASS", "*PASSPHRASE*", "*CREDENTIAL*", "*_PAT",
    "*_AUTH", "*_AUTH_*", "*PRIVATE_KEY*", "*_DSN", "*_COOKIE*", "*_SESSION",
    "AWS_*", "AZURE_*", "GOOGLE_*", "GCP_*", "OPENAI_*", "ANTHROPIC_*", "OPENROUTER_*", "GEMINI_*",
    "HF_*", "HUGGING_FACE_*", "GITHUB_*", "GH_*", "GITLAB_*", "NPM_*", "PYPI_*", "TWINE_*",
    "DATABASE_URL", "REDIS_URL", "MONGODB_URI",
)
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")  # ASCII; \Z: "$" would accept a trailing newline
MIN_REDACTED_LENGTH = 6
REDACTED = "[redacted]"


class EnvRefused(Exception):
    """The model's ``env`` argument cannot be used; ``str(exc)`` says why."""


def is_dangerous(name: str) -> bool:
    upper = name.upper()
    return upper in DANGEROUS_NAMES or upper.startswith(DANGEROUS_PREFIXES)


def looks_secret(name: str) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in SECRET_PATTERNS)


def extra_env(raw: Any) -> dict[str, str]:
    """The model's ``env`` argument, checked."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise EnvRefused("env must be an object of NAME: value strings")
    checked: dict[str, str] = {}
    refused: list[str] = []
    for name, value in raw.items():
        if not isinstance(name, str) or not NAME.match(name):
            raise EnvRefused(f"env name {name!r} is not a valid variable name")
        if not isinstance(value, str) or "\x00" in value:
            raise EnvRefused(f"env value of {name} must be a string without NUL bytes")
        if is_dangerous(name):
            refused.append(name)
        checked[name] = value
    if refused:
        raise EnvRefused(
            f"env may not set {', '.join(sorted(refused))}: these change which program runs or inject code "
            "into it (PATH, LD_*, DYLD_*, BASH_ENV, ENV, IFS, PYTHONSTARTUP, GIT_SSH_COMMAND ...). "
            "Call the program by its full path instead, or ask the user to change the environment."
        )
    return checked


def child_env(base: Mapping[str, str], passthrough: Iterable[str], extra: Mapping[str, str]) -> dict[str, str]:
    """``base`` without secret-looking names (unless passed through) and without
    :data:`NOT_INHERITED`, then ``extra`` on top."""
    allowed = {name.upper() for name in passthrough}
    env = {
        name: value for name, value in base.items()
        if name not in NOT_INHERITED and (name.upper() in allowed or not looks_secret(name))
    }
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
