"""``clawbot --help`` stays cheap: it loads each plugin's entry module and nothing behind it.

Listing the commands discovers every installed plugin and calls its ``clawbot_commands``;
what that imports, every ``clawbot`` invocation pays for. A plugin's entry module imports
only ``hookimpl`` and loads the rest inside the hook that needs it (a command group through
``clawbot.commandkit.LazyCommand``), and the kernel's CLI start loads neither the value types
nor an event loop nor an HTTP client. The modules are asserted, not the time: the machine
running the tests may be busy.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys
from importlib.metadata import entry_points
from clawbot.cli.main import main
try:
    main(['--help'])
except SystemExit:
    pass
print(json.dumps({
    "modules": sorted(sys.modules),
    "entry_modules": sorted({ep.value.partition(':')[0] for ep in entry_points(group='clawbot')}),
}))
"""

# What the kernel's CLI start must not load (before the built-in features became plugins,
# `clawbot --help` loaded none of them): the value types, the plugin chains that use them,
# the control API's client, the asyncio machinery, the configuration's converters.
KERNEL_MODULES_NOT_LOADED = ("clawbot.types", "clawbot.plugins.chains", "clawbot.control.client", "clawbot.config", "clawbot.boot")
LIBRARIES_NOT_LOADED = ("asyncio", "concurrent.futures", "subprocess", "ssl", "http.client", "cattrs", "aiohttp", "rich")

# `clawbot init` is defined in this module: click, attrs and commandkit, no types (as before).
COMMAND_MODULES_LISTED_EAGERLY = {"clawbot_workspace.init"}


def _help_probe(home: Path) -> dict[str, list[str]]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        cwd=home,
        env={"CLAWBOT_HOME": str(home), "HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    probe: dict[str, list[str]] = json.loads(result.stdout.strip().splitlines()[-1])
    return probe


def _with_packages(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[: i + 1]) for i in range(len(parts))}


def test_help_imports_only_each_plugins_entry_module(tmp_path: Path) -> None:
    probe = _help_probe(tmp_path)
    entry_modules = probe["entry_modules"]
    plugin_packages = {module.split(".")[0] for module in entry_modules}
    allowed = set().union(*(_with_packages(module) for module in entry_modules)) | COMMAND_MODULES_LISTED_EAGERLY
    assert {"clawbot_pairing.plugin", "clawbot_automation.plugin"} <= set(entry_modules)
    beyond_entry = [m for m in probe["modules"] if m.split(".")[0] in plugin_packages and m not in allowed]
    assert beyond_entry == []


def test_help_loads_no_value_types_event_loop_or_http_client(tmp_path: Path) -> None:
    modules = _help_probe(tmp_path)["modules"]
    heavy = [m for m in modules if m.startswith(KERNEL_MODULES_NOT_LOADED) or m in LIBRARIES_NOT_LOADED]
    assert heavy == []
