"""The ``clawbot_bootstrap_files`` chain: pluggy's rules, each implementation run once.

The default loader's list is edited by ``@hookimpl(wrapper=True)`` overrides. The kernel
runs the chain itself, one implementation at a time, so a failure is pinned on its plugin
without retrying the whole call; for healthy plugins the result is exactly pluggy's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pluggy
import pytest
from clawbot import BootstrapContext, BootstrapFile, hookimpl, hookspecs
from clawbot.plugins import HookFailure, create_plugin_manager

HOOK = "clawbot_bootstrap_files"


def file(name: str) -> BootstrapFile:
    return BootstrapFile(name, Path("/ws") / name, name.lower())


class Loader:
    def __init__(self, names: list[str], log: list[str]) -> None:
        self.names, self.log = names, log

    @hookimpl
    def clawbot_bootstrap_files(self, ctx):
        self.log.append(f"load {self.names}")
        return [file(n) for n in self.names]


class Declines:
    @hookimpl
    def clawbot_bootstrap_files(self, ctx):
        return None


class Appends:
    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    @hookimpl(wrapper=True)
    def clawbot_bootstrap_files(self, ctx):
        self.log.append(f"enter {self.name}")
        files = yield
        self.log.append(f"leave {self.name}")
        return [*(files or []), file(self.name)]


class OldStyle:
    @hookimpl(hookwrapper=True)
    def clawbot_bootstrap_files(self, ctx):
        outcome = yield
        outcome.force_result([f for f in outcome.get_result() if f.name != "SOUL.md"])


class Trylast:
    @hookimpl(wrapper=True, trylast=True)
    def clawbot_bootstrap_files(self, ctx):
        files = yield
        return [file("LAST.md"), *files]


class FailsEarly:
    @hookimpl(wrapper=True)
    def clawbot_bootstrap_files(self, ctx):
        raise RuntimeError("no config")
        yield  # pragma: no cover


class YieldsTwice:
    @hookimpl(wrapper=True)
    def clawbot_bootstrap_files(self, ctx):
        yield
        yield
        return []


class RaisesLoading:
    @hookimpl
    def clawbot_bootstrap_files(self, ctx):
        raise OSError("disk gone")


def ctx() -> BootstrapContext:
    return BootstrapContext("main", Path("/ws"), session_kind="main")


def pluggy_result(plugins: dict[str, object]) -> Any:
    """What pluggy itself returns for the same plugins (the reference semantics)."""
    pm = pluggy.PluginManager("clawbot")
    pm.add_hookspecs(hookspecs)
    for name, plugin in plugins.items():
        pm.register(plugin, name=name)
    return pm.hook.clawbot_bootstrap_files(ctx=ctx())


def healthy_sets(log: list[str]) -> list[dict[str, object]]:
    return [
        {"loader": Loader(["AGENTS.md", "SOUL.md"], log)},
        {"loader": Loader(["AGENTS.md"], log), "a": Appends("A.md", log), "b": Appends("B.md", log)},
        {"loader": Loader(["AGENTS.md", "SOUL.md"], log), "old": OldStyle(), "a": Appends("A.md", log)},
        {"a": Appends("A.md", log), "last": Trylast(), "loader": Loader(["X.md"], log), "none": Declines()},
        {"loader": Loader(["AGENTS.md"], log), "second": Loader(["OTHER.md"], log)},  # the later one answers first
        {"none": Declines(), "wrap": Appends("A.md", log)},  # no result at all
    ]


@pytest.mark.parametrize("index", range(6))
def test_healthy_plugins_get_exactly_what_pluggy_gives(index: int) -> None:
    ours_log: list[str] = []
    theirs_log: list[str] = []
    ours = create_plugin_manager(plugins=healthy_sets(ours_log)[index], load_entrypoints=False, env={})
    got = ours.bootstrap_files(ctx())
    expected = pluggy_result(healthy_sets(theirs_log)[index])
    assert got == list(expected or [])
    assert ours_log == theirs_log  # the same calls in the same order
    assert ours.failures == []


def test_every_implementation_runs_once_even_when_one_fails() -> None:
    log: list[str] = []
    plugins = {"loader": Loader(["AGENTS.md"], log), "a": Appends("A.md", log), "broken": FailsEarly(), "b": Appends("B.md", log), "late": RaisesLoading()}
    pm = create_plugin_manager(plugins=plugins, load_entrypoints=False, env={})
    files = pm.bootstrap_files(ctx())
    assert [f.name for f in files] == ["AGENTS.md", "A.md", "B.md"]
    assert log == ["enter B.md", "enter A.md", "load ['AGENTS.md']", "leave A.md", "leave B.md"]
    assert pm.failures == [
        HookFailure("broken", HOOK, "RuntimeError: no config"),
        HookFailure("late", HOOK, "OSError: disk gone"),
    ]


def test_a_wrapper_that_yields_twice_is_left_out() -> None:
    log: list[str] = []
    pm = create_plugin_manager(
        plugins={"loader": Loader(["AGENTS.md"], log), "twice": YieldsTwice(), "a": Appends("A.md", log)}, load_entrypoints=False, env={}
    )
    assert [f.name for f in pm.bootstrap_files(ctx())] == ["AGENTS.md", "A.md"]
    (failure,) = pm.failures
    assert failure.plugin == "twice" and "yielded more than once" in failure.error
