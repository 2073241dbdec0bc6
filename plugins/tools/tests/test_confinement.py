"""Every file tool stays inside the workspace: escapes are refused and nothing outside changes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from clawbot import TextBlock, ToolCall, ToolResult
from clawbot_tools.config import ToolsSettings
from clawbot_tools.fs import tools

SECRET = "SECRET sentinel\n"
OUTSIDE = "outside the workspace"


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """tmp/outside (sentinel, dir) beside tmp/ws, with symlinks and a hard link leading out."""
    outside = tmp_path / "outside"
    outside.mkdir()
    sentinel = outside / "sentinel.txt"
    sentinel.write_text(SECRET)
    (outside / "sub").mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "inside.txt").write_text("inside\n")
    (ws / "a").mkdir()
    (ws / "link_etc").symlink_to("/etc")
    (ws / "link_out_file").symlink_to(sentinel)
    (ws / "chain2").symlink_to("../outside/sentinel.txt")
    (ws / "chain1").symlink_to("chain2")
    (ws / "dangling_out").symlink_to(outside / "created_by_escape.txt")
    (ws / "linkdir").symlink_to(outside)
    (ws / "a" / "up").symlink_to("../..")
    os.link(sentinel, ws / "hard.txt")
    return {"ws": ws, "outside": outside, "sentinel": sentinel, "root": tmp_path}


def snapshot(root: Path, skip: Path) -> dict[str, Any]:
    """Every path under ``root`` but outside ``skip``: file bytes, link targets, dirs."""
    state: dict[str, Any] = {}
    for directory, dirnames, filenames in os.walk(root):
        if Path(directory) == skip or skip in Path(directory).parents:
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            full = Path(directory, name)
            if full == skip:
                continue
            if full.is_symlink():
                state[str(full)] = ("link", os.readlink(full))
            elif full.is_dir():
                state[str(full)] = "dir"
            else:
                state[str(full)] = full.read_bytes()
    return state


def run(ws: Path, name: str, settings: ToolsSettings | None = None, **arguments: Any) -> ToolResult:
    by_name = {tool.name: tool for tool in tools(settings or ToolsSettings())}
    result = by_name[name].handler(ToolCall("c1", name, arguments, "main", "agent:main:t", ws))
    assert isinstance(result, ToolResult)
    return result


def text_of(result: ToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextBlock))


LONG = "a/" * 2500 + "x"  # 5001 chars
LONG_COMPONENT = "b" * 300

# (id, tool, arguments; "{ws}", "{outside}" and "{sentinel}" are filled in, expected words in the error)
ESCAPES: list[tuple[str, str, dict[str, Any], str]] = [
    ("read-dotdot", "read", {"path": "../x"}, OUTSIDE),
    ("read-dotdot-etc-passwd", "read", {"path": "../../etc/passwd"}, OUTSIDE),
    ("read-dotdot-sentinel", "read", {"path": "../outside/sentinel.txt"}, OUTSIDE),
    ("read-abs-etc-passwd", "read", {"path": "/etc/passwd"}, OUTSIDE),
    ("read-abs-sentinel", "read", {"path": "{sentinel}"}, OUTSIDE),
    ("read-tilde", "read", {"path": "~"}, OUTSIDE),
    ("read-tilde-root", "read", {"path": "~root/.bashrc"}, OUTSIDE),
    ("read-inner-dotdot", "read", {"path": "a/../../x"}, OUTSIDE),
    ("read-dot-dotdot", "read", {"path": "./../x"}, OUTSIDE),
    ("read-ws-dot-dotdot-abs", "read", {"path": "{ws}/./../outside/sentinel.txt"}, OUTSIDE),
    ("read-symlink-etc", "read", {"path": "link_etc/passwd"}, OUTSIDE),
    ("read-symlink-file", "read", {"path": "link_out_file"}, OUTSIDE),
    ("read-symlink-chain", "read", {"path": "chain1"}, OUTSIDE),
    ("read-symlinked-parent", "read", {"path": "linkdir/sentinel.txt"}, OUTSIDE),
    ("read-symlink-up-inside-dir", "read", {"path": "a/up/outside/sentinel.txt"}, OUTSIDE),
    ("read-nul", "read", {"path": "inside.txt\x00.png"}, "NUL"),
    ("read-5000-chars", "read", {"path": LONG}, "too long"),
    ("read-ws-parent", "read", {"path": "{ws}/.."}, OUTSIDE),
    ("write-dotdot", "write", {"path": "../outside/sentinel.txt", "content": "pwned"}, OUTSIDE),
    ("write-dotdot-new", "write", {"path": "../escaped.txt", "content": "pwned"}, OUTSIDE),
    ("write-abs-outside", "write", {"path": "{sentinel}", "content": "pwned"}, OUTSIDE),
    ("write-abs-new-outside", "write", {"path": "{outside}/new.txt", "content": "pwned"}, OUTSIDE),
    ("write-symlink-file", "write", {"path": "link_out_file", "content": "pwned"}, OUTSIDE),
    ("write-symlink-chain", "write", {"path": "chain1", "content": "pwned"}, OUTSIDE),
    ("write-dangling-symlink", "write", {"path": "dangling_out", "content": "pwned"}, OUTSIDE),
    ("write-symlinked-parent", "write", {"path": "linkdir/new.txt", "content": "pwned"}, OUTSIDE),
    ("write-symlinked-parent-new-dirs", "write", {"path": "linkdir/sub/deeper/new.txt", "content": "pwned"}, OUTSIDE),
    ("write-symlink-then-dotdot", "write", {"path": "linkdir/../outside/new.txt", "content": "pwned"}, OUTSIDE),
    ("write-hard-link", "write", {"path": "hard.txt", "content": "pwned"}, "hard links"),
    ("write-tilde", "write", {"path": "~/escaped.txt", "content": "pwned"}, OUTSIDE),
    ("write-nul", "write", {"path": "x\x00y", "content": "pwned"}, "NUL"),
    ("write-300-component", "write", {"path": "a/" + LONG_COMPONENT, "content": "pwned"}, "too long"),
    ("write-ws-parent-trailing", "write", {"path": "{ws}/../", "content": "pwned"}, OUTSIDE),
    ("edit-hard-link", "edit", {"path": "hard.txt", "old_text": "SECRET", "new_text": "pwned"}, "hard links"),
    ("edit-symlink-file", "edit", {"path": "link_out_file", "old_text": "SECRET", "new_text": "pwned"}, OUTSIDE),
    ("edit-dotdot", "edit", {"path": "../outside/sentinel.txt", "old_text": "SECRET", "new_text": "pwned"}, OUTSIDE),
    ("edit-abs", "edit", {"path": "{sentinel}", "old_text": "SECRET", "new_text": "pwned"}, OUTSIDE),
    ("edit-symlink-etc", "edit", {"path": "link_etc/hostname", "old_text": "zz-no-such-text", "new_text": "x"}, OUTSIDE),
    ("ls-dotdot", "ls", {"path": ".."}, OUTSIDE),
    ("ls-root", "ls", {"path": "/"}, OUTSIDE),
    ("ls-tilde", "ls", {"path": "~/"}, OUTSIDE),
    ("ls-symlink-etc", "ls", {"path": "link_etc"}, OUTSIDE),
    ("ls-symlinked-dir-slash", "ls", {"path": "linkdir/"}, OUTSIDE),
    ("ls-ws-dotdot", "ls", {"path": "{ws}/.."}, OUTSIDE),
    ("ls-dot-segments", "ls", {"path": "./a/./.././.."}, OUTSIDE),
    ("find-pattern-dotdot", "find", {"pattern": "../*"}, OUTSIDE),
    ("find-pattern-inner-dotdot", "find", {"pattern": "a/../../*"}, OUTSIDE),
    ("find-pattern-abs", "find", {"pattern": "/etc/*"}, OUTSIDE),
    ("find-path-dotdot", "find", {"pattern": "*", "path": ".."}, OUTSIDE),
    ("find-path-symlinked-dir", "find", {"pattern": "**/*", "path": "linkdir"}, OUTSIDE),
    ("grep-path-root", "grep", {"pattern": "SECRET", "path": "/"}, OUTSIDE),
    ("grep-path-dotdot", "grep", {"pattern": "SECRET", "path": "../outside"}, OUTSIDE),
    ("grep-symlinked-dir", "grep", {"pattern": "SECRET", "path": "linkdir"}, OUTSIDE),
    ("grep-symlink-file", "grep", {"pattern": "SECRET", "path": "link_out_file"}, OUTSIDE),
    ("grep-tilde-root", "grep", {"pattern": "x", "path": "~root"}, OUTSIDE),
]


@pytest.mark.parametrize(("tool", "arguments", "expected"), [c[1:] for c in ESCAPES], ids=[c[0] for c in ESCAPES])
def test_escape_attempts_are_refused(tree: dict[str, Path], tool: str, arguments: dict[str, Any], expected: str) -> None:
    ws = tree["ws"]
    fill = {"ws": str(ws), "outside": str(tree["outside"]), "sentinel": str(tree["sentinel"])}
    arguments = {k: v.format(**fill) if k == "path" and "{" in v else v for k, v in arguments.items()}
    before = snapshot(tree["root"], ws)
    result = run(ws, tool, **arguments)
    text = text_of(result)
    assert result.is_error, text
    assert expected in text
    if expected == OUTSIDE and "path" in arguments:
        assert repr(arguments["path"]) in text  # the error names the path
    assert "SECRET" not in text
    assert snapshot(tree["root"], ws) == before
    assert tree["sentinel"].read_text() == SECRET
    assert not (tree["outside"] / "created_by_escape.txt").exists()


def test_there_are_at_least_thirty_escapes() -> None:
    assert len(ESCAPES) >= 30
    assert {c[1] for c in ESCAPES} == {"read", "write", "edit", "ls", "find", "grep"}


def test_percent_encoding_is_not_decoded(tree: dict[str, Path]) -> None:
    ws = tree["ws"]
    result = run(ws, "read", path="%2e%2e/outside/sentinel.txt")
    assert result.is_error and "not found" in text_of(result) and OUTSIDE not in text_of(result)
    result = run(ws, "write", path="%2e%2e/x", content="literal")
    assert not result.is_error
    assert (ws / "%2e%2e" / "x").read_text() == "literal"


def test_backslashes_are_literal(tree: dict[str, Path]) -> None:
    ws = tree["ws"]
    before = snapshot(tree["root"], ws)
    result = run(ws, "write", path="..\\..\\x", content="literal")
    assert not result.is_error
    assert (ws / "..\\..\\x").read_text() == "literal"
    assert snapshot(tree["root"], ws) == before


def test_inside_symlinks_and_absolute_inside_paths_work(tree: dict[str, Path]) -> None:
    ws = tree["ws"]
    (ws / "alias").symlink_to("inside.txt")
    assert text_of(run(ws, "read", path="alias")) == "inside\n"
    assert text_of(run(ws, "read", path=str(ws / "inside.txt"))) == "inside\n"
    assert text_of(run(ws, "read", path="a/../inside.txt")) == "inside\n"
    assert not run(ws, "ls", path=str(ws) + "/").is_error


def test_walks_do_not_leave_the_workspace(tree: dict[str, Path]) -> None:
    ws = tree["ws"]
    (ws / "hard.txt").unlink()  # a hard link is a file of the workspace: reading it is allowed
    grep = run(ws, "grep", pattern="SECRET")
    assert SECRET.strip() not in text_of(grep) and grep.details["matches"] == 0 and grep.details["files_searched"] == 1
    found = text_of(run(ws, "find", pattern="**/*")).splitlines()
    assert "inside.txt" in found and not any("sentinel" in line for line in found)
    listing = text_of(run(ws, "ls"))
    assert "linkdir -> " in listing and "SECRET" not in listing


def test_symlink_loop_is_an_error_not_a_crash(tree: dict[str, Path]) -> None:
    ws = tree["ws"]
    (ws / "loop1").symlink_to("loop2")
    (ws / "loop2").symlink_to("loop1")
    result = run(ws, "read", path="loop1")
    assert result.is_error


def test_workspace_reached_through_a_symlink(tree: dict[str, Path]) -> None:
    alias = tree["root"] / "ws_alias"
    alias.symlink_to(tree["ws"])
    assert text_of(run(alias, "read", path="inside.txt")) == "inside\n"
    assert run(alias, "read", path="../outside/sentinel.txt").is_error
    assert not run(alias, "write", path="new.txt", content="n").is_error
    assert (tree["ws"] / "new.txt").read_text() == "n"


def test_confinement_off_allows_absolute_and_home(tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tree["ws"]
    free = ToolsSettings(confine_to_workspace=False)
    result = run(ws, "read", free, path=str(tree["sentinel"]))
    assert not result.is_error and text_of(result) == SECRET
    assert text_of(run(ws, "read", free, path="../outside/sentinel.txt")) == SECRET
    monkeypatch.setenv("HOME", str(tree["outside"]))
    assert text_of(run(ws, "read", free, path="~/sentinel.txt")) == SECRET
    result = run(ws, "write", free, path=str(tree["outside"] / "allowed.txt"), content="ok")
    assert not result.is_error and (tree["outside"] / "allowed.txt").read_text() == "ok"
    # shape checks still apply
    assert "NUL" in text_of(run(ws, "read", free, path="a\x00b"))


def test_ls_hides_where_outside_links_point(tree: dict[str, Path]) -> None:
    ws = tree["ws"]
    (ws / "alias").symlink_to("inside.txt")
    lines = text_of(run(ws, "ls")).splitlines()
    for name in ("link_etc", "link_out_file", "chain1", "chain2", "dangling_out", "linkdir"):
        assert f"{name} -> (outside workspace)" in lines
    assert "alias -> inside.txt" in lines
    assert "/etc" not in "\n".join(lines) and str(tree["outside"]) not in "\n".join(lines)
    free = text_of(run(ws, "ls", ToolsSettings(confine_to_workspace=False))).splitlines()
    assert "link_etc -> /etc" in free  # with confinement off there is nothing to hide


def test_reading_a_hard_link_is_allowed(tree: dict[str, Path]) -> None:
    # a documented choice (paths.py): uv's .venv and pnpm's node_modules are hard links into
    # caches outside the workspace, and the agent must be able to read those libraries
    ws, cache = tree["ws"], tree["root"] / "cache"
    cache.mkdir()
    (cache / "lib.py").write_text("def api(): ...\n")
    (ws / ".venv").mkdir()
    os.link(cache / "lib.py", ws / ".venv" / "lib.py")
    assert text_of(run(ws, "read", path=".venv/lib.py")) == "def api(): ...\n"
    result = run(ws, "write", path=".venv/lib.py", content="changed")
    assert result.is_error and "hard links" in text_of(result)
    assert (cache / "lib.py").read_text() == "def api(): ...\n"


# --- a directory swapped for a symlink between the check and the open ----------------------


@pytest.fixture
def swap_after_resolve(tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch):
    """Patch a tool module's resolving function so that ws/d becomes a link to outside right after it."""
    ws, outside = tree["ws"], tree["outside"]
    (ws / "d").mkdir()
    (ws / "d" / "sentinel.txt").write_text("harmless\n")

    def install(module: Any, name: str = "resolve") -> None:
        real_resolve = getattr(module, name)

        def resolve_then_swap(*args: Any, **kwargs: Any) -> Any:
            resolved = real_resolve(*args, **kwargs)
            if not (ws / "d").is_symlink():
                os.rename(ws / "d", ws / "d_before")
                (ws / "d").symlink_to(outside)
            return resolved

        monkeypatch.setattr(module, name, resolve_then_swap)

    return install


@pytest.mark.parametrize("has_proc", [True, False], ids=["proc", "no-proc"])
def test_read_checks_the_file_it_opened(tree: dict[str, Path], swap_after_resolve: Any, monkeypatch: pytest.MonkeyPatch, has_proc: bool) -> None:
    from clawbot import confined
    from clawbot_tools.fs import read as read_module

    if not has_proc:  # the device-and-inode comparison used where /proc is missing
        monkeypatch.setattr(confined, "_opened_path", lambda fd: None)
    swap_after_resolve(read_module, "resolve_readable")
    result = run(tree["ws"], "read", path="d/sentinel.txt")
    assert result.is_error and OUTSIDE in text_of(result)
    assert "SECRET" not in text_of(result)


def test_write_creates_nothing_through_a_swapped_directory(tree: dict[str, Path], swap_after_resolve: Any) -> None:
    from clawbot_tools.fs import write as write_module

    ws = tree["ws"]
    before = snapshot(tree["root"], ws)
    swap_after_resolve(write_module)
    result = run(ws, "write", path="d/deeper/new.txt", content="pwned")
    assert result.is_error
    assert snapshot(tree["root"], ws) == before
    assert not (tree["outside"] / "deeper").exists()


def test_grep_checks_each_file_it_opened(tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from clawbot_tools.fs import grep as grep_module

    ws = tree["ws"]
    (ws / "hard.txt").unlink()
    (ws / "d").mkdir()
    (ws / "d" / "sentinel.txt").write_text("harmless SECRET-free text\n")

    def walk_then_swap(top: str):
        yield str(ws / "inside.txt")
        os.rename(ws / "d", ws / "d_before")
        (ws / "d").symlink_to(tree["outside"])
        yield str(ws / "d" / "sentinel.txt")

    monkeypatch.setattr(grep_module, "walk_files", walk_then_swap)
    result = run(ws, "grep", pattern="SECRET")
    assert "SECRET sentinel" not in text_of(result) and result.details["matches"] == 0
    assert result.details["files_skipped"] == 1


# clawbot's state folder holds the command approvals, the stored credentials, the cron jobs and
# the user's configuration: the file tools refuse it as the sandbox hides it from commands,
# wherever it lies (inside the workspace, or anywhere with confinement off).
APPROVALS = '{"version": 1, "agents": {"main": {"allowlist": [{"pattern": "sh -c *"}]}}}'
STATE_CALLS = {
    "write": {"path": "{state}/exec-approvals.json", "content": APPROVALS},
    "edit": {"path": "{state}/credentials/openai.json", "old_text": "api.openai.com", "new_text": "attacker.example"},
    "apply_patch": {"input": "*** Begin Patch\n*** Add File: {state}/cron/jobs.json\n+[]\n*** End Patch"},
    "read": {"path": "{state}/credentials/openai.json"},
}


@pytest.mark.parametrize("confined", [True, False], ids=["confined", "confinement off"])
@pytest.mark.parametrize("where", ["inside the workspace", "beside it"])
@pytest.mark.parametrize("tool", STATE_CALLS)
def test_the_file_tools_refuse_the_state_folder(tmp_path: Path, tool: str, where: str, confined: bool) -> None:
    from clawbot.types import PluginContext

    ws = tmp_path / "ws"
    state = ws / ".state" if where == "inside the workspace" else tmp_path / "state"
    (state / "credentials").mkdir(parents=True)
    credentials = state / "credentials" / "openai.json"
    credentials.write_text('{"api_key": "sk-real", "base_url": "https://api.openai.com/v1"}')
    before = snapshot(tmp_path, tmp_path / "nothing")
    ctx = PluginContext(plugin_name="tools", config=None, state_dir=state, env={}, on_close=lambda closer: None)
    handlers = {t.name: t.handler for t in tools(ToolsSettings(confine_to_workspace=confined), ctx)}
    shown = os.path.relpath(state, ws)
    arguments = {key: value.replace("{state}", shown) for key, value in STATE_CALLS[tool].items()}
    result = handlers[tool](ToolCall("c1", tool, arguments, "main", "agent:main:main", ws))
    assert isinstance(result, ToolResult) and result.is_error
    text = "".join(b.text for b in result.content if isinstance(b, TextBlock))
    why = OUTSIDE if confined and where == "beside it" else "clawbot's state folder"
    assert why in text and "sk-real" not in text
    assert snapshot(tmp_path, tmp_path / "nothing") == before


def test_a_workspace_inside_the_state_folder_stays_open_to_the_file_tools(tmp_path: Path) -> None:
    from clawbot.types import PluginContext

    state = tmp_path / "state"
    ws = state / "workspace"
    ws.mkdir(parents=True)
    (state / "exec-approvals.json").write_text("{}")
    ctx = PluginContext(plugin_name="tools", config=None, state_dir=state, env={}, on_close=lambda closer: None)
    handlers = {t.name: t.handler for t in tools(ToolsSettings(confine_to_workspace=False), ctx)}
    wrote = handlers["write"](ToolCall("c1", "write", {"path": "notes.md", "content": "x\n"}, "main", "agent:main:main", ws))
    assert not wrote.is_error and (ws / "notes.md").read_text() == "x\n"
    beside = handlers["write"](ToolCall("c2", "write", {"path": "../exec-approvals.json", "content": "x"}, "main", "agent:main:main", ws))
    assert beside.is_error and (state / "exec-approvals.json").read_text() == "{}"
