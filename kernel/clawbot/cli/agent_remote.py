"""``clawbot agent -m`` through a running gateway: the turn runs there, this process prints it.

Printed exactly as the in-process turn prints it: the start line and clawbot's notices on
stderr, the reply alone on stdout (``--json``: one JSON object), a session command's answer
on stdout. An approval the turn asks for is asked about here when stdin is a terminal and
answered through the API; otherwise this says how to answer it and leaves it waiting in the
gateway (it expires unanswered). Ctrl-C sends ``/stop`` to the session and exits 130.
Imports only the stdlib and click: no kernel, no plugins, no provider SDK.
"""

from __future__ import annotations

import sys
from typing import Any

from clawbot.cli.output import echo, echo_json

ALLOW = {"o": "allow-once", "once": "allow-once", "allow-once": "allow-once", "y": "allow-once", "yes": "allow-once"}
ALWAYS = {"always": "allow-always", "allow-always": "allow-always"}
DENY = {"d": "deny", "deny": "deny", "n": "deny", "no": "deny", "": "deny"}
SHOW = "show"


def run_through_gateway(client: Any, text: str, agent_id: str | None, session: str | None, as_json: bool) -> int | None:
    """Run the turn in the gateway ``client`` reaches; the exit status, or ``None`` when the
    gateway could not take it (gone since its endpoint file was written, another token):
    nothing ran there, so the caller runs the turn itself."""
    from clawbot.control.client import ApiUnavailable

    body = {"text": text, "agent": agent_id, "session": session}
    printer = _Printer(client, as_json, interactive=sys.stdin.isatty())
    started = False
    try:
        for event in client.stream("/v1/turns", body):
            started = True
            if printer.show(event):
                break
    except ApiUnavailable as exc:
        if not started:
            return None
        echo(f"error: {exc}", err=True)
        return 1
    except KeyboardInterrupt:
        _stop(client, printer.session or session, agent_id)
        echo("interrupted; the turn is recorded as aborted", err=True)
        return 130
    if not printer.over:  # the answer ended before the gateway said the turn was over: it died
        echo("error: the gateway stopped before the turn finished: no reply", err=True)
        return 1
    return printer.code


def _stop(client: Any, session: str | None, agent_id: str | None) -> None:
    try:
        for _ in client.stream("/v1/turns", {"text": "/stop", "session": session, "agent": agent_id}):
            pass
    except Exception:  # the gateway went away: nothing runs there any more
        pass


class _Printer:
    def __init__(self, client: Any, as_json: bool, *, interactive: bool) -> None:
        self.client, self.as_json, self.interactive = client, as_json, interactive
        self.code = 0
        self.over = False
        """The gateway said the turn is over (``done``), or the reply left nothing to wait for."""
        self.session: str | None = None
        self.agent: str | None = None
        self.command: str | None = None
        self.notices: list[str] = []
        self.replies: list[str] = []
        self.offers: list[dict[str, Any]] = []

    def show(self, event: dict[str, Any]) -> bool:
        """Print what ``event`` says; ``True`` to stop reading (the turn is over for us)."""
        kind = event.get("type")
        if kind == "start":
            self.session, self.agent, self.command = event.get("session"), event.get("agent"), event.get("command")
            if event.get("line"):
                echo(event["line"], err=True)  # stderr: the reply alone stays on stdout
        elif kind == "notice":
            self._notice(event)
        elif kind == "reply":
            self.replies.append(event.get("text", ""))
            if not self.as_json:
                echo(event.get("text", ""))
            self.over = self._settle()
            return self.over
        elif kind == "error":
            echo(f"error: {event.get('text', '')}" if event.get("code") != 2 else event.get("text", ""), err=True)
            self.code = event.get("code") or 1
        elif kind == "done":
            self.over = True
            self._done(event)
            return True
        return False

    def _notice(self, event: dict[str, Any]) -> None:
        text = event.get("text", "")
        if self.command is not None:  # a command's answer is the output
            self.replies.append(text)
            if not self.as_json:
                echo(text)
            return
        offer = event.get("approval")
        echo(text, err=True)
        if offer:
            self.offers.append(offer)
        else:
            self.notices.append(text)

    def _settle(self) -> bool:
        """Answer what the turn left waiting; ``True`` when nobody here can."""
        offers, self.offers = self.offers, []
        for offer in offers:
            if not self.interactive:
                session = f" --session {self.session}" if self.session else ""
                echo(
                    f"Approval {offer['id']} waits ({offer.get('summary', '')}), and stdin is not a terminal, so nobody can answer here. "
                    f'Answer it with: clawbot agent{session} -m "/approve {offer["id"]} allow-once" (or "/deny {offer["id"]}"); '
                    "unanswered, it expires and the command does not run.",
                    err=True,
                )
                return True
            self._ask(offer)
        return False

    def _ask(self, offer: dict[str, Any]) -> None:
        choices = offer.get("choices", [])
        words = "[o]nce, always, [d]eny" if "allow-always" in choices else "[o]nce, [d]eny"
        words += f", {SHOW}" if SHOW in choices else ""
        question = f"Allow {offer['id']} ({offer.get('summary', '')})? {words} (Enter: deny): "
        while True:
            sys.stderr.write(question)
            sys.stderr.flush()
            try:
                line = sys.stdin.readline()
            except KeyboardInterrupt:  # the turn is over; only this answer is missing
                tool = str(offer.get("summary", "")).split(":", 1)[0] or "the command"
                sys.stderr.write("\n")
                echo(f"interrupted; approval {offer['id']} is left unanswered: {tool} did not run", err=True)
                raise SystemExit(130) from None
            choice: str | None
            if not line:
                sys.stderr.write("\n")
                choice = "deny"
            else:
                word = line.strip().lower()
                choice = ALLOW.get(word) or (ALWAYS.get(word) if "allow-always" in choices else None) or DENY.get(word)
                if word == SHOW and SHOW in choices:
                    choice = SHOW
                if choice is None:
                    continue
            status, answer = self.client.call("POST", f"/v1/approvals/{offer['id']}", {"choice": choice})
            text = (answer or {}).get("text") or (answer or {}).get("error") or ""
            echo(text, err=True)
            if choice == SHOW or (status == 409 and choice != "deny"):
                continue  # seen now (or refused until seen): ask again
            return

    def _done(self, event: dict[str, Any]) -> None:
        if not self.as_json:
            return
        if self.command is not None:
            echo_json({"command": self.command, "reply": "\n".join(self.replies), "agent": self.agent, "session": self.session}, ensure_ascii=True)
            return
        result = event.get("result") or {}
        payload = {
            "reply": self.replies[-1] if self.replies else "",
            "notices": self.notices,
            "model": result.get("model"),
            "agent": self.agent,
            "session": self.session,
            "iterations": result.get("iterations"),
            "tool_calls": result.get("tool_calls"),
            "usage": result.get("usage"),
            "cost_usd": result.get("cost_usd"),
            "session_totals": result.get("session_totals"),
        }
        echo_json(payload, ensure_ascii=True)
