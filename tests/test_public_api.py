"""The public plugin API (docs/plugins/api.md) is what the import contracts enforce.

import-linter's ``forbidden`` contracts list modules, so "everything but the public API" is
written out in ``pyproject.toml``. These tests keep that list complete: a module added under
``kernel/clawbot`` is either declared public in api.md or forbidden to plugins, every plugin
package on disk is checked, and the plugin template's tests (which a new plugin starts from)
import only public modules too.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL = ROOT / "kernel" / "clawbot"
API_DOC = ROOT / "docs" / "plugins" / "api.md"
CI_RUN = ROOT / ".ci" / "run"
LEAF_ALLOWED = {"clawbot.types", "clawbot.safetext", "clawbot._confusables"}


def public_modules() -> set[str]:
    """The modules in the first column of api.md's table."""
    return set(re.findall(r"^\| `(clawbot(?:\.\w+)?)` \|", API_DOC.read_text(encoding="utf-8"), flags=re.MULTILINE))


def kernel_modules() -> set[str]:
    """Every top-level module and package of the kernel, as found on disk."""
    found = set()
    for path in KERNEL.iterdir():
        if path.is_dir() and (path / "__init__.py").exists():
            found.add(f"clawbot.{path.name}")
        elif path.suffix == ".py" and path.name != "__init__.py":
            found.add(f"clawbot.{path.stem}")
    return found


def plugin_packages() -> dict[str, Path]:
    """Import package -> its project folder, for every plugin and the plugin template."""
    folders = [*sorted((ROOT / "plugins").iterdir()), ROOT / "plugin-template"]
    return {package.name: folder for folder in folders for package in folder.glob("clawbot_*") if (package / "__init__.py").exists()}


def importlinter() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]


def contract(name_start: str) -> dict:
    return next(c for c in importlinter()["contracts"] if c["name"].startswith(name_start))


def test_the_public_api_is_declared_and_exists() -> None:
    public = public_modules()
    assert {"clawbot", "clawbot.types", "clawbot.promptkit", "clawbot.testing"} <= public, public
    assert public - {"clawbot"} <= kernel_modules(), f"api.md names modules that do not exist: {public - kernel_modules()}"


def test_plugins_are_forbidden_every_internal_module() -> None:
    forbidden = set(contract("Plugins")["forbidden_modules"])
    internal = kernel_modules() - public_modules()
    assert forbidden == internal, (
        f"pyproject.toml's plugin contract must forbid exactly the modules api.md does not declare public; "
        f"missing: {sorted(internal - forbidden)}, not internal: {sorted(forbidden - internal)}"
    )


def test_the_value_types_may_use_no_other_kernel_module() -> None:
    forbidden = set(contract("The value types")["forbidden_modules"])
    expected = kernel_modules() - LEAF_ALLOWED
    assert forbidden == expected, f"missing: {sorted(expected - forbidden)}, extra: {sorted(forbidden - expected)}"


def test_every_plugin_package_is_under_contract() -> None:
    packages = set(plugin_packages())
    assert "clawbot_example_tool" in packages and "clawbot_tools" in packages
    assert packages <= set(importlinter()["root_packages"])
    assert set(contract("Plugins")["source_modules"]) == packages
    assert set(contract("The kernel never names")["forbidden_modules"]) == packages


def test_ci_puts_every_uninstalled_plugin_on_the_import_check_path() -> None:
    """lint-imports can only check a package it can import."""
    line = next(line for line in CI_RUN.read_text(encoding="utf-8").splitlines() if "lint-imports" in line and "PYTHONPATH=" in line)
    on_path = set(re.search(r"PYTHONPATH=(\S+)", line)[1].split(":"))
    missing = [
        str(folder.relative_to(ROOT))
        for package, folder in plugin_packages().items()
        if importlib.util.find_spec(package) is None and str(folder.relative_to(ROOT)) not in on_path
    ]
    assert not missing, f".ci/run's lint-imports line must put these on PYTHONPATH: {missing}"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_the_plugin_template_and_its_tests_use_only_the_public_api() -> None:
    public = public_modules()
    problems = []
    for path in sorted((ROOT / "plugin-template").rglob("*.py")):
        for module in sorted(imported_modules(path)):
            if module != "clawbot" and not module.startswith("clawbot."):
                continue
            if not any(module == p or module.startswith(p + ".") for p in public - {"clawbot"}) and module != "clawbot":
                problems.append(f"{path.relative_to(ROOT)} imports {module}")
    assert not problems, "the template must use only the modules of docs/plugins/api.md:\n" + "\n".join(problems)
