"""``clawbot plugins new``: a new plugin distribution from the plugin template.

The template is a complete, installable plugin (``clawbot-example-tool``, plugin
``example_tool``) with a passing test suite. Rendering copies it and renames its identifiers
in file contents and paths:

===========================  =====================
template                     ``render_plugin("my-tool")``
===========================  =====================
``clawbot-example-tool``     ``clawbot-my-tool`` (distribution)
``clawbot_example_tool``     ``clawbot_my_tool`` (import package)
``ExampleTool``              ``MyTool`` (class names)
``example_tool``             ``my_tool`` (plugin name, config table, tool names)
``example-tool``             ``my-tool``
===========================  =====================

The template ships inside this plugin's wheel as ``clawbot_setup/_plugin_template``; in a
source checkout (editable install) it is the repository's ``plugin-template/``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import attrs

TEMPLATE_PACKAGE_DIR = "_plugin_template"
SKIPPED_NAMES = frozenset({"__pycache__", ".venv", ".pytest_cache", ".ruff_cache", ".mypy_cache", "dist", "build"})
SKIPPED_SUFFIXES = (".pyc", ".pyo")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


class TemplateError(Exception):
    """The plugin cannot be created (bad name, target in the way, template missing)."""


@attrs.frozen
class PluginNames:
    """Every spelling of one plugin's name that the template uses."""

    plugin: str  # my_tool: entry point name, [plugins.my_tool], tool name prefix
    kebab: str  # my-tool
    distribution: str  # clawbot-my-tool
    package: str  # clawbot_my_tool
    camel: str  # MyTool

    @classmethod
    def from_name(cls, name: str) -> PluginNames:
        """Validate ``name`` (``my-tool``, ``my_tool``, ``MyTool``...) and derive the spellings.

        A leading ``clawbot-`` / ``clawbot_`` is dropped: ``clawbot-my-tool`` means ``my-tool``.
        """
        if not _NAME.fullmatch(name):
            raise TemplateError(f"invalid plugin name {name!r}: use ASCII letters, digits, '-' and '_', starting with a letter (e.g. my-tool)")
        words = [w for w in re.split(r"[-_]+", name.lower()) if w]
        if words[:1] == ["clawbot"]:
            words = words[1:]
        if not words:
            raise TemplateError(f"invalid plugin name {name!r}: it needs a name after 'clawbot-' (e.g. my-tool)")
        if not words[0][0].isalpha():
            raise TemplateError(f"invalid plugin name {name!r}: {'-'.join(words)!r} must start with a letter")
        return cls(
            plugin="_".join(words),
            kebab="-".join(words),
            distribution="clawbot-" + "-".join(words),
            package="clawbot_" + "_".join(words),
            camel="".join(w[:1].upper() + w[1:] for w in words),
        )

    def replacements(self) -> list[tuple[str, str]]:
        """Template identifier -> this plugin's, longest first so none eats another."""
        return [
            ("clawbot_example_tool", self.package),
            ("clawbot-example-tool", self.distribution),
            ("ExampleTool", self.camel),
            ("example_tool", self.plugin),
            ("example-tool", self.kebab),
        ]

    def apply(self, text: str) -> str:
        for old, new in self.replacements():
            text = text.replace(old, new)
        return text


def template_dir() -> Path:
    """The plugin template: shipped in this plugin's wheel, or the checkout's ``plugin-template/``."""
    shipped = resources.files("clawbot_setup") / TEMPLATE_PACKAGE_DIR
    if shipped.is_dir() and (shipped / "pyproject.toml").is_file():
        return Path(str(shipped))
    # Editable / workspace install: plugins/setup/clawbot_setup/scaffold.py -> <repo>/plugin-template
    checkout = Path(__file__).resolve().parents[3] / "plugin-template"
    if (checkout / "pyproject.toml").is_file():
        return checkout
    raise TemplateError(f"the plugin template is missing: neither {shipped} nor {checkout} exists; reinstall clawbot-setup")


def _template_files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if any(part in SKIPPED_NAMES for part in relative.parts) or path.name.endswith(SKIPPED_SUFFIXES):
            continue
        if path.is_file():
            yield relative


def render_plugin(name: str, directory: Path | None = None, *, template: Path | None = None) -> Path:
    """Create the distribution of plugin ``name`` in ``directory`` (default ``./clawbot-<name>``).

    ``template`` is the folder to render (default: the template shipped with clawbot).

    Returns the directory. Raises :class:`TemplateError` for an invalid name or when the
    directory exists and is not empty (nothing is overwritten).
    """
    names = PluginNames.from_name(name)
    target = Path(directory) if directory is not None else Path.cwd() / names.distribution
    if target.exists():
        if not target.is_dir():
            raise TemplateError(f"{target} exists and is not a directory")
        if any(target.iterdir()):
            raise TemplateError(f"{target} exists and is not empty; choose another directory with -d")
    source = template if template is not None else template_dir()
    files = list(_template_files(source))
    if not files:
        raise TemplateError(f"the plugin template at {source} is empty; reinstall clawbot-setup")
    target.mkdir(parents=True, exist_ok=True)
    for relative in files:
        destination = target / names.apply(relative.as_posix())
        destination.parent.mkdir(parents=True, exist_ok=True)
        data = (source / relative).read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:  # binary: copy as is
            destination.write_bytes(data)
        else:
            destination.write_text(names.apply(text), encoding="utf-8", newline="")
        destination.chmod((source / relative).stat().st_mode & 0o777 | 0o600)
    return target.resolve()
