"""Building fresh kernels for tests: exactly the plugins named, a private state dir.

Plugin tests get a :class:`~clawbot.testing.TestKernel` (:func:`build_kernel`, the
``make_kernel`` fixture): what a plugin registered, its settings, and real turns and
gateways to run it in. The kernel's own tests reach further in with :func:`boot_kernel`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from clawbot import hookimpl
from clawbot.boot import load
from clawbot.kernel import Kernel, bootstrap
from clawbot.testing.kernel_view import TestKernel


def plugin_from_hooks(**hooks: Callable[..., Any]) -> object:
    """A plugin object from plain functions: ``plugin_from_hooks(clawbot_tools=lambda ctx: [...])``.

    Each function must use the hook's parameter names (pluggy matches by name).
    """
    return SimpleNamespace(**{name: hookimpl(function) for name, function in hooks.items()})


async def boot_kernel(
    home: Path,
    *,
    plugins: Mapping[str, object] | None = None,
    config: str | None = None,
    load_entrypoints: bool = False,
    env: Mapping[str, str] | None = None,
) -> Kernel:
    """The kernel's internal ``Kernel``, for the kernel's own tests (not part of the plugin API).

    Its state dir is ``home`` and its config ``config`` (TOML text). By default only
    ``plugins`` are registered (no entry points), so a test sees exactly the behaviour of the
    plugins it names.
    """
    home.mkdir(parents=True, exist_ok=True)
    environment = {"CLAWBOT_HOME": str(home), "HOME": str(home), **(env or {})}
    config_path = None
    if config is not None:
        config_path = home / "clawbot.toml"
        config_path.write_text(config, encoding="utf-8")
    loaded = load(config_path, env=environment, cwd=home, plugins=plugins or {}, load_entrypoints=load_entrypoints)
    return await bootstrap(loaded)


async def build_kernel(
    home: Path,
    *,
    plugins: Mapping[str, object] | None = None,
    config: str | None = None,
    load_entrypoints: bool = False,
    env: Mapping[str, str] | None = None,
) -> TestKernel:
    """A kernel whose state dir is ``home`` and whose config is ``config`` (TOML text).

    By default only ``plugins`` are registered (no entry points), so a test sees exactly
    the behaviour of the plugins it names. A configuration the plugins' schemas refuse raises
    :class:`~clawbot.testing.ConfigError`.
    """
    return TestKernel(await boot_kernel(home, plugins=plugins, config=config, load_entrypoints=load_entrypoints, env=env))
