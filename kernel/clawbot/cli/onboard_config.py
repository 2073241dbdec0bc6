"""The default model in the configuration file ``clawbot onboard`` writes (``<state>/clawbot.toml``).

The file is edited as text, so the user's comments and layout stay; the edit is checked by
parsing the result (only the model may differ), and written atomically, mode 0600.
"""

from __future__ import annotations

import contextlib
import copy
import os
import re
import tempfile
import tomllib
from pathlib import Path
from typing import Any


def default_model(data: dict[str, Any]) -> str:
    """``agents.defaults.model`` of parsed TOML, shorthand or table ("" when unset)."""
    model = data.get("agents", {}).get("defaults", {}).get("model")
    if isinstance(model, str):
        return model
    return model.get("primary", "") if isinstance(model, dict) else ""


def _with_model(data: dict[str, Any], ref: str) -> dict[str, Any]:
    expected = copy.deepcopy(data)
    defaults = expected.setdefault("agents", {}).setdefault("defaults", {})
    if isinstance(defaults.get("model"), dict):
        defaults["model"]["primary"] = ref
    else:
        defaults["model"] = ref if isinstance(defaults.get("model"), str) else {"primary": ref}
    return expected


def edited(text: str, ref: str) -> str | None:
    """``text`` with ``ref`` as the default model, or ``None`` when it cannot be done safely."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    model = data.get("agents", {}).get("defaults", {}).get("model")
    if model is None:
        gap = "" if not text.strip() else "\n" if text.endswith("\n") else "\n\n"
        new = text + gap + f'[agents.defaults.model]\nprimary = "{ref}"\n'
    else:
        key = "primary" if isinstance(model, dict) else r"(?:defaults\.)?model"
        old = default_model(data)
        pattern = re.compile(rf"^(\s*{key}\s*=\s*)([\"']){re.escape(old)}\2", re.MULTILINE)
        new = pattern.sub(lambda m: f'{m[1]}"{ref}"', text, count=1)
    try:
        if tomllib.loads(new) != _with_model(data, ref):
            return None  # another key would change too: leave the file alone
    except tomllib.TOMLDecodeError:
        return None
    return new


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` atomically with ``text``, mode 0600 (it may hold keys the user added)."""
    from clawbot.statefile import make_private_dir

    make_private_dir(path.parent)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # created 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def precedence(in_use: Path, target: Path, cwd: Path, named: str | None) -> str:
    """Why ``in_use`` is read instead of ``target``."""
    if named:
        return f"{in_use} is named by {named} and is used instead of {target}"
    if in_use.parent == cwd:
        return f"{in_use} in the current directory takes precedence over {target}"
    return f"{in_use} is used instead of {target}"
