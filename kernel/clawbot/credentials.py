"""Stored model-provider credentials: ``<state>/credentials/<provider>.json``.

Each file holds ``{"api_key": "...", "base_url": "..."}`` (``base_url`` optional), is
mode 0600 in a 0700 directory, and is written atomically. Like ssh, a file that group or
others may read is refused (:class:`CredentialsError`, a :class:`~clawbot.config.ConfigError`
so the CLI reports it in one message with exit code 2). Keys are never logged or shown.

Providers already read their keys from the ``env`` they are given, so
:func:`credential_env` turns the stored files into those environment variables and
:func:`clawbot.boot.load` merges them under the real environment (a real variable wins).
The kernel knows no provider in general: the small table :data:`ENV_NAMES` below is the only
place provider names appear (a later refactor could let providers declare their variable
names through a hook).
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import attrs

from clawbot.config.problems import ConfigError, ConfigProblem
from clawbot.paths import StatePaths
from clawbot.statefile import atomic_write_json, make_private_dir, report_once

_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


@attrs.frozen
class EnvNames:
    """The environment variables a provider reads its key and base URL from."""

    api_key: str
    base_url: str | None = None
    key_required: bool = True  # False: the provider works without a key (a local server)
    ask_base_url: bool = False  # onboarding asks for a base URL (OpenAI-compatible servers)


#: provider name -> the environment variables its plugin reads for key and base URL.
ENV_NAMES: dict[str, EnvNames] = {
    "anthropic": EnvNames("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    "openai": EnvNames("OPENAI_API_KEY", "OPENAI_BASE_URL", ask_base_url=True),
    "ollama": EnvNames("OLLAMA_API_KEY", "OLLAMA_BASE_URL", key_required=False, ask_base_url=True),
}


class CredentialsError(ConfigError):
    """A credential file that is unsafe or unreadable; the message names the file and the fix."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(str(path), [ConfigProblem("", message)])


class MalformedCredential(CredentialsError):
    """A credential file whose content is unusable (not JSON, fields of the wrong type)."""


@attrs.frozen
class Credential:
    provider: str
    api_key: str = attrs.field(default="", repr=False)  # never shown
    base_url: str = ""


def credential_file(paths: StatePaths, provider: str) -> Path:
    if not _NAME.match(provider):
        raise ValueError(f"not a provider name: {provider!r}")
    return paths.credentials / f"{provider}.json"


def save_credential(paths: StatePaths, provider: str, api_key: str | None = None, base_url: str | None = None) -> Path:
    """Store the key and base URL of ``provider``; returns the file.

    A field left ``None`` keeps what is stored (a new key for a proxy keeps the proxy's base
    URL); ``""`` clears it on purpose.
    """
    target = credential_file(paths, provider)
    directory = target.parent
    make_private_dir(directory)  # the state dir too, when this creates it: 0700 all the way
    if os.name == "posix":
        os.chmod(directory, 0o700)
    stored = stored_credential(paths, provider)
    key = stored.api_key if api_key is None else api_key
    url = stored.base_url if base_url is None else base_url
    data: dict[str, str] = {"api_key": key}
    if url:
        data["base_url"] = url
    # durable: a key the user just typed is not derived data that can be rebuilt
    atomic_write_json(target, data, 0o600, durable=True, readable=True)
    return target


def stored_credential(paths: StatePaths, provider: str) -> Credential:
    """What is stored for ``provider``: empty fields when nothing is, or the file is unusable
    (it is then replaced by the next save)."""
    path = credential_file(paths, provider)
    if not path.is_file():
        return Credential(provider)
    try:
        return load_credential(path)
    except CredentialsError:
        return Credential(provider)


def _check_mode(path: Path) -> None:
    if os.name != "posix":
        return
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise CredentialsError(
            path,
            f"credential file is readable or writable by other users (mode {mode:04o}), so clawbot refuses to use it; fix: chmod 600 {path}",
        )


def load_credential(path: Path) -> Credential:
    """One stored file; :class:`CredentialsError` when it is unsafe or malformed."""
    _check_mode(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CredentialsError(path, f"cannot read credential file: {exc.strerror}") from None
    except ValueError:
        raise MalformedCredential(path, "credential file is not valid JSON; run `clawbot onboard` again") from None
    if not isinstance(data, dict):
        raise MalformedCredential(path, "credential file must hold a JSON object; run `clawbot onboard` again")
    api_key, base_url = data.get("api_key", ""), data.get("base_url", "")
    if not isinstance(api_key, str) or not isinstance(base_url, str):
        raise MalformedCredential(path, "api_key and base_url must be strings; run `clawbot onboard` again")
    return Credential(path.stem, api_key, base_url)


def load_credentials(paths: StatePaths) -> dict[str, Credential]:
    """Every stored credential by provider name (none when the directory does not exist); a
    malformed file is reported once and left out."""
    directory = paths.credentials
    if not directory.is_dir():
        return {}
    found: dict[str, Credential] = {}
    for path in sorted(directory.glob("*.json")):
        if not _NAME.match(path.stem):
            continue
        try:
            found[path.stem] = load_credential(path)
        except MalformedCredential as exc:
            # one broken file must not stop every other provider (an unsafe mode still does)
            report_once(path, f"{exc.problems[0].message} (ignored: that provider has no stored key)")
    return found


def credential_env(paths: StatePaths) -> dict[str, str]:
    """The stored credentials as the environment variables the providers read.

    Stored credentials of providers missing from :data:`ENV_NAMES` are left out.
    """
    env: dict[str, str] = {}
    for provider, credential in load_credentials(paths).items():
        names = ENV_NAMES.get(provider)
        if names is None:
            continue
        if credential.api_key:
            env[names.api_key] = credential.api_key
        if credential.base_url and names.base_url:
            env[names.base_url] = credential.base_url
    return env


__all__ = [
    "ENV_NAMES",
    "Credential",
    "CredentialsError",
    "EnvNames",
    "MalformedCredential",
    "credential_env",
    "credential_file",
    "load_credential",
    "load_credentials",
    "save_credential",
    "stored_credential",
]
