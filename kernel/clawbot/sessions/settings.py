"""What a chat may set for its session with a command or a directive: the words each takes.

``/think``, ``/verbose``, ``/reasoning`` and ``/usage`` are stored in the session's index
entry (``settings``), next to the ``/model`` choice, so they survive a restart and a
``/new`` (they belong to the chat, not to one conversation). A value the table does not
know (an entry edited by hand) is ignored: the setting's default applies.
"""

from __future__ import annotations

from collections.abc import Mapping

#: setting -> the words it takes, the first of them its default (``think``: the configured level)
CHAT_SETTINGS: dict[str, tuple[str, ...]] = {
    "think": ("off", "minimal", "low", "medium", "high", "xhigh"),
    "verbose": ("off", "on"),
    "reasoning": ("off", "on", "stream"),
    "usage": ("off", "tokens", "full"),
}


def setting_word(name: str, word: str) -> str | None:
    """``word`` as a value of setting ``name`` (any case), or ``None`` when it is not one."""
    word = word.strip().lower()
    return word if word in CHAT_SETTINGS.get(name, ()) else None


def stored_settings(raw: object) -> dict[str, str]:
    """The usable settings of an index entry's ``settings`` object; the rest is dropped."""
    if not isinstance(raw, Mapping):
        return {}
    return {k: v for k, v in raw.items() if isinstance(k, str) and isinstance(v, str) and setting_word(k, v) == v}


def setting_of(settings: Mapping[str, str], name: str, default: str | None = None) -> str:
    """The value of ``name`` in ``settings``; its default when unset (``default`` first)."""
    value = stored_settings(settings).get(name)
    return value or default or CHAT_SETTINGS[name][0]
