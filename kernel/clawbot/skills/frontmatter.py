"""Reading one ``SKILL.md``: its YAML frontmatter, or, without one, its title and first paragraph.

A file that starts with a ``---`` line has frontmatter up to the next ``---`` line::

    ---
    name: gemini
    description: Use the Gemini CLI for coding help and Google searches.
    metadata: {"clawbot": {"emoji": "♊️", "requires": {"bins": ["gemini"]}}}
    ---

``metadata`` may be a mapping or a JSON string; its ``clawbot`` key (else ``openclaw``, else
``clawdbot``, so skills written for OpenClaw work unchanged) holds ``always``, ``emoji``,
``os``, ``requires`` (``bins``, ``any_bins``, ``env``, ``config``), ``primary_env`` and
``install``. Keys may be written ``snake_case``, ``kebab-case`` or ``camelCase``; unknown
keys are ignored.

A file without frontmatter is named after its folder and described by the first paragraph
under its title. A broken file is never half-read: :func:`parse_skill` returns no document
and an error naming the line of the file where the problem is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from clawbot.skills.frontmatter_yaml import FrontmatterError, LineMap, load_plain_lines, load_yaml, normalise_key

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
"""A skill name: a safe slug (it becomes a folder name, an XML value and a config entry)."""

MAX_DESCRIPTION_CHARS = 1024
METADATA_KEYS = ("clawbot", "openclaw", "clawdbot")
"""Where a skill's clawbot metadata may live, first found wins."""

Severity = Literal["error", "warning"]


@attrs.frozen
class Requirements:
    """What must be present for a skill to be eligible."""

    bins: tuple[str, ...] = ()
    any_bins: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    config: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.bins or self.any_bins or self.env or self.config)


@attrs.frozen
class SkillDocument:
    """What one ``SKILL.md`` says about itself."""

    name: str
    description: str
    homepage: str = ""
    user_invocable: bool = True
    disable_model_invocation: bool = False
    always: bool = False
    emoji: str = ""
    os: tuple[str, ...] = ()
    requires: Requirements = Requirements()
    primary_env: str = ""
    install: tuple[Mapping[str, Any], ...] = attrs.field(default=(), eq=False)
    has_frontmatter: bool = False


@attrs.frozen
class Finding:
    """A problem in one file; ``line`` is 1-based in the file (``None``: the file as a whole)."""

    message: str
    line: int | None = None
    severity: Severity = "error"


@attrs.frozen
class ParseResult:
    """``document`` is ``None`` when the file has an error (see ``findings``)."""

    document: SkillDocument | None
    findings: tuple[Finding, ...] = ()


def parse_skill(text: str, folder_name: str, *, linked: bool = False) -> ParseResult:
    """Read the text of a ``SKILL.md`` found in the folder ``folder_name``. ``linked``: a
    workspace skill whose file leads outside the workspace; its description must come from
    the frontmatter, so a link to a key file shows nothing of the key."""
    warnings: list[Finding] = []
    try:
        document = _parse(text, folder_name, warnings, linked)
    except FrontmatterError as exc:
        return ParseResult(None, (*warnings, Finding(exc.message, exc.line)))
    return ParseResult(document, tuple(warnings))


# -- splitting ---------------------------------------------------------------------------

FENCE = ("---",)
CLOSERS = ("---", "...")


def split_frontmatter(text: str) -> tuple[list[str] | None, list[str]]:
    """The frontmatter lines (``None``: there is none) and the body lines.

    The frontmatter's first line is line 2 of the file.
    """
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[0].rstrip() not in FENCE:
        return None, lines
    for index in range(1, len(lines)):
        if lines[index].rstrip() in CLOSERS:
            return lines[1:index], lines[index + 1 :]
    raise FrontmatterError("the frontmatter opened by `---` on line 1 is never closed by a `---` line", 1)


def first_paragraph(lines: list[str]) -> str:
    """The first paragraph of plain text: headings (the title), fences and comments skipped."""
    paragraph: list[str] = []
    fence = ""
    for line in lines:
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence):
                fence = ""
            continue
        if stripped.startswith(("```", "~~~")):
            if paragraph:
                break
            fence = stripped[:3]
            continue
        if not stripped or stripped.startswith("#"):
            if paragraph:
                break
            continue
        if paragraph and (set(stripped) <= {"="} or set(stripped) <= {"-"}):
            paragraph = []  # the lines above were a setext heading
            continue
        if stripped.startswith("<!--") and stripped.endswith("-->"):
            continue
        paragraph.append(stripped)
    return " ".join(paragraph)


# -- validation --------------------------------------------------------------------------


class _Reader:
    """Typed access to a mapping, with errors naming the key and its line."""

    def __init__(self, data: Mapping[Any, Any], path: tuple[str, ...], label: str, lines: LineMap, fallback_line: int | None) -> None:
        self.data = {normalise_key(k): v for k, v in data.items()}
        self.path = path
        self.label = label
        self.lines = lines
        self.fallback_line = fallback_line

    def line(self, key: str | None = None) -> int | None:
        path = (*self.path, key) if key else self.path
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.fallback_line

    def name(self, key: str) -> str:
        return f"{self.label}.{key}" if self.label else key

    def fail(self, key: str, expected: str, value: Any) -> FrontmatterError:
        shown = repr(value) if not isinstance(value, Mapping | list) else type(value).__name__
        return FrontmatterError(f"`{self.name(key)}` must be {expected}, not {shown}", self.line(key))

    def text(self, key: str, *aliases: str) -> str:
        for name in (key, *aliases):
            value = self.data.get(name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise self.fail(name, "a string", value)
            return str(value).strip()
        return ""

    def flag(self, key: str, default: bool) -> bool:
        value = self.data.get(key)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "yes", "on"):
            return True
        if isinstance(value, str) and value.strip().lower() in ("false", "no", "off"):
            return False
        raise self.fail(key, "true or false", value)

    def strings(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key)
        if value is None:
            return ()
        if isinstance(value, str):
            return (value.strip(),) if value.strip() else ()
        if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
            return tuple(item.strip() for item in value if item.strip())
        raise self.fail(key, "a list of strings", value)

    def mapping(self, key: str) -> _Reader:
        value = self.data.get(key)
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            raise self.fail(key, "a mapping", value)
        return _Reader(value, (*self.path, key), self.name(key), self.lines, self.line(key))


def _metadata(top: _Reader) -> tuple[_Reader, str]:
    """The clawbot part of ``metadata`` (an empty reader when there is none)."""
    raw = top.data.get("metadata")
    lines = top.lines
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else None
        except ValueError as exc:
            raise FrontmatterError(f"`metadata` is a string but not valid JSON: {exc}", top.line("metadata")) from None
        lines = {}  # positions inside a JSON string: report the metadata line
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise top.fail("metadata", "a mapping or a JSON object", raw)
    metadata = _Reader(raw, ("metadata",), "metadata", lines, top.line("metadata"))
    for key in METADATA_KEYS:
        if key in metadata.data:
            return metadata.mapping(key), key
    return _Reader({}, ("metadata",), "metadata", lines, top.line("metadata")), ""


def _parse(text: str, folder_name: str, warnings: list[Finding], linked: bool = False) -> SkillDocument:
    block, body = split_frontmatter(text)
    data: Any = {}
    lines: LineMap = {}
    if block is not None:
        try:
            data, lines = load_yaml("\n".join(block))
        except FrontmatterError as exc:
            plain = load_plain_lines(block)
            if plain is None:
                raise
            data, lines = plain
            warnings.append(Finding(f"{exc.message}; read as plain `key: value` lines (quote the value to silence this)", exc.line, "warning"))
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise FrontmatterError(f"the frontmatter must be a mapping of keys to values, not a {type(data).__name__}", 2)
    top = _Reader(data, (), "", lines, 1 if block is not None else None)
    meta, _ = _metadata(top)
    requires = meta.mapping("requires")

    name = top.text("name") or folder_name
    if not NAME_PATTERN.fullmatch(name):
        where = top.line("name") if top.text("name") else None
        origin = "" if top.text("name") else " (the folder name; set `name:` in the frontmatter)"
        raise FrontmatterError(
            f"{name!r} is not a valid skill name{origin}: use letters, digits, '-', '_' and '.', at most 64 characters",
            where,
        )
    description = " ".join(top.text("description").split()) or ("" if linked else first_paragraph(body))
    if not description and linked:
        raise FrontmatterError("leads outside the workspace (a link) and has no `description:` in its frontmatter")
    if not description:
        raise FrontmatterError("no description: add `description:` to the frontmatter, or a paragraph under the title", top.line("description"))
    if len(description) > MAX_DESCRIPTION_CHARS:
        warnings.append(
            Finding(
                f"description is {len(description)} characters; only the first {MAX_DESCRIPTION_CHARS} reach the prompt",
                top.line("description"),
                "warning",
            )
        )
        description = description[: MAX_DESCRIPTION_CHARS - 1].rstrip() + "…"

    install = meta.data.get("install")
    if install is None:
        install = []
    if not isinstance(install, list | tuple) or not all(isinstance(spec, Mapping) for spec in install):
        raise meta.fail("install", "a list of mappings", install)
    if block is None:
        # Read all the same (named after the folder, described by its first paragraph), but
        # said: without frontmatter it cannot declare what it needs, and a stray README-like
        # file becomes a skill unnoticed.
        warnings.append(
            Finding(
                f"no frontmatter: read as skill {name!r} described by its first paragraph; start the file "
                "with a `---` block holding `name:` and `description:`",
                1,
                "warning",
            )
        )
    return SkillDocument(
        name=name,
        description=description,
        homepage=top.text("homepage") or meta.text("homepage"),
        user_invocable=top.flag("user_invocable", True),
        disable_model_invocation=top.flag("disable_model_invocation", False),
        always=meta.flag("always", False),
        emoji=meta.text("emoji"),
        os=meta.strings("os"),
        requires=Requirements(
            bins=requires.strings("bins"),
            any_bins=requires.strings("any_bins"),
            env=requires.strings("env"),
            config=requires.strings("config"),
        ),
        primary_env=meta.text("primary_env"),
        install=tuple(dict(spec) for spec in install),
        has_frontmatter=block is not None,
    )
