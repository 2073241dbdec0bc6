"""Directives: settings written at the start of a message, for its turn only.

``/think high /usage tokens what is 17*23?`` runs that one turn with thinking ``high`` and a
usage footer; the model reads only ``what is 17*23?``. A message of directives alone
(``/think high /verbose on``) is a command: the chat keeps the settings for the session
(:mod:`clawbot.gateway.setting_commands`). Only the known names with a value they take are
directives (``/think``, ``/verbose``, ``/reasoning``, ``/usage``, ``/model``; written
``/think high`` or ``/think:high``): ``/etc/hosts is broken`` and ``/think about it`` stay
ordinary text.

Inline directives are the owner's: in anyone else's message they are left as text, and
the turn runs as the session is set (every request is paid with the owner's key, and a
group's settings are the owner's to choose).
"""

from __future__ import annotations

import re

import attrs

from clawbot.sessions.settings import CHAT_SETTINGS, setting_word

DIRECTIVE_NAMES = (*CHAT_SETTINGS, "model")
_DIRECTIVE = re.compile(r"/(?P<name>[A-Za-z]+)(?:@[\w.]+)?(?:[ \t]+|:)(?P<value>[^\s/][^\s]*)(?=\s|$)")
_MODEL_REF = re.compile(r"[\w.:-]+(?:/[\w.:-]+)?")


@attrs.frozen
class Directive:
    name: str
    value: str  # a setting's word in lower case; for ``model`` the ref as written


def split_directives(text: str) -> tuple[tuple[Directive, ...], str]:
    """The directives ``text`` starts with, and the rest of it (leading space dropped)."""
    found: list[Directive] = []
    rest = text.lstrip()
    while rest.startswith("/"):
        match = _DIRECTIVE.match(rest)
        if match is None:
            break
        name, value = match["name"].lower(), match["value"]
        if name == "model":
            word = value if _MODEL_REF.fullmatch(value) else None
        else:
            word = setting_word(name, value)
        if word is None:
            break
        found.append(Directive(name, word))
        rest = rest[match.end() :].lstrip()
    return tuple(found), rest


def only_directives(text: str) -> tuple[Directive, ...]:
    """The directives of a message that holds nothing else; ``()`` otherwise."""
    found, rest = split_directives(text)
    return found if not rest else ()


def directive_values(directives: tuple[Directive, ...]) -> dict[str, str]:
    """name -> value; a name given twice: the last one counts."""
    return {d.name: d.value for d in directives}
