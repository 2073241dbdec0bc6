"""Writing skill folders and configurations for the skills tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_skill(
    root: Path,
    folder: str,
    *,
    name: str | None = None,
    description: str | None = None,
    meta: dict[str, Any] | None = None,
    frontmatter: str = "",
    body: str = "# title\n\nInstructions.\n",
) -> Path:
    """``root/folder/SKILL.md`` with frontmatter (name defaults to the folder); returns its path."""
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"name: {name or folder}", f"description: {description or f'The {folder} skill.'}"]
    if meta is not None:
        lines.append(f"metadata: {json.dumps({'clawbot': meta}, ensure_ascii=False)}")
    if frontmatter:
        lines.append(frontmatter.rstrip("\n"))
    path.write_text("---\n" + "\n".join(lines) + "\n---\n" + body, encoding="utf-8")
    return path


def toml_str(value: object) -> str:
    return json.dumps(str(value))


def config_for(workspace: Path, *, extra: str = "") -> str:
    return f"[agents.defaults]\nworkspace = {toml_str(workspace)}\n{extra}"


def fake_bin(directory: Path, name: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def reader_plugin() -> object:
    """A plugin offering a ``read`` tool: the prompt lists skills only to an agent that can read them."""
    from clawbot import Tool, ToolResult
    from clawbot.testing import plugin_from_hooks

    read = Tool("read", "Read a file.", {"type": "object"}, lambda call: ToolResult.text(""))
    return plugin_from_hooks(clawbot_tools=lambda ctx: [read])
