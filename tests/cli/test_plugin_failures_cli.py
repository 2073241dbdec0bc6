"""`clawbot doctor` and `clawbot plugins list` boot the kernel and show what failed in it."""

from __future__ import annotations

import json
from pathlib import Path

from clawbot.testing import install_distribution

from .clihelpers import run_cli

RAISING_TOOLS = "from clawbot import hookimpl\n\n@hookimpl\ndef clawbot_tools(ctx):\n    raise RuntimeError('tool factory exploded')\n"
WRONG_TYPE = "from clawbot import hookimpl\n\n@hookimpl\ndef clawbot_channels(ctx):\n    return ['not a channel']\n"
RAISING_SCHEMA = "from clawbot import hookimpl\n\n@hookimpl\ndef clawbot_config_schema():\n    raise ValueError('schema exploded')\n"
LOOKUP_TOOL = (
    "from clawbot import Tool, hookimpl\n\n"
    "@hookimpl\ndef clawbot_tools(ctx):\n"
    "    return [Tool('lookup', 'Look something up.', {'type': 'object', 'properties': {}}, lambda call: 'x')]\n"
)


def _site(tmp_path: Path, **plugins: str) -> Path:
    site = tmp_path / "site"
    for name, source in plugins.items():
        install_distribution(site, f"clawbot-{name}", entry_points={name: f"clawbot_{name}"}, modules={f"clawbot_{name}.py": source})
    return site


def _listing(tmp_path: Path, site: Path) -> dict:
    result = run_cli("plugins", "list", "--json", home=tmp_path, extra_path=site)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_registration_hook_that_raises_fails_doctor_and_shows_in_plugins_list(tmp_path: Path) -> None:
    site = _site(tmp_path, raiser=RAISING_TOOLS)
    doctor = run_cli("doctor", home=tmp_path, extra_path=site, env={"OPENAI_API_KEY": "sk-test"})  # a model: one problem only
    assert doctor.returncode == 1, doctor.stdout
    assert "raiser failed in clawbot_tools: RuntimeError: tool factory exploded" in doctor.stdout
    assert "CLAWBOT_DISABLE_PLUGINS=raiser" in doctor.stdout
    assert "1 problem found" in doctor.stdout

    listing = _listing(tmp_path, site)
    assert listing["hook_failures"] == [{"plugin": "raiser", "hook": "clawbot_tools", "error": "RuntimeError: tool factory exploded"}]
    assert listing["conflicts"] == []
    assert {p["name"]: p["status"] for p in listing["plugins"]}["raiser"] == "loaded"

    table = run_cli("plugins", "list", home=tmp_path, extra_path=site)
    assert table.returncode == 0, table.stderr
    assert "raiser" in table.stdout and "hook failed" in table.stdout
    assert "plugin raiser failed in clawbot_tools: RuntimeError: tool factory exploded" in table.stdout


def test_a_contribution_of_the_wrong_type_is_a_failure(tmp_path: Path) -> None:
    site = _site(tmp_path, wrongtype=WRONG_TYPE)
    doctor = run_cli("doctor", home=tmp_path, extra_path=site)
    assert doctor.returncode == 1
    assert "wrongtype failed in clawbot_channels: TypeError: expected a Channel" in doctor.stdout
    (failure,) = _listing(tmp_path, site)["hook_failures"]
    assert failure["plugin"] == "wrongtype" and failure["hook"] == "clawbot_channels"


def test_a_config_schema_hook_that_raises_is_not_reported_ok(tmp_path: Path) -> None:
    site = _site(tmp_path, badschema=RAISING_SCHEMA)
    doctor = run_cli("doctor", home=tmp_path, extra_path=site)
    assert doctor.returncode == 1
    assert "badschema failed in clawbot_config_schema: ValueError: schema exploded" in doctor.stdout


def test_two_plugins_offering_the_same_tool_are_named_by_both_commands(tmp_path: Path) -> None:
    site = _site(tmp_path, alpha=LOOKUP_TOOL, beta=LOOKUP_TOOL)
    doctor = run_cli("doctor", home=tmp_path, extra_path=site)
    assert doctor.returncode == 1
    conflict_line = next(line for line in doctor.stdout.splitlines() if "conflict" in line)
    assert "tool 'lookup'" in conflict_line and "'alpha'" in conflict_line and "'beta'" in conflict_line
    assert "plugins.deny" in doctor.stdout and "CLAWBOT_DISABLE_PLUGINS=" in doctor.stdout
    assert "Traceback" not in doctor.stdout + doctor.stderr

    listing = _listing(tmp_path, site)
    (conflict,) = listing["conflicts"]
    assert "tool 'lookup'" in conflict and "'alpha'" in conflict and "'beta'" in conflict
    assert {"alpha", "beta"} <= {p["name"] for p in listing["plugins"]}

    table = run_cli("plugins", "list", home=tmp_path, extra_path=site)
    assert table.returncode == 0, table.stderr
    assert "conflict: tool 'lookup' is offered by both plugin" in table.stdout
    assert "clawbot-alpha" in table.stdout and "clawbot-beta" in table.stdout

    blocked = run_cli("doctor", home=tmp_path, extra_path=site, env={"CLAWBOT_DISABLE_PLUGINS": "beta", "OPENAI_API_KEY": "sk-test"})
    assert blocked.returncode == 0, blocked.stdout


def test_plugins_list_still_lists_plugins_when_the_configuration_is_broken(tmp_path: Path) -> None:
    site = _site(tmp_path, raiser=RAISING_TOOLS)
    (tmp_path / "clawbot.toml").write_text("[zzz]\na = 1\n")
    listing = _listing(tmp_path, site)
    assert {"raiser", "terminal"} <= {p["name"] for p in listing["plugins"]}
    assert listing["conflicts"] == []
    doctor = run_cli("doctor", home=tmp_path, extra_path=site)
    assert doctor.returncode == 1 and "zzz" in doctor.stdout


def test_healthy_installation_has_no_failures_or_conflicts(tmp_path: Path) -> None:
    listing = _listing(tmp_path, tmp_path / "empty-site")
    assert listing["hook_failures"] == [] and listing["conflicts"] == []
    doctor = run_cli("doctor", home=tmp_path, env={"OPENAI_API_KEY": "sk-test"})  # healthy includes a model
    assert doctor.returncode == 0, doctor.stdout


def test_the_boot_closes_the_kernel_it_opened(tmp_path) -> None:
    """Cleanup plugins registered while booting (child processes, connections) runs."""
    from clawbot.boot import load
    from clawbot.doctor import boot_kernel
    from clawbot.testing import plugin_from_hooks

    closed = []

    def register(ctx):
        ctx.on_close(lambda: closed.append(ctx.plugin_name))
        return []

    env = {"CLAWBOT_HOME": str(tmp_path), "HOME": str(tmp_path)}
    loaded = load(None, env=env, cwd=tmp_path, plugins={"closer": plugin_from_hooks(clawbot_tools=register)}, load_entrypoints=False)
    outcome = boot_kernel(loaded)
    assert outcome.conflicts == [] and outcome.error is None
    assert closed == ["closer"]


SHADOWING_COMMANDS = (
    "from clawbot import ChatCommand, hookimpl\n\n"
    "@hookimpl\ndef clawbot_chat_commands(ctx):\n"
    "    return [ChatCommand('status', 'my status', lambda c: 'mine'), ChatCommand('weather', 'forecast', lambda c: 'sunny')]\n"
)


def test_a_plugin_command_named_like_a_built_in_one_is_reported_to_its_author(tmp_path: Path) -> None:
    site = _site(tmp_path, shadow=SHADOWING_COMMANDS)
    shadowed = "plugin 'shadow' offers /status, a built-in command: clawbot answers /status itself and ignores the plugin's"
    doctor = run_cli("doctor", home=tmp_path, extra_path=site, env={"OPENAI_API_KEY": "sk-test"})
    assert shadowed in doctor.stdout and "rename the plugin's command" in doctor.stdout, doctor.stdout
    assert "/weather" not in doctor.stdout

    assert _listing(tmp_path, site)["shadowed_commands"] == [shadowed]
    table = run_cli("plugins", "list", home=tmp_path, extra_path=site)
    assert f"warning: {shadowed}" in table.stdout, table.stdout
