"""``${VAR}`` substitution in configuration strings, with every missing variable reported.

``${VAR}`` must be set; ``${VAR:-fallback}`` uses the fallback when unset or empty;
``$${`` writes a literal ``${``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clawbot.config.problems import ConfigProblem, join

_PATTERN = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def substitute(value: Any, env: Mapping[str, str], path: str, problems: list[ConfigProblem]) -> Any:
    """Return ``value`` with variables replaced; append a problem per missing variable."""
    if isinstance(value, dict):
        return {k: substitute(v, env, join(path, k), problems) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, env, join(path, i), problems) for i, v in enumerate(value)]
    if not isinstance(value, str) or "$" not in value:
        return value

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$${":
            return "${"
        name, fallback = match.group(1), match.group(2)
        found = env.get(name)
        if found:
            return found
        if fallback is not None:
            return fallback
        problems.append(ConfigProblem(path, f"environment variable {name} is not set (or empty)"))
        return ""

    return _PATTERN.sub(replace, value)
