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
        names.update(node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_hook_"))
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


# ======================================================================================
# Each hook says when it is called and names only configuration keys that exist
# ======================================================================================


def test_every_spec_says_when_it_is_called_and_its_result_rule() -> None:
    problems = []
    for name in hook_names():
        doc = inspect.getdoc(getattr(hookspecs, name)) or ""
        if "Called" not in doc:
            problems.append(f"{name}: the docstring does not say when it is called ('Called ...')")
        if "Result rule:" not in doc:
            problems.append(f"{name}: the docstring has no 'Result rule:'")
        body = sections().get(name, "")
        if "**When:**" not in body:
            problems.append(f"{name}: the reference section has no '**When:**'")
    assert not problems, "\n".join(problems)


def config_paths() -> set[str]:
    """Every key path the configuration accepts: the core schema and the default plugins'
    tables, with list items written ``[i]``-less (``agents.list.id``)."""
    import attrs
    from clawbot.boot import load
    from clawbot.config import CoreConfig

    def walk(cl: type, prefix: str) -> set[str]:
        attrs.resolve_types(cl)
        found = set()
        for field in attrs.fields(cl):
            path = f"{prefix}.{field.name}" if prefix else field.name
            found.add(path)
            inner = [t for t in (field.type, *getattr(field.type, "__args__", ())) if attrs.has(t)]
            for t in inner:
                found |= walk(t, path)
        return found

    paths = walk(CoreConfig, "")
    defaults = load(None, env={"HOME": "/nonexistent", "CLAWBOT_HOME": "/nonexistent"}, cwd=ROOT / "docs")
    for table, section in defaults.config.sections.items():
        paths.add(table)
        if section is not None:
            paths |= walk(type(section), table)
    return paths


def mentioned_config_keys(text: str) -> set[str]:
    """Dotted names in code spans that start at a configuration table (``memory.provider``,
    ``[plugins.<name>]``, ``agents.list[i].model``), with list subscripts removed."""
    import attrs
    from clawbot.config import CoreConfig
    from clawbot.config.schema import PLUGIN_ROOTS

    roots = {f.name for f in attrs.fields(CoreConfig)} | set(PLUGIN_ROOTS)
    found = set()
    for span in re.findall(r"`+\[{0,2}([a-z_]+(?:\.[A-Za-z0-9_<>\[\]-]+)+)\]{0,2}`+", text):
        key = re.sub(r"\[[^\]]*\]", "", span)
        if re.search(r"\.(md|py|toml|json|txt|ya?ml)$", key):  # a file name (memory.md), not a key
            continue
        if key.split(".")[0] in roots:
            found.add(key)
    return found


def test_the_hook_docs_name_only_config_keys_the_schema_accepts() -> None:
    known = config_paths()
    texts = {f"hookspecs.{name}": inspect.getdoc(getattr(hookspecs, name)) or "" for name in hook_names()}
    texts["hookspecs module"] = hookspecs.__doc__ or ""
    texts["docs/plugins/hooks.md"] = HOOKS_DOC.read_text(encoding="utf-8")
    problems = []
    for where, text in texts.items():
        for key in sorted(mentioned_config_keys(text)):
            parts = key.split(".")
            if "<" in key:  # a placeholder: the part before it must exist (or be a plugin root)
                head = ".".join(parts[: next(i for i, p in enumerate(parts) if "<" in p)])
                if head in known or head in {"plugins", "channels", "providers"}:
                    continue
            elif key in known:
                continue
            problems.append(f"{where} names {key!r}, which the configuration does not accept")
    assert not problems, "\n".join(problems)


def test_the_config_key_check_sees_keys() -> None:
    """The check above is only worth something if it finds the keys the docs do name."""
    keys = mentioned_config_keys(HOOKS_DOC.read_text(encoding="utf-8"))
    assert {"memory.provider", "agents.defaults.compaction.strategy", "plugins.deny"} <= keys, keys
    assert "unknown.key" not in mentioned_config_keys("`unknown.key`")
    assert "memory.provder" in mentioned_config_keys("set `memory.provder`")


# ======================================================================================
# Every hook has a test proving that the kernel itself calls it
# ======================================================================================

EMISSION_MARK = "hook_emission"
# Hooks whose emitting flow lands with another change, with where it comes from. An entry
# is refused as soon as the kernel names the hook anywhere but in hookspecs.py: then the
# flow exists and its test must carry the mark.
PENDING_EMISSION: dict[str, str] = {}
# Calls that emit a hook: a test that makes them itself proves nothing about the kernel.
EMITTING_CALLS = {"notify", "before_tool_call", "message_sending", "bootstrap_files", "collect", "call_impl"}


def all_test_files() -> list[Path]:
    return [*TESTS.rglob("test_*.py"), *(ROOT / "plugins").glob("*/tests/**/test_*.py")]


def emission_tests() -> dict[str, list[tuple[str, ast.AST]]]:
    """hook -> [(test id, function node)] of tests marked ``@pytest.mark.hook_emission(hook, ...)``."""
    found: dict[str, list[tuple[str, ast.AST]]] = {}
    for path in all_test_files():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith(f"mark.{EMISSION_MARK}"):
                    for arg in decorator.args:
                        hook = arg.value if isinstance(arg, ast.Constant) else ast.unparse(arg)
                        found.setdefault(hook, []).append((f"{path.relative_to(ROOT)}::{node.name}", node))
    return found


def test_every_hook_has_a_test_of_the_kernel_emitting_it() -> None:
    marked = emission_tests()
    missing = [name for name in hook_names() if name not in marked and name not in PENDING_EMISSION]
    assert not missing, (
        f"no test shows the kernel calling these hooks in a real flow; write one and mark it @pytest.mark.{EMISSION_MARK}(<hook>): {', '.join(missing)}"
    )
    unknown = sorted(set(marked) - set(hook_names()))
    assert not unknown, f"tests marked {EMISSION_MARK} for hooks that do not exist: {unknown}"


def test_pending_emissions_are_only_those_the_kernel_does_not_emit_yet() -> None:
    kernel_text = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "kernel" / "clawbot").rglob("*.py") if path.name != "hookspecs.py")
    marked = emission_tests()
    stale = [hook for hook in PENDING_EMISSION if hook in marked or f'"{hook}"' in kernel_text]
    assert not stale, (
        f"the kernel now emits {stale}: mark the test of that flow @pytest.mark.{EMISSION_MARK}(...) "
        "and remove the hook from PENDING_EMISSION in tests/test_docs.py"
    )
    assert set(PENDING_EMISSION) <= set(hook_names())


def test_an_emission_test_does_not_call_the_hook_itself() -> None:
    problems = []
    for hook, tests in emission_tests().items():
        for test_id, node in tests:
            for call in (n for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)):
                name = call.func.attr
                if name in EMITTING_CALLS or name.startswith("clawbot_") and ".hook." in ast.unparse(call.func):
                    problems.append(f"{test_id} (marked for {hook}) calls {ast.unparse(call.func)}() itself")
    assert not problems, "\n".join(sorted(set(problems)))
