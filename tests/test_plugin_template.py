"""The plugin template and ``clawbot plugins new``: render, install offline, run its own tests.

The end-to-end test renders ``plugin-template/`` through the real CLI, installs the result
into a fresh virtual environment without network and runs the rendered distribution's own
test suite there, then checks that clawbot discovers the plugin through its entry point.

The fresh environment reuses this one's packages (clawbot-kernel, pytest, attrs ...)
through a ``.pth`` file, so nothing but the rendered distribution is installed. That is built
by ``uv pip install --offline`` with hatchling from uv's cache; on a machine whose uv cache
holds no hatchling (or without uv) the distribution is laid out the way an editable install
does it instead: a ``.pth`` for its directory plus a dist-info made from its pyproject.toml.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import clawbot
import pytest
from clawbot.scaffold import PluginNames, TemplateError, render_plugin, template_dir

REPO = Path(__file__).resolve().parents[1]
OFFLINE_HINTS = ("not found in the cache", "network was disabled", "offline")


# ------------------------------------------------------------------ helpers


def run(args: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def describe(proc: subprocess.CompletedProcess[str]) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAWBOT_", "PYTEST_"))}
    for key in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT"):
        env.pop(key, None)
    env["UV_OFFLINE"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def clawbot_env(env: dict[str, str], home: Path) -> dict[str, str]:
    """A private state dir for clawbot runs (uv keeps the real HOME: its cache lives there)."""
    home.mkdir(exist_ok=True)
    return {**env, "CLAWBOT_HOME": str(home), "HOME": str(home)}


def create_venv(path: Path, env: dict[str, str]) -> Path:
    """A fresh venv on this interpreter that also sees this environment's packages."""
    uv = shutil.which("uv")
    if uv:
        proc = run([uv, "venv", "--quiet", "--python", sys.executable, str(path)], cwd=path.parent, env=env)
        assert proc.returncode == 0, describe(proc)
    else:
        import venv

        venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(path)
    python = path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    proc = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=path, env=env)
    assert proc.returncode == 0, describe(proc)
    site_packages = Path(proc.stdout.strip())
    # addsitedir (not a plain path line) so this environment's own .pth files apply too:
    # the workspace's editable installs, clawbot-kernel among them.
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    kernel_src = Path(clawbot.__file__).resolve().parents[1]
    lines = [f"import site; site.addsitedir({p!r})" for p in sorted(ours)] + [str(kernel_src)]
    (site_packages / "_clawbot_test_parent_env.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return python


def install(python: Path, project: Path, env: dict[str, str]) -> str:
    """Install ``project`` into the venv of ``python`` without network; returns how."""
    uv = shutil.which("uv")
    if uv:
        proc = run(
            [uv, "pip", "install", "--offline", "--no-deps", "--python", str(python), str(project)],
            cwd=project, env=env, timeout=120,
        )
        if proc.returncode == 0:
            return "uv pip install (wheel built by hatchling from the uv cache)"
        assert any(hint in proc.stderr for hint in OFFLINE_HINTS), describe(proc)
    # No build backend available offline: lay out an editable install by hand.
    from clawbot.testing import install_distribution

    project_table = tomllib.loads((project / "pyproject.toml").read_text("utf-8"))["project"]
    proc = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=project, env=env)
    site_packages = Path(proc.stdout.strip())
    install_distribution(
        site_packages,
        project_table["name"],
        version=project_table["version"],
        entry_points=project_table["entry-points"]["clawbot"],
    )
    (site_packages / f"_{project_table['name']}_editable.pth").write_text(f"{project}\n", encoding="utf-8")
    return "hand-made editable install (no uv, or no hatchling in its cache)"


def rendered_files(root: Path) -> list[Path]:
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file())


# ------------------------------------------------------------------ end to end


def test_rendered_plugin_installs_passes_its_tests_and_is_discovered(tmp_path: Path) -> None:
    env = base_env()
    target = tmp_path / "clawbot-my-tool"
    cli = [sys.executable, "-m", "clawbot.cli.main"]

    proc = run([*cli, "plugins", "new", "my-tool", "-d", str(target)], cwd=tmp_path, env=clawbot_env(env, tmp_path / "home"))
    assert proc.returncode == 0, describe(proc)
    assert f"Created {target}" in proc.stdout

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

    python = create_venv(tmp_path / "venv", env)
    how = install(python, target, env)
    print(f"rendered plugin installed by: {how}")

    # The rendered distribution's own test suite, in the new environment.
    proc = run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=target,
               env=clawbot_env(env, tmp_path / "home"), timeout=120)
    assert proc.returncode == 0, describe(proc)
    assert " passed" in proc.stdout and "failed" not in proc.stdout

    # Outside the project directory, the import comes from the installed distribution.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    home_env = clawbot_env(env, tmp_path / "home")
    proc = run([str(python), "-c", "import clawbot_my_tool.plugin as p; print(p.__file__)"], cwd=elsewhere, env=home_env)
    assert proc.returncode == 0, describe(proc)
    assert Path(proc.stdout.strip()).is_relative_to(tmp_path), proc.stdout

    proc = run([str(python), "-m", "clawbot.cli.main", "plugins", "list", "--json"], cwd=elsewhere, env=home_env)
    assert proc.returncode == 0, describe(proc)
    records = {r["name"]: r for r in json.loads(proc.stdout)["plugins"]}
    record = records["my_tool"]
    assert record["status"] == "loaded", record
    assert record["distribution"] == "clawbot-my-tool"
    assert record["version"] == "0.1.0"
    assert record["module"] == "clawbot_my_tool.plugin"
    assert record["hooks"] == ["clawbot_config_schema", "clawbot_tools"]
    assert record["warnings"] == []

    # The plugin's table validates through the installed plugin too.
    config = elsewhere / "clawbot.toml"
    config.write_text('[plugins.my_tool]\ntop_words = "many"\n', encoding="utf-8")
    proc = run([str(python), "-m", "clawbot.cli.main", "--config", str(config), "config", "validate"],
               cwd=elsewhere, env=home_env)
    assert proc.returncode == 2, describe(proc)
    assert "plugins.my_tool.top_words" in proc.stdout + proc.stderr


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
    proc = run([sys.executable, "-m", "clawbot.cli.main", "plugins", "new", "9lives", "-d", str(tmp_path / "x")],
               cwd=tmp_path, env=clawbot_env(base_env(), tmp_path / "home"))
    assert proc.returncode == 2, describe(proc)
    assert "invalid plugin name '9lives'" in proc.stderr
    assert "starting with a letter" in proc.stderr


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
