"""The plugin manager: a typed facade over pluggy that isolates plugins from each other.

Built by :func:`create_plugin_manager`; there is no module-level manager. Plugins come from
entry points of the ``clawbot`` group and/or are passed in explicitly (tests, embedding).
A plugin that fails to import, declares an unknown hook, or raises inside a hook is recorded
with its name and error; every other plugin keeps working.
"""

from __future__ import annotations

import difflib
import inspect
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pluggy

from clawbot import hookspecs
from clawbot.plugins.arguments import hook_arguments
from clawbot.plugins.discovery import BlockRules, discover_entry_points
from clawbot.plugins.records import Contribution, HookFailure, PluginRecord
from clawbot.plugins.tracing import log_call, trace_log, tracing_enabled

KwargsFor = Callable[[str], Mapping[str, Any]]


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class PluginManager:
    """Loads plugins and calls their hooks with clawbot's result rules."""

    def __init__(self, *, trace: bool = False) -> None:
        self._pm = pluggy.PluginManager("clawbot")
        self._pm.add_hookspecs(hookspecs)
        self.records: dict[str, PluginRecord] = {}
        self.failures: list[HookFailure] = []
        self.trace = trace

    # ---------------------------------------------------------------- registration

    def load_entrypoints(self, rules: BlockRules | None = None) -> None:
        """Import and register every ``clawbot`` entry point that ``rules`` does not block."""
        rules = rules if rules is not None else BlockRules()
        for ep in discover_entry_points():
            dist = getattr(ep, "dist", None)
            dist_name = dist.name if dist is not None else None
            version = dist.version if dist is not None else None
            if ep.name in self.records:
                first = self.records[ep.name].distribution
                self.records[f"{ep.name} ({dist_name})"] = PluginRecord(
                    ep.name,
                    "failed",
                    dist_name,
                    version,
                    ep.value,
                    error=f"plugin name {ep.name!r} is already used by distribution {first}",
                )
                continue
            reason = rules.reason_blocked(ep.name)
            if reason:
                self.records[ep.name] = PluginRecord(ep.name, "blocked", dist_name, version, ep.value, error=reason)
                continue
            try:
                plugin = ep.load()
            except Exception as exc:  # a broken plugin must not break the others
                self.records[ep.name] = PluginRecord(ep.name, "failed", dist_name, version, ep.value, error=f"import failed: {_describe(exc)}")
                continue
            self.register(ep.name, plugin, distribution=dist_name, version=version)

    def register(self, name: str, plugin: object, *, distribution: str | None = None, version: str | None = None) -> PluginRecord:
        """Register ``plugin`` (a module or object with hook implementations) as ``name``."""
        module = getattr(plugin, "__name__", None) or type(plugin).__module__
        record = PluginRecord(name, "loaded", distribution, version, module)
        if self._pm.get_plugin(name) is not None:  # keep the first plugin's record intact
            record.status, record.error = "failed", f"plugin name {name!r} is already used by another plugin"
            self.records[f"{name} (duplicate)"] = record
            return record
        self.records[name] = record
        try:
            self._pm.register(plugin, name=name)
        except Exception as exc:  # pluggy validates signatures against the specs
            record.status, record.error = "failed", _describe(exc)
            return record
        unknown = [hc.name for hc in self._pm.get_hookcallers(plugin) or () if hc.spec is None]
        if unknown:
            self._pm.unregister(plugin)
            record.status, record.error = "failed", "; ".join(self._unknown_hook_message(h) for h in unknown)
            return record
        record.hooks = sorted(hc.name for hc in self._pm.get_hookcallers(plugin) or ())
        record.warnings = self._unmarked_functions(plugin)
        return record

    def _unknown_hook_message(self, hook: str) -> str:
        close = difflib.get_close_matches(hook, hookspecs.hook_names(), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        return f"unknown hook {hook}{hint}"

    @staticmethod
    def _unmarked_functions(plugin: object) -> list[str]:
        names = [n for n in dir(plugin) if n.startswith("clawbot_")]
        return [
            f"{n} is not marked with @hookimpl and is ignored"
            for n in names
            if callable(getattr(plugin, n, None)) and not hasattr(getattr(plugin, n), "clawbot_impl")
        ]

    def block(self, name: str, reason: str) -> None:
        """Unregister ``name`` (if loaded) and keep it from registering again."""
        plugin = self._pm.get_plugin(name)
        if plugin is not None:
            self._pm.unregister(plugin)
        self._pm.set_blocked(name)
        record = self.records.get(name)
        if record is None:
            self.records[name] = PluginRecord(name, "blocked", error=reason)
        else:
            record.status, record.error = "blocked", reason

    def check_pending(self) -> None:
        """Raise ``pluggy.PluginValidationError`` for any implementation of an unknown hook."""
        self._pm.check_pending()

    def get_plugin(self, name: str) -> object | None:
        return self._pm.get_plugin(name)

    def loaded(self) -> list[str]:
        return sorted(n for n, r in self.records.items() if r.status == "loaded")

    # ---------------------------------------------------------------- calling

    def hookimpls(self, hook: str) -> list[Any]:
        """Every implementation of ``hook``, wrappers included, in pluggy's registration
        order: wrappers after plain ones, each group called last to first."""
        return list(getattr(self._pm.hook, hook).get_hookimpls())

    def impls(self, hook: str) -> list[Any]:
        """Plain (non-wrapper) implementations of ``hook`` in pluggy's calling order."""
        caller = getattr(self._pm.hook, hook)
        return [i for i in reversed(caller.get_hookimpls()) if not (i.wrapper or i.hookwrapper)]

    def call_impl_sync(self, hook: str, impl: Any, **kwargs: Any) -> tuple[bool, Any]:
        """Call one implementation of a synchronous hook; ``(False, None)`` if it failed."""
        ok, result = self._call_impl(hook, impl, kwargs)
        if ok and inspect.isawaitable(result):
            if hasattr(result, "close"):
                result.close()
            self.record_failure(impl.plugin_name, hook, TypeError(f"{hook} must be synchronous"))
            return False, None
        return ok, result

    def _call_impl(self, hook: str, impl: Any, kwargs: Mapping[str, Any]) -> tuple[bool, Any]:
        started = time.perf_counter()
        try:
            result = impl.function(*hook_arguments(impl, kwargs))
        except Exception as exc:
            self.record_failure(impl.plugin_name, hook, exc)
            if self.trace:
                log_call(hook, impl.plugin_name, time.perf_counter() - started, "raised")
            return False, None
        if self.trace and not inspect.isawaitable(result):
            log_call(hook, impl.plugin_name, time.perf_counter() - started)
        return True, result

    async def _await(self, hook: str, plugin: str, result: Any) -> tuple[bool, Any]:
        if not inspect.isawaitable(result):
            return True, result
        started = time.perf_counter()
        try:
            value = await result
        except Exception as exc:
            self.record_failure(plugin, hook, exc)
            return False, None
        if self.trace:
            log_call(hook, plugin, time.perf_counter() - started, "awaited")
        return True, value

    def record_failure(self, plugin: str, hook: str, exc: BaseException) -> None:
        failure = HookFailure(plugin, hook, _describe(exc))
        self.failures.append(failure)
        errors = trace_log.getChild("errors")
        # One line for users; the traceback is for plugin authors (logging.level = "debug").
        errors.warning("plugin %s failed in %s: %s", plugin, hook, failure.error)
        errors.debug("traceback of that failure:\n%s", "".join(traceback.format_exception(exc)))

    def call_each_sync(self, hook: str, kwargs_for: KwargsFor | None = None, **kwargs: Any) -> list[Contribution]:
        """Call every implementation of a synchronous hook; results keep their plugin name."""
        out: list[Contribution] = []
        for impl in self.impls(hook):
            ok, result = self.call_impl_sync(hook, impl, **(kwargs_for(impl.plugin_name) if kwargs_for else kwargs))
            if ok:
                out.append(Contribution(impl.plugin_name, result))
        return out

    async def call_impl(self, hook: str, impl: Any, **kwargs: Any) -> tuple[bool, Any]:
        """Call one implementation and await its result; ``(False, None)`` if it failed."""
        ok, result = self._call_impl(hook, impl, kwargs)
        if ok:
            ok, result = await self._await(hook, impl.plugin_name, result)
        return ok, result

    async def call_each(self, hook: str, kwargs_for: KwargsFor | None = None, **kwargs: Any) -> list[Contribution]:
        """Call every implementation, awaiting awaitables; failures are recorded and skipped."""
        out: list[Contribution] = []
        for impl in self.impls(hook):
            ok, result = await self.call_impl(hook, impl, **(kwargs_for(impl.plugin_name) if kwargs_for else kwargs))
            if ok:
                out.append(Contribution(impl.plugin_name, result))
        return out

    async def collect(self, hook: str, kwargs_for: KwargsFor | None = None, **kwargs: Any) -> list[Contribution]:
        """A collect-all hook: flatten the lists every plugin returned, skipping ``None``."""
        out: list[Contribution] = []
        for contribution in await self.call_each(hook, kwargs_for, **kwargs):
            value = contribution.value
            if value is None:
                continue
            items = value if isinstance(value, list | tuple) else [value]
            out.extend(Contribution(contribution.plugin, item) for item in items)
        return out

    async def notify(self, hook: str, **kwargs: Any) -> None:
        """A notification hook: run every implementation; errors are recorded, never raised."""
        await self.call_each(hook, **kwargs)

    # ---------------------------------------------------------------- typed facade

    async def before_tool_call(self, event: Any) -> Any:
        """``clawbot_before_tool_call`` as a chain; see :mod:`clawbot.plugins.chains`."""
        # deferred: the chains load the value types, which `clawbot --help` (listing commands) never needs
        from clawbot.plugins.chains import before_tool_call

        return await before_tool_call(self, event)

    async def message_sending(self, event: Any) -> Any:
        """``clawbot_message_sending`` as a chain; ``None`` when a plugin cancelled."""
        from clawbot.plugins.chains import message_sending  # deferred: as in before_tool_call

        return await message_sending(self, event)

    def bootstrap_files(self, ctx: Any) -> list[Any]:
        """``clawbot_bootstrap_files`` with its overrides; see :mod:`clawbot.plugins.chains`."""
        from clawbot.plugins.chains import bootstrap_files  # deferred: as in before_tool_call

        return list(bootstrap_files(self, ctx) or [])


def create_plugin_manager(
    *,
    plugins: Mapping[str, object] | Iterable[tuple[str, object]] = (),
    load_entrypoints: bool = True,
    rules: BlockRules | None = None,
    env: Mapping[str, str] | None = None,
) -> PluginManager:
    """Build a plugin manager.

    ``plugins`` are registered explicitly (name -> module or object), before entry points.
    ``rules`` decides which names are blocked; by default only ``CLAWBOT_DISABLE_PLUGINS``
    applies. Tests pass ``load_entrypoints=False`` to get exactly the plugins they name.
    """
    rules = rules if rules is not None else BlockRules.build(env=env)
    manager = PluginManager(trace=tracing_enabled(env))
    items = plugins.items() if isinstance(plugins, Mapping) else plugins
    for name, plugin in items:
        reason = rules.reason_blocked(name)
        if reason:
            manager.records[name] = PluginRecord(name, "blocked", module=getattr(plugin, "__name__", None), error=reason)
            continue
        manager.register(name, plugin)
    if load_entrypoints:
        manager.load_entrypoints(rules)
    return manager
