"""docs/architecture.md is a map, and a map that names what does not exist misleads.

The page's claims that code can check are checked here, by reading files only (no kernel
boot): every module, path, hook, plugin package and distribution it names exists; every
hook spec and every built-in plugin distribution is named; the page stays a map (at most
``MAX_LINES`` lines) and its links to other documents lead somewhere.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from clawbot.hookspecs import hook_names

ROOT = Path(__file__).resolve().parents[1]
MAP = ROOT / "docs" / "architecture.md"
KERNEL_PACKAGE = ROOT / "kernel" / "clawbot"
PLUGINS = ROOT / "plugins"
MAX_LINES = 500

#: The endings of file names that read like dotted module names (``clawbot.toml``).
FILE_SUFFIXES = {"toml", "md", "py", "json", "jsonl", "log", "lock", "txt", "yaml", "yml"}

CODE_SPAN = re.compile(r"`([^`\n]+)`")
DOTTED_KERNEL_NAME = re.compile(r"(?<![\w./-])clawbot(?:\.[A-Za-z_]\w*)+")
HOOK_OR_PLUGIN_PACKAGE = re.compile(r"(?<![\w./-])clawbot_[a-z0-9_]+(?:\.[A-Za-z_]\w*)*")
REPO_PATH = re.compile(r"(?<![\w./-])((?:kernel|plugins|docs|tests|bench|clawbot)/[\w./-]*)")
DISTRIBUTION = re.compile(r"(?<![\w./-])clawbot-[a-z0-9]+(?:-[a-z0-9]+)*(?![\w-])")
MARKDOWN_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def map_text() -> str:
    return MAP.read_text(encoding="utf-8")


def code_spans(text: str) -> list[str]:
    """The text of every code span and code block: where the map names code."""
    blocks = re.findall(r"```[^\n]*\n(.*?)```", text, flags=re.DOTALL)
    without_blocks = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return CODE_SPAN.findall(without_blocks) + blocks


def plugin_packages() -> dict[str, Path]:
    """Import package name -> its folder, for every plugin distribution under plugins/."""
    return {package.name: package for package in PLUGINS.glob("*/clawbot_*") if package.is_dir()}


def built_in_distributions() -> dict[str, Path]:
    """Distribution name -> folder, for every plugins/<name>/ with a pyproject.toml."""
    found = {}
    for pyproject in sorted(PLUGINS.glob("*/pyproject.toml")):
        found[tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["name"]] = pyproject.parent
    return found


def workspace_distributions() -> set[str]:
    """Every distribution a pyproject.toml of the repository defines (kernel, plugins, root, template)."""
    names = set()
    for pyproject in [
        ROOT / "pyproject.toml",
        *ROOT.glob("kernel/pyproject.toml"),
        *ROOT.glob("plugins/*/pyproject.toml"),
        *ROOT.glob("plugin-template/pyproject.toml"),
    ]:
        names.add(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["name"])
    return names


def defines(module_file: Path, name: str) -> bool:
    """Whether a module's source binds ``name`` at some indentation: a class, function,
    assignment, annotated attribute or import (for re-exports)."""
    source = module_file.read_text(encoding="utf-8")
    pattern = rf"^\s*(?:(?:async\s+)?def\s+{name}\b|class\s+{name}\b|{name}\s*[:=]|from\s+\S+\s+import\s+.*\b{name}\b|import\s+.*\b{name}\b)"
    return re.search(pattern, source, flags=re.MULTILINE) is not None or name in _exported(source)


def _exported(source: str) -> set[str]:
    match = re.search(r"__all__\s*=\s*[\[(](.*?)[\])]", source, flags=re.DOTALL)
    return set(re.findall(r"[\"'](\w+)[\"']", match.group(1))) if match else set()


def resolve_dotted(parts: list[str], package_dir: Path) -> str | None:
    """None when ``package.a.b...`` names a module under ``package_dir`` (its parent for the
    first part), or a module and then one name defined in it; else why not."""
    here = package_dir
    for index, part in enumerate(parts):
        if (here / part).is_dir() and (here / part / "__init__.py").exists():
            here = here / part
            continue
        if (here / f"{part}.py").exists():
            module_file = here / f"{part}.py"
            rest = parts[index + 1 :]
            if not rest:
                return None
            if len(rest) == 1 and defines(module_file, rest[0]):
                return None
            return f"{'.'.join(rest)} is not defined in {module_file.relative_to(ROOT)}"
        if here.is_dir() and (here / "__init__.py").exists() and index > 0:
            init = here / "__init__.py"
            if len(parts) - index == 1 and defines(init, part):
                return None
            return f"no module or package {part!r} in {here.relative_to(ROOT)}"
        return f"no module or package {part!r} in {here.relative_to(ROOT)}"
    return None


def test_the_map_stays_a_map() -> None:
    lines = map_text().count("\n") + 1
    assert lines <= MAX_LINES, f"docs/architecture.md has {lines} lines (at most {MAX_LINES}): move the detail into a topic document and link it"


def test_every_kernel_module_the_map_names_exists() -> None:
    problems = []
    for span in code_spans(map_text()):
        for dotted in DOTTED_KERNEL_NAME.findall(span):
            parts = dotted.split(".")
            if parts[-1] in FILE_SUFFIXES:
                continue
            why = resolve_dotted(parts[1:], KERNEL_PACKAGE) if len(parts) > 1 else None
            if why:
                problems.append(f"`{dotted}`: {why}")
    assert not problems, "docs/architecture.md names kernel modules that do not exist:\n" + "\n".join(sorted(set(problems)))


def test_every_path_the_map_names_exists() -> None:
    problems = []
    text = map_text()
    candidates = [path for span in code_spans(text) for path in REPO_PATH.findall(span)]
    for path in candidates:
        if any(mark in path for mark in "<*{"):
            continue  # a pattern such as plugins/<name>/, not a path
        on_disk = ROOT / "kernel" / path if path.startswith("clawbot/") else ROOT / path
        if not on_disk.exists():
            problems.append(f"`{path}` (looked for {on_disk.relative_to(ROOT)})")
    for target in MARKDOWN_LINK.findall(text):
        if "://" in target:
            continue
        if not (MAP.parent / target).exists():
            problems.append(f"the link ({target}) leads to no file in docs/")
    assert not problems, "docs/architecture.md names paths that do not exist:\n" + "\n".join(sorted(set(problems)))


def kit_fixtures() -> set[str]:
    """The ``clawbot_*`` fixtures the test kit defines (``clawbot_home``): named like hooks."""
    source = (KERNEL_PACKAGE / "testing" / "pytest_plugin.py").read_text(encoding="utf-8")
    return set(re.findall(r"^(?:async\s+)?def\s+(clawbot_\w+)", source, flags=re.MULTILINE))


def test_every_hook_and_plugin_package_the_map_names_exists() -> None:
    hooks = set(hook_names())
    fixtures = kit_fixtures()
    packages = plugin_packages()
    problems = []
    for name in set(HOOK_OR_PLUGIN_PACKAGE.findall(map_text())):
        head, *rest = name.split(".")
        if (head in hooks or head in fixtures) and not rest:
            continue
        if head in packages:
            why = resolve_dotted([head, *rest], packages[head].parent) if rest else None
            if why:
                problems.append(f"`{name}`: {why}")
            continue
        problems.append(f"`{name}` is neither a hook in kernel/clawbot/hookspecs.py nor a plugin package under plugins/ nor a fixture of clawbot.testing")
    assert not problems, "docs/architecture.md names hooks or plugin packages that do not exist:\n" + "\n".join(sorted(problems))


def test_every_distribution_the_map_names_exists() -> None:
    known = workspace_distributions()
    named = set(DISTRIBUTION.findall(map_text()))
    unknown = sorted(named - known)
    assert not unknown, f"docs/architecture.md names distributions no pyproject.toml defines: {unknown}"


def test_the_map_names_every_hook() -> None:
    text = map_text()
    missing = [name for name in hook_names() if not re.search(rf"\b{name}\b", text)]
    assert not missing, f"docs/architecture.md's hook table (section 'Hooks') does not name these hooks of kernel/clawbot/hookspecs.py: {', '.join(missing)}"


def test_the_map_names_every_built_in_plugin() -> None:
    text = map_text()
    missing = [
        f"{name} (plugins/{folder.name}/)" for name, folder in built_in_distributions().items() if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)
    ]
    assert not missing, "docs/architecture.md's table of built-in plugins (section 'The built-in plugins') does not name: " + ", ".join(missing)


def test_the_checks_find_what_they_look_for() -> None:
    """The checks above are only worth something if their patterns see the names the map uses."""
    spans = code_spans("see `clawbot.gateway.outbox.Outbox` and `plugins/tools/`\n```\nclawbot.agent\n```")
    assert DOTTED_KERNEL_NAME.findall(" ".join(spans)) == ["clawbot.gateway.outbox.Outbox", "clawbot.agent"]
    assert REPO_PATH.findall(" ".join(spans)) == ["plugins/tools/"]
    assert resolve_dotted(["gateway", "outbox", "Outbox"], KERNEL_PACKAGE) is None
    assert resolve_dotted(["gateway", "no_such_module"], KERNEL_PACKAGE)
    assert resolve_dotted(["gateway", "outbox", "NoSuchThing"], KERNEL_PACKAGE)
    assert DISTRIBUTION.findall("`clawbot-memory` and clawbot-tool-audit, not clawbot-*") == ["clawbot-memory", "clawbot-tool-audit"]
    assert HOOK_OR_PLUGIN_PACKAGE.findall("`clawbot_tools` and `clawbot_memory.provider`") == ["clawbot_tools", "clawbot_memory.provider"]
