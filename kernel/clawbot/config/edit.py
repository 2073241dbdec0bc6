"""Setting one string in the configuration file clawbot writes (``<state>/clawbot.toml``).

``clawbot onboard`` (the clawbot-setup plugin) sets the default model there, ``clawbot init --workspace`` the workspace
(of ``[agents.defaults]``, or of one ``[[agents.list]]`` entry).
The file is edited as text, so the user's comments and layout stay; the edit is checked by
parsing the result (only that one value may differ, else nothing is written), and written
atomically, mode 0600 (through a symbolic link: its target is replaced, the link stays). A
file named instead (``--config``, ``$CLAWBOT_CONFIG``) is never rewritten: the caller says so
and prints the line instead.
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clawbot.config.loader import locate_config
from clawbot.paths import CONFIG_ENV
from clawbot.statefile import atomic_write_text, make_private_dir


def lookup(data: Mapping[str, Any], table: tuple[str, ...]) -> Any:
    node: Any = data
    for name in table:
        node = node.get(name) if isinstance(node, Mapping) else None
    return node


def _line(key: str, value: str) -> str:
    return f"{key} = {json.dumps(value, ensure_ascii=False)}"  # a JSON string is a TOML basic string


def _replaced(text: str, key: str, old: str, value: str) -> str:
    """``text`` with its first ``key = "old"`` line saying ``value`` instead."""
    pattern = re.compile(rf"^(\s*){re.escape(key)}\s*=\s*([\"']){re.escape(old)}\2", re.MULTILINE)
    return pattern.sub(lambda m: m[1] + _line(key, value), text, count=1)


def _checked(new: str, expected: Any) -> str | None:
    try:
        return new if tomllib.loads(new) == expected else None  # anything else changed: leave it
    except tomllib.TOMLDecodeError:
        return None


def set_string(text: str, table: tuple[str, ...], key: str, value: str) -> str | None:
    """``text`` with ``[table] key = value``, or ``None`` when that cannot be done safely."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    expected = copy.deepcopy(data)
    node = expected
    for name in table:
        node = node.setdefault(name, {})
        if not isinstance(node, dict):
            return None
    old = node.get(key)
    node[key] = value
    if isinstance(old, str):
        new = _replaced(text, key, old, value)
    else:
        dotted = r"\s*\.\s*".join(map(re.escape, table))
        header = re.compile(rf"^\[\s*{dotted}\s*\][ \t]*(#.*)?$", re.MULTILINE)
        found = header.search(text)
        if found:
            new = text[: found.end()] + "\n" + _line(key, value) + text[found.end() :]
        else:
            gap = "" if not text.strip() else "\n" if text.endswith("\n") else "\n\n"
            new = f"{text}{gap}[{'.'.join(table)}]\n{_line(key, value)}\n"
    return _checked(new, expected)


def set_entry_string(text: str, array: tuple[str, ...], entry_id: str, key: str, value: str) -> str | None:
    """``text`` with ``key = value`` in the ``[[array]]`` entry whose ``id`` is ``entry_id``
    (one agent of ``[[agents.list]]``), or ``None`` when that cannot be done safely."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    entries = lookup(data, array)
    if not isinstance(entries, list):
        return None
    index = next((i for i, entry in enumerate(entries) if isinstance(entry, dict) and entry.get("id") == entry_id), None)
    if index is None:
        return None
    expected = copy.deepcopy(data)
    entry = lookup(expected, array)[index]
    old = entry.get(key)
    entry[key] = value
    dotted = r"\s*\.\s*".join(map(re.escape, array))
    headers = list(re.finditer(rf"^\[\[\s*{dotted}\s*\]\][ \t]*(#.*)?$", text, re.MULTILINE))
    if len(headers) != len(entries):
        return None  # written some other way (an inline array): leave it
    start = headers[index].end()
    following = re.compile(r"^[ \t]*\[", re.MULTILINE).search(text, start)
    end = following.start() if following else len(text)
    block = text[start:end]
    block = _replaced(block, key, old, value) if isinstance(old, str) else "\n" + _line(key, value) + block
    return _checked(text[:start] + block + text[end:], expected)


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` atomically with ``text``, mode 0600 (it may hold keys the user added).

    A symbolic link (a dotfile kept elsewhere) stays: its target is replaced, from a temporary
    file in the target's own directory. ``OSError`` when that cannot be done.
    """
    if path.is_symlink():
        try:
            target = path.resolve(strict=False)
        except RuntimeError as exc:  # a loop of links
            raise OSError(f"{path} is a symbolic link that cannot be followed ({exc})") from None
        if not target.parent.is_dir():
            raise OSError(f"{path} links to {target}, whose folder does not exist")
        atomic_write_text(target, text)
        return
    make_private_dir(path.parent)
    atomic_write_text(path, text)


def precedence(in_use: Path, target: Path, named: str | None) -> str:
    """Why ``in_use`` is read instead of ``target``."""
    if named:
        return f"{in_use} is named by {named} and is used instead of {target}"
    return f"{in_use} is used instead of {target}"


def file_in_use(config_path: str | None, env: Mapping[str, str], cwd: Path) -> tuple[Path | None, str | None]:
    """The configuration file clawbot reads, and what named it (``--config``, ``$CLAWBOT_CONFIG`` or ``None``)."""
    named = "--config" if config_path else f"${CONFIG_ENV}" if env.get(CONFIG_ENV) else None
    return locate_config(config_path, env, cwd), named
