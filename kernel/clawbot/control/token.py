"""The gateway's token: whoever holds it is the owner.

Created once, at random, in ``<state dir>/gateway/token`` (file 0600, directory 0700), so a
local client (``clawbot agent``, the web chat's user) reads it from there. Compared in
constant time. It never travels in a URL and is never logged.
"""

from __future__ import annotations

import hmac
import secrets
from pathlib import Path

TOKEN_FILE = "token"
DIR_NAME = "gateway"


def gateway_dir(state_root: Path) -> Path:
    return state_root / DIR_NAME


def token_path(state_root: Path) -> Path:
    return gateway_dir(state_root) / TOKEN_FILE


def read_token(state_root: Path) -> str | None:
    """The stored token, or ``None`` when there is none (or it cannot be read)."""
    try:
        text = token_path(state_root).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


def ensure_token(state_root: Path) -> str:
    """The stored token, created on first use."""
    from clawbot.statefile import make_private_dir

    existing = read_token(state_root)
    if existing is not None:
        return existing
    directory = gateway_dir(state_root)
    make_private_dir(directory)
    token = secrets.token_urlsafe(32)
    path = token_path(state_root)
    from clawbot.statefile import atomic_write_text, locked

    # under the lock, and written aside then renamed: two gateways starting at once hand out
    # one token, and a crash mid-write never leaves an empty file that no one can use
    with locked(path):
        existing = read_token(state_root)
        if existing is not None:
            return existing
        atomic_write_text(path, token + "\n")
    return token


def token_matches(expected: str, offered: str | None) -> bool:
    """Constant time: how much of a guess was right must not show in how long it took."""
    if not offered:
        return False
    return hmac.compare_digest(expected.encode("utf-8"), offered.encode("utf-8", "replace"))


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header."""
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None
