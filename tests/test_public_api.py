"""The public plugin API (docs/plugins/api.md) is what the import contracts enforce.

import-linter's ``forbidden`` contracts list modules, so "everything but the public API" is
written out in ``pyproject.toml``. These tests keep that list complete: a module added under
``kernel/clawbot`` is either declared public in api.md or forbidden to plugins, every plugin
package on disk is checked, and the plugin template's tests (which a new plugin starts from)
and every bundled plugin's tests import only public modules too (a failure names the file,
the line and what to use instead).
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


#: internal module (or its package) -> what a plugin's test uses instead, named in the failure
INSTEAD = {
    "clawbot.agent.conversation": "kernel.run_turn(provider, text) or kernel.conversation(provider) (clawbot.testing.TestKernel)",
    "clawbot.agent.models": "kernel.run_turn(provider, text, model=...) or kernel.conversation(provider, model=...)",
    "clawbot.agent.runtime": "kernel.agents(chat=...) (clawbot.testing.TestAgents: tool_services, approvals, conversation, gateway)",
    "clawbot.agent.services": "kernel.agents(chat=...).tool_services(agent_id, session_key, origin=..., trust=...)",
    "clawbot.agent.approvals": "kernel.agents().approvals (answer, decide, show, requests) and clawbot.testing.approval_notice",
    "clawbot.agent.bootstrap": "kernel.bootstrap_files(ctx); NotLoaded and Excerpt from clawbot.promptkit",
    "clawbot.agent.prompt": "kernel.prompt_sections(ctx)",
    "clawbot.agent.toolrun": "clawbot.testing.schema_problem",
    "clawbot.gateway": "kernel.gateway(respond) or kernel.agents().gateway() (clawbot.testing.TestGateway); kernel.enabled_channels()",
    "clawbot.cli": "clawbot.testing.cli.invoke_cli (the clawbot command in this process)",
    "clawbot.config": "ConfigError, ConfigProblem and config_with_agent_defaults from clawbot.testing; kernel.config",
    "clawbot.plugins": "HookFailure and create_plugin_manager from clawbot.testing; kernel.plugin_failures, kernel.collect(hook)",
    "clawbot.kernel": "clawbot.testing.build_kernel or the make_kernel fixture (a TestKernel)",
    "clawbot.boot": "clawbot.testing.build_kernel or the make_kernel fixture (a TestKernel)",
}
#: names of public test-kit modules that are the kernel's own (its tests reach the internal Kernel with them)
KERNEL_ONLY_NAMES = {("clawbot.testing.kernels", "boot_kernel")}


def imports_of(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name imported from it or ``None``) for every absolute import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.extend((node.lineno, node.module, alias.name) for alias in node.names)
    return sorted(found)


def non_public_imports(paths: list[Path]) -> list[str]:
    """``file:line imports X; use Y`` for each import of a clawbot module api.md does not declare public."""
    public = public_modules() - {"clawbot"}
    problems = []
    for path in paths:
        for line, module, name in imports_of(path):
            if module != "clawbot" and not module.startswith("clawbot."):
                continue
            where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{line}"
            if (module, name) in KERNEL_ONLY_NAMES:
                problems.append(f"{where} imports {module}.{name}, the kernel's own; use {INSTEAD['clawbot.kernel']}")
            elif module != "clawbot" and not any(module == p or module.startswith(p + ".") for p in public):
                hint = next((use for prefix, use in INSTEAD.items() if module == prefix or module.startswith(prefix + ".")), None)
                problems.append(f"{where} imports {module}; use {hint or 'a module of docs/plugins/api.md'}")
    return problems


ADVICE = (
    "\nA plugin's tests import only the modules of docs/plugins/api.md, as a third-party author's must; "
    "clawbot.testing offers a TestKernel (make_kernel) with run_turn, conversation, gateway, agents, bootstrap_files, "
    "prompt_sections. A test that checks the kernel's own behaviour belongs in tests/."
)


def test_the_plugin_template_and_its_tests_use_only_the_public_api() -> None:
    problems = non_public_imports(sorted((ROOT / "plugin-template").rglob("*.py")))
    assert not problems, "the template must use only the modules of docs/plugins/api.md:\n" + "\n".join(problems) + ADVICE


def test_the_bundled_plugins_tests_use_only_the_public_api() -> None:
    folders = sorted(folder / "tests" for folder in (ROOT / "plugins").iterdir() if (folder / "tests").is_dir())
    assert len(folders) >= 10, folders
    problems = non_public_imports([path for folder in folders for path in sorted(folder.rglob("*.py"))])
    assert not problems, "a bundled plugin's tests import kernel internals:\n" + "\n".join(problems) + ADVICE


def test_the_check_names_the_file_the_line_and_what_to_use(tmp_path: Path) -> None:
    offender = tmp_path / "test_gateway_use.py"
    offender.write_text("import os\nfrom clawbot.testing import build_kernel\nfrom clawbot.gateway.runner import Gateway\n", encoding="utf-8")
    assert non_public_imports([offender]) == [
        f"{offender}:3 imports clawbot.gateway.runner; use "
        "kernel.gateway(respond) or kernel.agents().gateway() (clawbot.testing.TestGateway); kernel.enabled_channels()"
    ]
