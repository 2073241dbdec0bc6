"""The hook reference and the hook tests keep up with ``clawbot.hookspecs``.

* every hook spec has a ``## <name>`` section in ``docs/plugins/hooks.md`` whose signature
  block names the spec's parameters, and a result rule;
* every hook spec has a test named ``test_hook_<name without clawbot_>...`` under ``tests/``;
* the reference names no ``clawbot_*`` hook that does not exist, and no ``test_hook_*``
  test is left behind for a hook that was renamed or removed.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import re
from pathlib import Path

from clawbot import hookspecs

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
HOOKS_DOC = ROOT / "docs" / "plugins" / "hooks.md"
PREFIX = "clawbot_"


def hook_names() -> list[str]:
    return hookspecs.hook_names()


def sections() -> dict[str, str]:
    """``## heading`` -> the text up to the next ``## `` heading."""
    text = HOOKS_DOC.read_text(encoding="utf-8")
    parts = re.split(r"^## +(.+?) *$", text, flags=re.MULTILINE)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def hook_test_names() -> set[str]:
    names = set()
    for path in TESTS.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        names.update(
            node.name
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_hook_")
        )
    return names


def covers(test: str, hook: str) -> bool:
    short = hook.removeprefix(PREFIX)
    return test == f"test_hook_{short}" or test.startswith(f"test_hook_{short}_")


def test_the_spec_list_is_complete() -> None:
    names = hook_names()
    defined = [n for n, v in vars(hookspecs).items() if n.startswith(PREFIX) and hasattr(v, "clawbot_spec")]
    assert names == defined and len(names) >= 20


def test_every_hook_has_a_section_in_the_reference() -> None:
    found = sections()
    missing = [name for name in hook_names() if name not in found]
    assert not missing, f"docs/plugins/hooks.md has no '## <hook>' section for: {', '.join(missing)}"


def test_each_section_shows_the_spec_signature_and_a_result_rule() -> None:
    found = sections()
    problems = []
    for name in hook_names():
        body = found.get(name)
        if body is None:
            continue  # reported by the test above
        match = re.search(rf"```python\s*\ndef {name}\(([^)]*)\)", body)
        expected = list(inspect.signature(getattr(hookspecs, name)).parameters)
        if match is None:
            problems.append(f"{name}: no ```python block with 'def {name}(...)'")
        else:
            params = [p.split(":")[0].strip() for p in match.group(1).split(",") if p.strip()]
            if params != expected:
                problems.append(f"{name}: documented parameters {params}, spec has {expected}")
        if "Result rule:" not in body:
            problems.append(f"{name}: no 'Result rule:'")
        if body.count("```python") < 2:
            problems.append(f"{name}: no example implementation")
    assert not problems, "\n".join(problems)


def test_every_hook_has_a_behavioural_test() -> None:
    tests = hook_test_names()
    missing = [name for name in hook_names() if not any(covers(t, name) for t in tests)]
    assert not missing, "no test named test_hook_<name>_... for: " + ", ".join(missing)


def test_no_hook_test_is_left_for_a_hook_that_does_not_exist() -> None:
    names = hook_names()
    stale = sorted(t for t in hook_test_names() if not any(covers(t, name) for name in names))
    assert not stale, f"tests named after no existing hook: {stale}"


def test_the_reference_names_only_existing_hooks() -> None:
    # The error message quoted for a misspelled hook names the misspelling on purpose.
    text = re.sub(r"unknown hook clawbot_\w+", "", HOOKS_DOC.read_text(encoding="utf-8"))
    mentioned = set(re.findall(r"(?<![\w.])clawbot_[a-z0-9_]*[a-z0-9]", text))
    known = set(hook_names())
    # Importable names (plugin packages such as a ``clawbot_<plugin>`` module) are not hooks.
    unknown = sorted(m for m in mentioned - known if importlib.util.find_spec(m) is None)
    assert not unknown, f"docs/plugins/hooks.md mentions hooks that do not exist: {unknown}"
    headed = {h for h in sections() if h.startswith(PREFIX)}
    assert headed <= known, f"sections for hooks that do not exist: {sorted(headed - known)}"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def test_every_example_is_a_valid_plugin_for_its_hook() -> None:
    """Each section's example runs, and pluggy accepts it as an implementation of that hook
    (argument names are checked against the spec, an unknown hook name is refused)."""
    import types

    from clawbot.plugins import create_plugin_manager

    problems = []
    for name, body in sections().items():
        if name not in hookspecs.hook_names():
            continue
        for index, source in enumerate(python_blocks(body)[1:], start=1):
            module = types.ModuleType(f"example_{name}_{index}")
            try:
                exec(compile(source, f"hooks.md:{name}:{index}", "exec"), module.__dict__)
            except Exception as exc:  # an example that does not even import is wrong
                problems.append(f"{name} example {index}: {type(exc).__name__}: {exc}")
                continue
            manager = create_plugin_manager(plugins={"example": module}, load_entrypoints=False, env={})
            record = manager.records["example"]
            if record.status != "loaded" or record.warnings or record.hooks != [name]:
                problems.append(f"{name} example {index}: {record.status} {record.error} {record.warnings} {record.hooks}")
    assert not problems, "\n".join(problems)
