"""The kernel names no tool: tool order, profiles and groups are the data of the plugins that
provide the tools (``Tool.order``, ``Tool.profiles``, ``Tool.group``), so a tool can come, go
or move between plugins without a kernel change.

Every tool the bundled plugins register is collected from a real kernel; no kernel module
(the test kit aside) may hold a string literal equal to one of those names, or a
``group:<name>`` pattern.
"""

from __future__ import annotations

import ast
from pathlib import Path

import clawbot

KERNEL = Path(clawbot.__file__).parent
OUTSIDE_THE_PRODUCT = ("testing",)  # the test kit builds example tools of its own

#: Tool names that are also words the kernel uses in its own sense; a literal equal to one
#: of them is that word, not the tool.
ORDINARY_WORDS = {
    "message": "a transcript entry's type and a JSON field",
    "cron": "a schedule kind, a session kind and a CLI command",
    "edit": "a channel capability: a sent message can be edited",
    "ls": "a key of the confusable-letters table",
}

#: Modules still on their way out of the kernel to a plugin; each entry fails the test once
#: its module is gone, so it is removed with the move.
MOVING_OUT: dict[str, str] = {}


async def _bundled_tool_names(make_kernel) -> set[str]:
    kernel = await make_kernel(load_entrypoints=True, env={"BRAVE_API_KEY": "offer-web-search"})
    try:
        return {tool.name for tool in kernel.tools}
    finally:
        await kernel.aclose()


def _kernel_modules() -> list[Path]:
    return [p for p in sorted(KERNEL.rglob("*.py")) if p.relative_to(KERNEL).parts[0] not in OUTSIDE_THE_PRODUCT]


def _naming_literals(path: Path, tool_names: set[str]) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        text = node.value.strip()
        group = text.lower().startswith("group:") and len(text) > len("group:")
        if group or (text in tool_names and text not in ORDINARY_WORDS):
            found.append(f"{path.relative_to(KERNEL.parent)}:{node.lineno}: {node.value!r}")
    return found


async def test_no_kernel_module_names_a_bundled_tool_or_a_tool_group(make_kernel) -> None:
    tool_names = await _bundled_tool_names(make_kernel)
    assert {"read", "exec", "web_search", "sessions_send", "memory_search"} <= tool_names  # the bundled plugins loaded
    moving = {KERNEL / module for module in MOVING_OUT}
    found = [hit for path in _kernel_modules() if path not in moving for hit in _naming_literals(path, tool_names)]
    assert found == [], "kernel modules name tools; declare the data on the Tool instead:\n" + "\n".join(found)


def test_every_module_on_its_way_out_is_still_in_the_kernel() -> None:
    gone = [module for module in MOVING_OUT if not (KERNEL / module).exists()]
    assert gone == [], f"moved out of the kernel: remove {gone} from MOVING_OUT"
