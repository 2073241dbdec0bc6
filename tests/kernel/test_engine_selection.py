"""The memory provider and the compaction strategy in use: chosen by name, shown by doctor.

The plugins here are installed as distributions and found through their entry points, as
a user's would be, so these tests prove that the kernel itself asks for them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from clawbot.cli.main import cli
from clawbot.testing import ConfigError, install_distribution
from clawbot.testing.kernels import boot_kernel
from click.testing import CliRunner

MEMORY_PLUGIN = """
from clawbot import hookimpl


@hookimpl
def clawbot_memory_providers(ctx):
    from clawbot import MemoryProvider

    class Notes(MemoryProvider):
        def __init__(self, name):
            self.name = name

        async def search(self, query, *, agent_id, max_results=None, min_score=None):
            raise NotImplementedError

        async def get(self, path, *, agent_id, from_line=1, lines=None):
            raise NotImplementedError

        async def sync(self, *, agent_id, force=False, progress=None):
            raise NotImplementedError

        async def status(self, *, agent_id):
            raise NotImplementedError

    return [Notes(name) for name in {names!r}]
"""

COMPACTION_PLUGIN = """
from clawbot import hookimpl


@hookimpl
def clawbot_compaction_strategies(ctx):
    from clawbot import CompactionResult, CompactionStrategy

    class Forget(CompactionStrategy):
        name = "forget"

        async def compact(self, request):
            return CompactionResult("forgotten", len(request.messages), 0, 0)

    return [Forget()]
"""


def install(site: Path, module: str, source: str) -> None:
    install_distribution(site, f"clawbot-{module}", entry_points={module: module}, modules={f"{module}.py": source})


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory on ``sys.path`` that plugins are installed into; entry points are read from it."""
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    return path


# The default set's own memory provider ("sqlite", plugin memory) and compaction strategies
# (plugin compaction) are blocked so that these tests see exactly the engines they install;
# test_the_default_set_brings_the_sqlite_memory shows the memory active when nothing
# replaces it (plugins/compaction/tests/test_plugin.py the strategies).
OTHER_PLUGINS = "anthropic,openai,terminal,tools,workspace,memory,compaction"


async def kernel_with(site: Path, home: Path, config: str | None = None):
    return await boot_kernel(home, config=config, load_entrypoints=True, env={"CLAWBOT_DISABLE_PLUGINS": OTHER_PLUGINS})


@pytest.mark.hook_emission("clawbot_memory_providers", "clawbot_compaction_strategies")
async def test_the_kernel_asks_installed_plugins_for_their_engines(site: Path, clawbot_home: Path) -> None:
    install(site, "memo_single", MEMORY_PLUGIN.format(names=["notes"]))
    install(site, "forget_plugin", COMPACTION_PLUGIN)
    kernel = await kernel_with(site, clawbot_home)
    assert kernel.memory_providers.names() == ["notes"] and kernel.memory_providers.plugin_of("notes") == "memo_single"
    assert kernel.memory_provider is kernel.memory_providers["notes"]
    assert kernel.compaction_strategy is kernel.compaction_strategies["forget"]
    assert kernel.plugins.failures == []


async def test_none_installed_means_none_active(site: Path, clawbot_home: Path) -> None:
    kernel = await kernel_with(site, clawbot_home)
    assert (kernel.memory_provider, kernel.compaction_strategy) == (None, None)


async def test_the_configured_name_chooses_among_several(site: Path, clawbot_home: Path) -> None:
    install(site, "memo_pair", MEMORY_PLUGIN.format(names=["notes", "vectors"]))
    kernel = await kernel_with(site, clawbot_home, '[memory]\nprovider = "vectors"\n')
    assert kernel.memory_provider is kernel.memory_providers["vectors"]


@pytest.mark.parametrize(
    ("names", "config", "message"),
    [
        (["notes", "vectors"], "", "memory.provider: several memory providers are installed (notes, vectors): name the one to use"),
        (["notes"], '[memory]\nprovider = "vektors"\n', "memory.provider: no installed plugin offers the memory provider 'vektors' (installed: notes)"),
        ([], '[memory]\nprovider = "notes"\n', "memory.provider: no installed plugin offers the memory provider 'notes' (none is installed)"),
        (
            [],
            '[agents.defaults.compaction]\nstrategy = "smart"\n',
            "agents.defaults.compaction.strategy: no installed plugin offers the compaction strategy 'smart' (none is installed)",
        ),
    ],
    ids=["several-unnamed", "misspelt", "memory-none-installed", "compaction-none-installed"],
)
async def test_a_choice_that_cannot_be_made_is_a_startup_error_naming_the_key(
    site: Path, clawbot_home: Path, names: list[str], config: str, message: str
) -> None:
    module = f"memo_choice_{len(message)}"  # one module name per case: imported modules stay cached
    install(site, module, MEMORY_PLUGIN.format(names=names))
    with pytest.raises(ConfigError) as info:
        await kernel_with(site, clawbot_home, config or None)
    assert [str(p) for p in info.value.problems] == [message]


def doctor(home: Path, config: str | None = None, *, block: str = "memory,compaction") -> str:
    args = ["doctor"]
    if config is not None:
        (home / "doctor.toml").write_text(config, encoding="utf-8")
        args = ["--config", str(home / "doctor.toml"), "doctor"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False, env={"CLAWBOT_DISABLE_PLUGINS": block})
    return " ".join(result.output.split())


async def test_the_default_set_brings_the_sqlite_memory(site: Path, clawbot_home: Path) -> None:
    kernel = await boot_kernel(clawbot_home, load_entrypoints=True)
    try:
        assert kernel.memory_providers.names() == ["sqlite"] and kernel.memory_providers.plugin_of("sqlite") == "memory"
        assert kernel.memory_provider is kernel.memory_providers["sqlite"]
    finally:
        await kernel.aclose()


def test_doctor_shows_the_default_sqlite_memory_and_its_replacement(site: Path, clawbot_home: Path) -> None:
    assert "memory memory provider 'sqlite' is active (plugin memory)" in doctor(clawbot_home, block="")
    # another backend replaces it by name, without touching the kernel
    install(site, "memo_replace", MEMORY_PLUGIN.format(names=["notes"]))
    assert "memory memory provider 'notes' is active (plugin memo_replace)" in doctor(clawbot_home, '[memory]\nprovider = "notes"\n', block="")


def test_doctor_shows_the_active_memory_provider_and_strategy(site: Path, clawbot_home: Path) -> None:
    text = doctor(clawbot_home)
    assert "memory no memory provider is installed: the agent's memory is its workspace files" in text
    assert "compact no compaction strategy is installed" in text

    install(site, "memo_doctor", MEMORY_PLUGIN.format(names=["notes"]))
    install(site, "forget_doctor", COMPACTION_PLUGIN)
    text = doctor(clawbot_home)
    assert "memory memory provider 'notes' is active (plugin memo_doctor)" in text
    assert "compact compaction strategy 'forget' is active (plugin forget_doctor)" in text


def test_doctor_reports_a_memory_provider_it_cannot_find(site: Path, clawbot_home: Path) -> None:
    install(site, "memo_missing", MEMORY_PLUGIN.format(names=["notes"]))
    text = doctor(clawbot_home, '[memory]\nprovider = "vektors"\n')
    assert "FAIL config memory.provider: no installed plugin offers the memory provider 'vektors' (installed: notes)" in text
    assert "fix: name an installed one" in text
    assert "Traceback" not in text
