"""The frontmatter block of a ``SKILL.md`` read into a mapping, with the file line of every key.

YAML first (PyYAML's safe loader, imported only when a skill has frontmatter); when YAML
refuses it, OpenClaw's fallback of one literal ``key: value`` per line. Errors carry the
line of the file (the block starts on line 2).
"""

from __future__ import annotations

import json
import re
from typing import Any


class FrontmatterError(Exception):
    """What is wrong with a ``SKILL.md``, and on which line of the file (when known)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


LineMap = dict[tuple[str, ...], int]


def normalise_key(key: object) -> str:
    """``userInvocable``, ``user-invocable`` and ``user_invocable`` are one key."""
    text = str(key)
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", text).lower().replace("-", "_")


def load_yaml(block: str) -> tuple[Any, LineMap]:
    # deferred: PyYAML loads only when a SKILL.md has frontmatter
    import yaml

    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_class(block)
    try:
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        if mark is None or (mark.line >= block.count("\n") + 1 and exc.context_mark is not None):
            mark = exc.context_mark  # the problem was only noticed at the end: point at its start
        problem = ": ".join(filter(None, [exc.context, exc.problem])) or str(exc)
        context = exc.context_mark
        if mark is not None and context is not None and context.line != mark.line:
            what = re.sub(r"^while \w+ ", "", exc.context or "") or "it"
            problem += f" ({what} starts on line {context.line + 2})"
        raise FrontmatterError(f"invalid YAML in the frontmatter: {problem}", mark.line + 2 if mark else None) from None
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"invalid YAML in the frontmatter: {exc}", None) from None
    lines: LineMap = {}
    if node is not None:
        _record_lines(node, (), lines)
    return data, lines


def _record_lines(node: Any, path: tuple[str, ...], lines: LineMap) -> None:
    # deferred: PyYAML loads only when a SKILL.md has frontmatter
    import yaml

    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key_path = (*path, normalise_key(key_node.value))
                lines.setdefault(key_path, key_node.start_mark.line + 2)
                _record_lines(value_node, key_path, lines)


_PLAIN_LINE = re.compile(r"([A-Za-z_][\w.-]*):(?:[ \t]+(.*))?")


def load_plain_lines(block: list[str]) -> tuple[dict[str, Any], LineMap] | None:
    """OpenClaw's fallback: one ``key: value`` per line, values taken literally.

    Only when every line has that shape (so ``description: Use it when: ...``, which YAML
    refuses, still reads); anything nested or multi-line is left to the YAML error.
    """
    data: dict[str, Any] = {}
    lines: LineMap = {}
    for index, line in enumerate(block):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _PLAIN_LINE.fullmatch(line.rstrip())
        if match is None:
            return None
        value: Any = (match[2] or "").strip()
        if value[:1] in ("{", "["):
            try:
                value = json.loads(value)
            except ValueError:
                return None
        elif len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif value[:1] in ("|", ">", "&", "*", "!", '"', "'"):
            return None
        key = normalise_key(match[1])
        data[key] = value
        lines[(key,)] = index + 2
    return data, lines
