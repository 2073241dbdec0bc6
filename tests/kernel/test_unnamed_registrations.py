"""An item a plugin registers without a usable name is that plugin's failure, never a crashed boot."""

from __future__ import annotations

from typing import Any

import pytest
from clawbot import Tool, ToolResult
from clawbot.kernel import REGISTRATION_HOOKS
from clawbot.testing import plugin_from_hooks


def _nameless(kind: type, name: object) -> Any:
    """An instance of ``kind`` (abstract or not) whose ``name`` is ``name``, or unset for ``...``."""
    subclass = type(f"Nameless{kind.__name__}", (kind,), {} if name is ... else {"name": name})
    subclass.__abstractmethods__ = frozenset()  # only its name matters here: no method is ever called
    return object.__new__(subclass)


def _item(kind: type, name: object) -> Any:
    if kind is Tool:  # a tool's parameters are read at boot, so it must be a real one
        return Tool("" if name is ... else name, "Does nothing.", {"type": "object"}, lambda call: ToolResult.text("ok"))  # type: ignore[arg-type]
    return _nameless(kind, name)


ROWS = [(hook, name) for hook in REGISTRATION_HOOKS for name in (..., "", 7)]


@pytest.mark.parametrize(("hook", "name"), ROWS, ids=[f"{hook}-{name!r}" for hook, name in ROWS])
async def test_an_item_without_a_usable_name_is_left_out_and_recorded_against_its_plugin(make_kernel, hook: str, name: object) -> None:
    attribute, kind, label = REGISTRATION_HOOKS[hook]
    item = _item(kind, name)
    kernel = await make_kernel(plugins={"sloppy": plugin_from_hooks(**{hook: lambda ctx: [item]})})
    assert all(registered is not item for registered in getattr(kernel, attribute))
    (failure,) = [failure for failure in kernel.plugins.failures if failure.plugin == "sloppy"]
    assert failure.hook == hook
    assert "'sloppy'" in failure.error and hook in failure.error and label in failure.error and "no usable name" in failure.error
