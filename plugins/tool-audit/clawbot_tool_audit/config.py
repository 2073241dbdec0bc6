"""The ``[plugins.tool-audit]`` table.

Every setting has a default, so installing the plugin is enough to get an audit log::

    [plugins.tool-audit]
    path = ""                                  # empty: <state dir>/audit/tool-calls.jsonl
    redact_keys = ["token", "password", ...]   # argument names whose values are hidden

    [[plugins.tool-audit.block]]
    tool = "exec"
    argument = "command"
    pattern = 'curl .*\\|\\s*(ba)?sh'
    reason = "piping a download into a shell is not allowed"
"""

from __future__ import annotations

import re

import attrs

DEFAULT_REDACT_KEYS = (
    "token",
    "password",
    "passwd",
    "secret",
    "api_key",
    "apikey",
    "authorization",
    "cookie",
    "credential",
    "private_key",
)


def _regex(instance: object, attribute: attrs.Attribute, value: str) -> None:
    try:
        re.compile(value)
    except re.error as exc:
        # Validator messages are reported against the table: name the key in them.
        raise ValueError(f"{attribute.name} {value!r} is not a valid regular expression: {exc}") from None


def _not_empty(instance: object, attribute: attrs.Attribute, value: str) -> None:
    if not value.strip():
        raise ValueError(f'{attribute.name} must not be empty (use "*" for every tool)')


@attrs.frozen(kw_only=True)
class BlockRule:
    """One ``[[plugins.tool-audit.block]]`` entry: which calls are refused."""

    tool: str = attrs.field(validator=_not_empty)
    """The tool's name, or a shell-style pattern (``"web_*"``, ``"*"``)."""

    pattern: str = attrs.field(default="", validator=_regex)
    """A regular expression searched (``re.search``) in the arguments; empty: every call to
    the tool is blocked."""

    argument: str = ""
    """The argument the pattern is searched in (e.g. ``command``); empty: every string value
    of the arguments, nested ones included."""

    reason: str = ""
    """What the model is told; empty: a sentence naming the rule."""


@attrs.frozen(kw_only=True)
class ToolAuditConfig:
    path: str = ""
    """The JSONL audit log. Empty: ``<state dir>/audit/tool-calls.jsonl``; a relative path is
    relative to the state directory; ``~`` is your home directory."""

    block: list[BlockRule] = attrs.Factory(list)
    """Rules refusing calls before they run; the first rule that matches wins."""

    redact_keys: list[str] = attrs.Factory(lambda: list(DEFAULT_REDACT_KEYS))
    """Argument names whose values are written as ``"[redacted]"``: a key is redacted when its
    name contains one of these (case-insensitive; ``-`` and ``_`` count as the same), at any
    depth of the arguments."""
