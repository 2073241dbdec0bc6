"""Pairing codes: how a stranger's direct messages come to reach the agent, once the owner agrees.

A stranger writing to a channel whose ``dm_policy`` is ``pairing`` gets a one-time code and no
answer from the agent; the owner runs ``clawbot pairing approve <channel> <code>`` and from
then on that sender is let in. One file per channel, ``<state dir>/pairing/<channel>.json``,
holds the pending requests, the approved senders and the recent wrong codes. The running
gateway and the CLI both change it, each under the file's lock (:func:`clawbot.statefile.locked`)
and written atomically; the gateway re-reads it when it changed on disk, so an approval
counts at once, without a restart.

* Codes: 8 characters from an alphabet without look-alikes (no 0/O, 1/I), valid for an hour.
  At most 3 wait per channel account; a fourth stranger gets nothing until one is answered
  or expires. The same stranger asking again gets the same code.
* Replies to a stranger: the code when the request is made, and again at most every
  :data:`REPLY_EVERY_S` however many messages they send, so spamming the bot does not make
  it spam back.
* Wrong codes: at most :data:`MAX_WRONG_CODES` per channel in :data:`WRONG_CODE_WINDOW_S`;
  past that, every approval on the channel (even with the right code) is refused until the
  oldest wrong one is out of the window. With 32^8 codes, guessing is hopeless anyway; this
  keeps a script from trying.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from clawbot.statefile import atomic_write_json, is_number, locked, make_private_dir, read_state

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8
CODE_TTL_S = 3600.0
MAX_PENDING_PER_ACCOUNT = 3
#: how many refusals of a full queue are remembered (for `clawbot pairing list`)
MAX_TURNED_AWAY_KEPT = 100
REPLY_EVERY_S = 300.0
MAX_WRONG_CODES = 5
WRONG_CODE_WINDOW_S = 900.0
#: what a channel name must look like to name a file (the CLI takes it from the user)
CHANNEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class PairingError(Exception):
    """What the CLI tells the user when an approval cannot be done (wrong code, too many tries)."""


@attrs.frozen
class PairingRequest:
    code: str
    sender_id: str
    account_id: str
    sender_name: str
    created_at: float
    replied_at: float

    def expires_at(self) -> float:
        return self.created_at + CODE_TTL_S


@attrs.frozen
class Approved:
    sender_id: str
    sender_name: str
    approved_at: float


@attrs.frozen
class Asked:
    """The outcome of a stranger's message: their ``code`` (``None``: no room for another
    request), and whether to tell them now (``reply``)."""

    code: str | None
    reply: bool


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def known_channels(state_root: Path) -> list[str]:
    """The channels with pairing state: where strangers have asked, or senders were approved."""
    folder = state_root / "pairing"
    return sorted(p.stem for p in folder.glob("*.json") if CHANNEL_NAME.fullmatch(p.stem)) if folder.is_dir() else []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class PairingStore:
    """One channel's pairing file. ``clock`` is for tests (seconds, like ``time.time``)."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.clock = clock
        self._seen: tuple[int, int, int] | None = None
        self._allowed: frozenset[str] = frozenset()

    @classmethod
    def for_channel(cls, state_root: Path, channel: str, clock: Callable[[], float] = time.time) -> PairingStore:
        if not CHANNEL_NAME.fullmatch(channel):
            raise PairingError(f"{channel!r} is not a channel name (letters, digits, '-', '_' and '.', not first)")
        return cls(state_root / "pairing" / f"{channel}.json", clock)

    # -- reading -----------------------------------------------------------------------------

    def _load(self) -> dict[str, Any]:
        data = read_state(self.path, "ignored: no pending codes and no approved senders until it is rewritten")
        data = data if isinstance(data, dict) else {}
        now = self.clock()
        requests = []
        listed = data.get("requests")
        for entry in listed if isinstance(listed, list) else []:
            if not isinstance(entry, dict):
                continue
            code, sender, account, name = (_text(entry.get(k)) for k in ("code", "sender_id", "account_id", "sender_name"))
            created, replied = entry.get("created_at"), entry.get("replied_at")
            if code is None or sender is None or account is None or name is None or not is_number(created) or not is_number(replied):
                continue
            request = PairingRequest(code, sender, account, name, float(created), float(replied))  # type: ignore[arg-type]  # numbers, checked above
            if request.expires_at() > now:
                requests.append(request)
        approved = []
        listed = data.get("approved")
        for entry in listed if isinstance(listed, list) else []:
            if isinstance(entry, dict) and _text(entry.get("sender_id")) and is_number(entry.get("approved_at")):
                approved.append(Approved(entry["sender_id"], _text(entry.get("sender_name")) or "", float(entry["approved_at"])))
        wrong = [t for t in data.get("wrong_codes", []) if is_number(t) and now - t < WRONG_CODE_WINDOW_S] if isinstance(data.get("wrong_codes"), list) else []
        listed = data.get("turned_away")
        turned_away = [t for t in listed if is_number(t) and now - t < CODE_TTL_S][-MAX_TURNED_AWAY_KEPT:] if isinstance(listed, list) else []
        return {"requests": requests, "approved": approved, "wrong_codes": wrong, "turned_away": turned_away}

    def _save(self, state: dict[str, Any]) -> None:
        atomic_write_json(
            self.path,
            {
                "requests": [attrs.asdict(r) for r in state["requests"]],
                "approved": [attrs.asdict(a) for a in state["approved"]],
                "wrong_codes": state["wrong_codes"],
                "turned_away": state["turned_away"],
            },
        )

    def turned_away(self) -> int:
        """Strangers refused a code within the last hour because enough codes were pending."""
        return len(self._load()["turned_away"])

    def pending(self) -> list[PairingRequest]:
        return self._load()["requests"]

    def approved(self) -> list[Approved]:
        return self._load()["approved"]

    def is_approved(self, sender_id: str) -> bool:
        """Whether ``sender_id`` was approved; re-read only when the file changed on disk
        (the CLI approves while the gateway runs), so a busy channel costs one ``stat``."""
        try:
            info = os.stat(self.path)
            seen = (info.st_ino, info.st_mtime_ns, info.st_size)
        except OSError:
            seen = None
        if seen != self._seen:
            self._seen = seen
            self._allowed = frozenset(a.sender_id for a in self.approved()) if seen is not None else frozenset()
        return sender_id in self._allowed

    # -- changing ----------------------------------------------------------------------------

    def ask(self, sender_id: str, account_id: str, sender_name: str = "") -> Asked:
        """A stranger wrote: their pending code (a new one if none), and whether to reply now."""
        make_private_dir(self.path.parent)
        with locked(self.path):
            state, now = self._load(), self.clock()
            requests: list[PairingRequest] = state["requests"]
            for index, request in enumerate(requests):
                if request.sender_id == sender_id and request.account_id == account_id:
                    if now - request.replied_at < REPLY_EVERY_S:
                        return Asked(request.code, reply=False)
                    requests[index] = attrs.evolve(request, replied_at=now)
                    self._save(state)
                    return Asked(request.code, reply=True)
            if sum(1 for r in requests if r.account_id == account_id) >= MAX_PENDING_PER_ACCOUNT:
                # counted, so `clawbot pairing list` tells the owner that someone is left waiting
                state["turned_away"].append(now)
                state["turned_away"] = state["turned_away"][-MAX_TURNED_AWAY_KEPT:]
                self._save(state)
                return Asked(None, reply=False)
            taken = {r.code for r in requests}
            code = new_code()
            while code in taken:
                code = new_code()
            requests.append(PairingRequest(code, sender_id, account_id, sender_name, now, now))
            self._save(state)
            return Asked(code, reply=True)

    def approve(self, code: str) -> PairingRequest:
        """Let the sender of the request ``code`` in; :class:`PairingError` says why not."""
        return self._answer(code, approve=True)

    def deny(self, code: str) -> PairingRequest:
        """Drop the request ``code`` (its sender may ask again later)."""
        return self._answer(code, approve=False)

    def _answer(self, code: str, *, approve: bool) -> PairingRequest:
        code = code.strip().upper()
        if not self.path.exists():  # a misspelt channel: say so, and leave no file behind
            raise PairingError("nobody has asked to pair on this channel")
        with locked(self.path):
            state, now = self._load(), self.clock()
            wrong: list[float] = state["wrong_codes"]
            if len(wrong) >= MAX_WRONG_CODES:
                wait = max(1, round((min(wrong) + WRONG_CODE_WINDOW_S - now) / 60))
                raise PairingError(f"too many wrong codes on this channel lately: try again in {wait} min")
            found = next((r for r in state["requests"] if r.code == code), None)
            if found is None:
                wrong.append(now)
                self._save(state)
                raise PairingError(f"no pending request has the code {code!r} (codes expire 1 hour after they were sent)")
            state["requests"] = [r for r in state["requests"] if r is not found]
            if approve:
                state["approved"] = [a for a in state["approved"] if a.sender_id != found.sender_id]
                state["approved"].append(Approved(found.sender_id, found.sender_name, now))
            self._save(state)
            return found

    def revoke(self, sender_id: str) -> bool:
        """Forget an approved sender (they must pair again); whether they were approved."""
        if not self.path.exists():  # a misspelt channel: nobody was approved there, and no file is left behind
            return False
        with locked(self.path):
            state = self._load()
            kept = [a for a in state["approved"] if a.sender_id != sender_id]
            if len(kept) == len(state["approved"]):
                return False
            state["approved"] = kept
            self._save(state)
            return True
