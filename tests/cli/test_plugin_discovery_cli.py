"""Plugins come from installed distributions; a broken one never breaks the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from clawbot.testing import install_distribution

from .clihelpers import run_cli

DEFAULT_PLUGINS = {"anthropic", "openai", "terminal", "tools", "workspace"}


def _plugins(result) -> dict[str, dict]:
    assert result.returncode == 0, result.stderr
    return {p["name"]: p for p in json.loads(result.stdout)["plugins"]}


def test_default_plugins_are_listed_from_their_entry_points(tmp_path: Path) -> None:
    plugins = _plugins(run_cli("plugins", "list", "--json", home=tmp_path))
    assert DEFAULT_PLUGINS <= set(plugins)
    for name in DEFAULT_PLUGINS:
        assert plugins[name]["status"] == "loaded"
        assert plugins[name]["distribution"] == f"clawbot-{name}"
        assert plugins[name]["version"]
        assert plugins[name]["hooks"], name
    assert "clawbot_channels" in plugins["terminal"]["hooks"]


def test_table_output_names_every_default_plugin(tmp_path: Path) -> None:
    result = run_cli("plugins", "list", home=tmp_path)
    assert result.returncode == 0, result.stderr
    for name in DEFAULT_PLUGINS:
        assert f"clawbot-{name}" in result.stdout


def test_broken_plugin_is_listed_with_its_error_and_the_cli_keeps_working(tmp_path: Path) -> None:
    site = tmp_path / "site"
    install_distribution(
        site,
        "clawbot-broken",
        version="9.9.9",
        entry_points={"broken": "clawbot_broken_plugin"},
        modules={"clawbot_broken_plugin.py": "import this_module_does_not_exist\n"},
    )
    plugins = _plugins(run_cli("plugins", "list", "--json", home=tmp_path, extra_path=site))
    broken = plugins["broken"]
    assert broken["status"] == "failed"
    assert broken["distribution"] == "clawbot-broken" and broken["version"] == "9.9.9"
    assert "this_module_does_not_exist" in broken["error"]
    assert all(plugins[name]["status"] == "loaded" for name in DEFAULT_PLUGINS)

    table = run_cli("plugins", "list", home=tmp_path, extra_path=site)
    assert table.returncode == 0 and "failed: import failed" in table.stdout

    help_result = run_cli("--help", home=tmp_path, extra_path=site)
    assert help_result.returncode == 0 and "plugins" in help_result.stdout
    assert run_cli("config", "validate", home=tmp_path, extra_path=site).returncode == 0

    doctor = run_cli("doctor", home=tmp_path, extra_path=site)
    assert doctor.returncode == 1
    assert "broken failed to load" in doctor.stdout
    assert "CLAWBOT_DISABLE_PLUGINS=broken" in doctor.stdout


def test_plugin_with_a_misspelled_hook_is_refused_by_name(tmp_path: Path) -> None:
    site = tmp_path / "site"
    source = "from clawbot import hookimpl\n\n@hookimpl\ndef clawbot_tool(ctx):\n    return []\n"
    install_distribution(site, "clawbot-typo", entry_points={"typo": "clawbot_typo"}, modules={"clawbot_typo.py": source})
    plugins = _plugins(run_cli("plugins", "list", "--json", home=tmp_path, extra_path=site))
    assert plugins["typo"]["status"] == "failed"
    assert "unknown hook clawbot_tool (did you mean clawbot_tools?)" in plugins["typo"]["error"]


def test_disable_env_blocks_a_plugin_without_importing_it(tmp_path: Path) -> None:
    site = tmp_path / "site"
    install_distribution(
        site,
        "clawbot-broken",
        entry_points={"broken": "clawbot_broken_plugin"},
        modules={"clawbot_broken_plugin.py": "raise SystemExit('must not be imported')\n"},
    )
    result = run_cli(
        "plugins",
        "list",
        "--json",
        home=tmp_path,
        extra_path=site,
        env={"CLAWBOT_DISABLE_PLUGINS": "broken,terminal"},
    )
    plugins = _plugins(result)
    assert plugins["broken"]["status"] == "blocked"
    assert plugins["terminal"]["status"] == "blocked"
    assert "CLAWBOT_DISABLE_PLUGINS" in plugins["terminal"]["error"]
    assert plugins["openai"]["status"] == "loaded"


def test_config_deny_blocks_a_plugin(tmp_path: Path) -> None:
    (tmp_path / "clawbot.toml").write_text('[plugins]\ndeny = ["openai"]\n')
    plugins = _plugins(run_cli("plugins", "list", "--json", home=tmp_path))
    assert plugins["openai"]["status"] == "blocked"
    assert plugins["openai"]["error"] == "listed in plugins.deny"


def test_two_plugins_offering_the_same_channel_stop_startup_naming_both(tmp_path: Path) -> None:
    site = tmp_path / "site"
    source = (
        "from clawbot import hookimpl\n"
        "from clawbot_terminal.channel import TerminalChannel\n"
        "from clawbot_terminal.config import TerminalConfig\n\n"
        "@hookimpl\ndef clawbot_channels(ctx):\n    return [TerminalChannel(TerminalConfig())]\n"
    )
    install_distribution(site, "clawbot-shadow", entry_points={"shadow": "clawbot_shadow"}, modules={"clawbot_shadow.py": source})
    result = run_cli("run", home=tmp_path, extra_path=site, env={"OPENAI_API_KEY": "sk-x"}, stdin="")
    assert result.returncode == 2
    assert "channel 'terminal' is offered by both plugin" in result.stderr
    assert "'shadow'" in result.stderr and "'terminal'" in result.stderr
    assert "Traceback" not in result.stderr


def test_plugin_cli_command_appears_in_help_and_runs(tmp_path: Path) -> None:
    site = tmp_path / "site"
    source = (
        "import click\nfrom clawbot import hookimpl\n\n"
        "@hookimpl\ndef clawbot_commands(cli):\n"
        "    @cli.command('hello')\n"
        "    @click.argument('who')\n"
        "    def hello(who):\n"
        "        '''Say hello from a plugin.'''\n"
        "        click.echo(f'hello {who}')\n"
    )
    install_distribution(site, "clawbot-hello", entry_points={"hello": "clawbot_hello"}, modules={"clawbot_hello.py": source})
    help_result = run_cli("--help", home=tmp_path, extra_path=site)
    assert "hello" in help_result.stdout and "Say hello from a plugin." in help_result.stdout
    result = run_cli("hello", "world", home=tmp_path, extra_path=site)
    assert result.returncode == 0 and result.stdout.strip() == "hello world"


def test_help_imports_no_sdk_and_no_config_machinery(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from clawbot.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('anthropic', 'openai', 'httpx2', 'cattrs', 'rich', 'starlette', 'pydantic', 'prompt_toolkit',\n"
        "          'sqlean', 'sqlite_vec', 'numpy', 'watchfiles')\n"
        "         if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"CLAWBOT_HOME": str(tmp_path), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    assert "HEAVY=\n" in result.stdout, result.stdout


def test_plugins_list_opens_no_memory_index_and_loads_no_vector_library(tmp_path: Path) -> None:
    """Listing plugins runs their registration hooks, not the doctor's findings: no agent's
    memory index is opened, so sqlite and vector libraries stay unloaded (and it stays fast)."""
    probe = (
        "import sys\n"
        "from clawbot.cli.main import main\n"
        "try:\n    main(['plugins', 'list'])\nexcept SystemExit:\n    pass\n"
        "print('LOADED=' + ','.join(m for m in ('sqlean', 'sqlite_vec', 'numpy') if m in sys.modules))\n"
    )
    import subprocess
    import sys

    (tmp_path / "memory").mkdir()
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"CLAWBOT_HOME": str(tmp_path), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    assert "memory" in result.stdout and "LOADED=\n" in result.stdout, result.stdout[-400:]
