"""The bootstrap-extra-files wrapper with a real kernel, the real default loader and real files."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import clawbot_bootstrap_extra_files.plugin as extra_plugin
import clawbot_workspace.plugin
import pytest
from clawbot import BootstrapContext, hookimpl
from clawbot.agent.bootstrap import NotLoaded, load_injected_files
from clawbot.config import ConfigError
from clawbot.plugins.records import HookFailure
from clawbot.testing import HOSTILE_KINDS, HOSTILE_SECRET, build_kernel, call_in_thread, plant_hostile, secret_outside
from clawbot.testing.hostile_files import HUGE_BYTES

STANDARD = ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md"]


@pytest.fixture
def ws(clawbot_home: Path) -> Path:
    workspace = clawbot_home / "ws"
    workspace.mkdir()
    for name in [*STANDARD, "MEMORY.md"]:
        (workspace / name).write_text(f"{name} text\n")
    return workspace


def table(ws: Path, body: str, caps: str = "") -> str:
    return f'[agents.defaults]\nworkspace = "{ws}"\n{caps}\n[plugins.bootstrap-extra-files]\n{body}\n'


async def files_for(make_kernel, ws: Path, body: str, *, kind: str = "main", caps: str = "", more: dict | None = None):
    plugins = {"workspace": clawbot_workspace.plugin, "bootstrap-extra-files": extra_plugin, **(more or {})}
    kernel = await make_kernel(plugins=plugins, config=table(ws, body, caps))
    files = load_injected_files(kernel, kernel.bootstrap_context("main", ws, kind))
    return kernel, files


async def test_matching_files_are_added_after_the_standard_ones_in_sorted_order(make_kernel, ws: Path) -> None:
    (ws / "docs" / "deep").mkdir(parents=True)
    for rel in ("docs/b.md", "docs/a.md", "docs/deep/c.md", "notes.md", "docs/skip.txt", "docs/.hidden.md"):
        (ws / rel).write_text(f"{rel} text\n")
    kernel, files = await files_for(make_kernel, ws, 'patterns = ["docs/**/*.md", "notes.md", "docs/a.md", "*.md"]')
    names = [f.name for f in files]
    assert names == [*STANDARD, "MEMORY.md", "docs/a.md", "docs/b.md", "docs/deep/c.md", "notes.md"]
    added = files[-4:]
    assert [f.path for f in added] == [ws / n for n in names[-4:]]
    assert added[0].content == "docs/a.md text\n" and not added[0].truncated
    assert kernel.plugins.failures == []


async def test_max_files_bounds_how_many_are_added(make_kernel, ws: Path, caplog: pytest.LogCaptureFixture) -> None:
    (ws / "docs").mkdir()
    for n in range(5):
        (ws / "docs" / f"{n}.md").write_text(f"doc {n}\n")
    with caplog.at_level(logging.WARNING):
        _, files = await files_for(make_kernel, ws, 'patterns = ["docs/*.md"]\nmax_files = 2')
    assert [f.name for f in files][-2:] == ["docs/0.md", "docs/1.md"] and "docs/2.md" not in [f.name for f in files]
    assert "3 more matching files left out" in caplog.text


async def test_replace_injects_another_file_under_the_standard_name(make_kernel, ws: Path) -> None:
    (ws / "personas").mkdir()
    (ws / "personas" / "pirate.md").write_text("Arr. Talk like a pirate.\n")
    _, files = await files_for(make_kernel, ws, 'replace = { "SOUL.md" = "personas/pirate.md", "USER.md" = "nope.md" }')
    soul = next(f for f in files if f.name == "SOUL.md")
    assert soul.content == "Arr. Talk like a pirate.\n" and soul.path == ws / "personas" / "pirate.md"
    assert next(f for f in files if f.name == "USER.md").content == "USER.md text\n"  # a missing target keeps the file
    assert [f.name for f in files] == [*STANDARD, "MEMORY.md"]


async def test_drop_leaves_files_out_and_patterns_do_not_bring_them_back(make_kernel, ws: Path) -> None:
    (ws / "extra.md").write_text("extra\n")
    _, files = await files_for(make_kernel, ws, 'drop = ["HEARTBEAT.md", "extra.md"]\npatterns = ["*.md"]')
    assert [f.name for f in files] == [n for n in STANDARD if n != "HEARTBEAT.md"] + ["MEMORY.md"]


async def test_patterns_never_add_memory_to_other_sessions(make_kernel, ws: Path) -> None:
    (ws / "team.md").write_text("team\n")
    body = 'patterns = ["*.md", "MEMORY.md"]\nsession_kinds = ["main", "group"]'
    _, group = await files_for(make_kernel, ws, body, kind="group")
    assert [f.name for f in group] == [*STANDARD, "team.md"]  # MEMORY.md stays the main session's
    _, direct = await files_for(make_kernel, ws, body, kind="direct")
    assert [f.name for f in direct] == STANDARD  # not in session_kinds: nothing added
    _, sub = await files_for(make_kernel, ws, 'patterns = ["*.md"]', kind="subagent")
    assert [f.name for f in sub] == ["AGENTS.md", "TOOLS.md"]


async def test_symlinks_out_of_the_workspace_are_not_loaded_and_say_so(make_kernel, ws: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n")
    (outside / "persona.md").write_text("secret persona\n")
    (ws / "docs").mkdir()
    (ws / "docs" / "leak.md").symlink_to(outside / "secret.md")
    (ws / "docs" / "linked").symlink_to(outside, target_is_directory=True)
    (ws / "docs" / "ok.md").write_text("ok\n")
    (ws / "alias.md").symlink_to(ws / "docs" / "ok.md")  # inside: fine, but the same file only once
    (ws / "persona.md").symlink_to(outside / "persona.md")
    with caplog.at_level(logging.WARNING):
        _, files = await files_for(make_kernel, ws, 'patterns = ["alias.md", "docs/**/*.md"]\nreplace = { "SOUL.md" = "persona.md" }')
    assert [f.name for f in files][-2:] == ["alias.md", "docs/leak.md"]  # never docs/linked/*: not walked
    assert all("secret" not in (f.content or "") for f in files)
    notes = {f.name: f.content for f in files if isinstance(f.content, NotLoaded)}
    assert set(notes) == {"SOUL.md", "docs/leak.md"}
    assert notes["SOUL.md"].startswith("[SOUL.md was not loaded: it leads outside the workspace")
    assert "leads outside the workspace" in caplog.text


async def test_a_file_behind_a_symlinked_folder_is_not_loaded_even_when_named_literally(make_kernel, ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.md").write_text("secret\n")
    (outside / "persona.md").write_text("secret persona\n")
    (ws / "linked").symlink_to(outside, target_is_directory=True)
    body = 'patterns = ["linked/notes.md"]\nreplace = { "SOUL.md" = "linked/persona.md" }'
    _, files = await files_for(make_kernel, ws, body)
    assert all("secret" not in (f.content or "") for f in files)
    refused = {f.name: f.content.reason for f in files if isinstance(f.content, NotLoaded)}
    assert set(refused) == {"SOUL.md", "linked/notes.md"}
    assert all(reason.startswith("it leads outside the workspace") for reason in refused.values())


async def test_a_hard_linked_extra_file_is_not_loaded(make_kernel, ws: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("secret\n")
    os.link(tmp_path / "secret.md", ws / "notes.md")
    _, files = await files_for(make_kernel, ws, 'patterns = ["notes.md"]')
    (notes,) = [f for f in files if f.name == "notes.md"]
    assert isinstance(notes.content, NotLoaded) and "hard links" in notes.content.reason
    assert "secret" not in notes.content


async def test_symlink_loops_and_hidden_folders_are_not_walked(make_kernel, ws: Path) -> None:
    (ws / "docs" / ".private").mkdir(parents=True)
    (ws / "docs" / ".private" / "keys.md").write_text("keys\n")
    (ws / "docs" / "guide.md").write_text("guide\n")
    (ws / "docs" / "loop").symlink_to(ws / "docs", target_is_directory=True)
    (ws / "docs" / "again").symlink_to(ws, target_is_directory=True)
    _, files = await files_for(make_kernel, ws, 'patterns = ["**/*.md", "docs/.private/keys.md"]')
    assert [f.name for f in files] == [*STANDARD, "MEMORY.md", "docs/guide.md", "docs/.private/keys.md"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('patterns = ["../*.md"]', "plugins.bootstrap-extra-files"),
        ('patterns = ["/etc/*.conf"]', "must be relative to the workspace"),
        ('patterns = ["docs/../../x.md"]', "no '..'"),
        ('patterns = ["~/notes.md"]', "no ~"),
        ('replace = { "SOUL.md" = "../soul.md" }', "no '..'"),
        ('replace = { "SOUL.md" = "personas/*.md" }', "not a pattern"),
        ('session_kinds = ["everyone"]', "'everyone' is not one of"),
        ("max_files = -1", "max_files: must be between 0 and 1000, got -1"),
    ],
)
async def test_escapes_and_bad_values_are_refused_when_the_config_is_read(make_kernel, ws: Path, body: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        await files_for(make_kernel, ws, body)
    assert message in str(raised.value) and "plugins.bootstrap-extra-files" in str(raised.value)


async def test_the_caps_apply_to_added_files(make_kernel, ws: Path) -> None:
    (ws / "big.md").write_text("B" * 3000)
    (ws / "later.md").write_text("L" * 3000)
    caps = "bootstrap_max_chars = 1000\nbootstrap_total_max_chars = 1500\n"
    _, files = await files_for(make_kernel, ws, 'patterns = ["big.md", "later.md"]', caps=caps)
    big, later = files[-2:]
    assert big.name == "big.md" and big.truncated and big.raw_chars == 3000
    assert "2100 characters cut from the middle of big.md" in big.content
    assert later.truncated and "left out" in later.content
    assert sum(len(f.content) for f in files if f.content and "left out" not in f.content) <= 1500


class Raises:
    @hookimpl(wrapper=True)
    def clawbot_bootstrap_files(self, ctx):
        files = yield
        raise RuntimeError(f"broken after {len(files)} files")


async def test_a_wrapper_that_raises_is_dropped_and_the_others_still_apply(make_kernel, ws: Path) -> None:
    (ws / "notes.md").write_text("notes\n")
    kernel, files = await files_for(make_kernel, ws, 'patterns = ["notes.md"]', more={"zbroken": Raises()})
    assert [f.name for f in files] == [*STANDARD, "MEMORY.md", "notes.md"]
    assert kernel.plugins.failures == [HookFailure("zbroken", "clawbot_bootstrap_files", "RuntimeError: broken after 8 files")]


async def test_without_its_table_the_plugin_changes_nothing(make_kernel, ws: Path) -> None:
    plugins = {"workspace": clawbot_workspace.plugin, "bootstrap-extra-files": extra_plugin}
    kernel = await make_kernel(plugins=plugins, config=f'[agents.defaults]\nworkspace = "{ws}"\n')
    files = load_injected_files(kernel, kernel.bootstrap_context("main", ws, "main"))
    assert [f.name for f in files] == [*STANDARD, "MEMORY.md"] and kernel.plugins.failures == []
    bare = load_injected_files(kernel, BootstrapContext("main", ws, "main"))  # no config at all
    assert [f.name for f in bare] == [f.name for f in files]


@pytest.mark.timeout(20)
@pytest.mark.parametrize("pattern", ["**/" * 24 + "x.md", "**/a/" * 12 + "x.md", "a/**/" * 12 + "*/x.md"])
async def test_many_double_stars_match_deep_paths_without_blowing_up(make_kernel, ws: Path, pattern: str) -> None:
    """Each '**' once tried every split of the path: 24 of them against 30 folders were
    about 10^15 attempts. The shared matcher is linear, so this ends at once."""
    deep = ws.joinpath(*["a"] * 30)
    deep.mkdir(parents=True)
    (deep / "y.md").write_text("never matched\n")  # the near miss every split is tried against
    (deep / "x.md").write_text("deep notes\n")
    _, files = await files_for(make_kernel, ws, f'patterns = ["{pattern}"]')
    added = [f.name for f in files if f.name not in STANDARD and f.name != "MEMORY.md"]
    assert added == ["/".join(["a"] * 30 + ["x.md"])]


@pytest.mark.parametrize("kind", HOSTILE_KINDS)
@pytest.mark.parametrize("how", ["pattern", "replace"])
def test_each_hostile_extra_file_is_refused_or_capped_without_blocking(clawbot_home: Path, ws: Path, tmp_path: Path, kind: str, how: str) -> None:
    """The same table as every other reader of workspace files (tests/agent/test_workspace_file_readers.py)."""
    target = ws / "docs" / "notes.md"
    plant_hostile(kind, target, secret_outside(tmp_path / "private"))
    body = 'patterns = ["docs/*.md"]' if how == "pattern" else 'replace = { "SOUL.md" = "docs/notes.md" }'
    name = "docs/notes.md" if how == "pattern" else "SOUL.md"

    async def read():
        plugins = {"workspace": clawbot_workspace.plugin, "bootstrap-extra-files": extra_plugin}
        kernel = await build_kernel(clawbot_home, plugins=plugins, config=table(ws, body))
        return load_injected_files(kernel, kernel.bootstrap_context("main", ws, "main"))

    files = call_in_thread(lambda: asyncio.run(read()), fifos=(target,))
    content = next((f.content for f in files if f.name == name), None)
    assert all(HOSTILE_SECRET not in (f.content or "") for f in files)
    if kind == "huge":  # both ends only, cut by the caps with the real size in the marker
        assert content is not None and f"({HUGE_BYTES} in all)" in content and len(content) < 30_000
    elif kind == "not-utf8":
        assert content == "- check \ufffd\ufffd the \ufffd inbox\n"
    else:  # a note saying why, or left out (a replacement left out keeps the standard file)
        assert content in (None, "SOUL.md text\n") or isinstance(content, NotLoaded), content
