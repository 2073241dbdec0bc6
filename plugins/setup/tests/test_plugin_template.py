"""The plugin template and ``clawbot plugins new``: names, rendering, what is copied.

That the printed next steps install the plugin and pass its tests is shown in
plugins/setup/tests/test_plugins_new_steps.py, by running them.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest
from clawbot.testing.cli import invoke_cli
from clawbot_setup.scaffold import PluginNames, TemplateError, render_plugin, template_dir

REPO = Path(__file__).resolve().parents[3]


def rendered_files(root: Path) -> list[Path]:
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())


def test_rendered_plugin_is_renamed_throughout(tmp_path: Path) -> None:
    target = render_plugin("my-tool", tmp_path / "clawbot-my-tool")
    files = rendered_files(target)
    assert set(files) >= {
        Path("pyproject.toml"),
        Path("README.md"),
        Path("clawbot_my_tool/__init__.py"),
        Path("clawbot_my_tool/plugin.py"),
        Path("clawbot_my_tool/config.py"),
        Path("tests/test_plugin.py"),
    }
    for relative in files:
        assert "example" not in str(relative).lower()
        text = (target / relative).read_text("utf-8")
        assert "example" not in text.lower(), f"{relative} still mentions the template's name"
    pyproject = tomllib.loads((target / "pyproject.toml").read_text("utf-8"))
    assert pyproject["project"]["name"] == "clawbot-my-tool"
    assert pyproject["project"]["entry-points"]["clawbot"] == {"my_tool": "clawbot_my_tool.plugin"}
    assert "class MyToolConfig" in (target / "clawbot_my_tool/config.py").read_text("utf-8")
    assert "[plugins.my_tool]" in (target / "README.md").read_text("utf-8")


# ------------------------------------------------------------------ render_plugin


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("my-tool", ("my_tool", "my-tool", "clawbot-my-tool", "clawbot_my_tool", "MyTool")),
        ("my_tool", ("my_tool", "my-tool", "clawbot-my-tool", "clawbot_my_tool", "MyTool")),
        ("clawbot-my-tool", ("my_tool", "my-tool", "clawbot-my-tool", "clawbot_my_tool", "MyTool")),
        ("Weather2", ("weather2", "weather2", "clawbot-weather2", "clawbot_weather2", "Weather2")),
        ("a--b_", ("a_b", "a-b", "clawbot-a-b", "clawbot_a_b", "AB")),
    ],
)
def test_names_are_derived(name: str, expected: tuple[str, ...]) -> None:
    names = PluginNames.from_name(name)
    assert (names.plugin, names.kebab, names.distribution, names.package, names.camel) == expected


@pytest.mark.parametrize("name", ["", "9lives", "-tool", "_tool", "my tool", "my/tool", "my.tool", "wëather", "clawbot", "clawbot-"])
def test_bad_names_are_rejected_clearly(name: str, tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match="invalid plugin name") as caught:
        render_plugin(name, tmp_path / "out")
    assert repr(name) in str(caught.value)
    assert not (tmp_path / "out").exists()


def test_bad_name_through_the_cli_exits_2(tmp_path: Path) -> None:
    result = invoke_cli("plugins", "new", "9lives", "-d", str(tmp_path / "x"), home=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "invalid plugin name '9lives'" in result.stderr
    assert "starting with a letter" in result.stderr


def test_refuses_to_overwrite_a_non_empty_directory(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.mkdir()
    (target / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(TemplateError, match="not empty"):
        render_plugin("my-tool", target)
    assert rendered_files(target) == [Path("keep.txt")]
    assert (target / "keep.txt").read_text("utf-8") == "mine"

    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    with pytest.raises(TemplateError, match="not a directory"):
        render_plugin("my-tool", a_file)


def test_an_existing_empty_directory_is_used(tmp_path: Path) -> None:
    target = tmp_path / "empty"
    target.mkdir()
    assert render_plugin("my-tool", target) == target.resolve()
    assert (target / "clawbot_my_tool" / "plugin.py").is_file()


def test_default_directory_is_clawbot_name_in_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert render_plugin("Notes") == (tmp_path / "clawbot-notes").resolve()
    assert (tmp_path / "clawbot-notes" / "clawbot_notes" / "plugin.py").is_file()


def test_caches_and_virtualenvs_are_not_copied(tmp_path: Path) -> None:
    fake = tmp_path / "template"
    shutil.copytree(template_dir(), fake)
    for junk in ("__pycache__/plugin.cpython-311.pyc", ".venv/bin/python", ".pytest_cache/v/x", "tests/stale.pyc"):
        (fake / junk).parent.mkdir(parents=True, exist_ok=True)
        (fake / junk).write_text("junk", encoding="utf-8")
    (fake / "clawbot_example_tool" / "ExampleTool.txt").write_text("ExampleTool example-tool", encoding="utf-8")
    target = render_plugin("my-tool", tmp_path / "out", template=fake)
    files = {p.as_posix() for p in rendered_files(target)}
    assert not any(part in f for f in files for part in ("__pycache__", ".venv", ".pytest_cache", ".pyc"))
    assert (target / "clawbot_my_tool" / "MyTool.txt").read_text("utf-8") == "MyTool my-tool"


def test_template_is_found_in_this_checkout() -> None:
    found = template_dir()
    assert (found / "pyproject.toml").is_file()
    assert found == REPO / "plugin-template" or found.name == "_plugin_template"
