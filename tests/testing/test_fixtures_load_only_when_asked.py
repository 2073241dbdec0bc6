"""Installing clawbot adds no fixtures to anybody's pytest run: the test kit's load only where asked for.

The kernel wheel is built from kernel/ and installed into a fresh venv next to pytest, the
way a user's project that depends on clawbot has it. ``pytest --fixtures`` in an empty folder
then lists pytest's own fixtures and none of clawbot's; with ``-p clawbot.testing.pytest_plugin``
(what ``pytest_plugins = [...]`` in a conftest.py does) they are there.
uv takes packages from its cache and reaches the package registry only for what it lacks.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def uv(*args: str, cwd: Path) -> None:
    environment = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "UV_PROJECT_ENVIRONMENT")}
    done = subprocess.run([shutil.which("uv") or "uv", *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def venv_with_the_kernel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("kernel-wheel")
    uv("build", "-q", "--wheel", "--out-dir", str(work / "wheels"), str(ROOT / "kernel"), cwd=work)
    (wheel,) = (work / "wheels").glob("clawbot_kernel-*.whl")
    uv("venv", "-q", str(work / "venv"), cwd=work)
    python = work / "venv" / "bin" / "python"
    uv("pip", "install", "-q", "--python", str(python), str(wheel), f"pytest=={importlib.metadata.version('pytest')}", cwd=work)
    return python


def fixtures_listed(python: Path, folder: Path, *options: str) -> str:
    folder.mkdir(exist_ok=True)
    environment = {"PATH": os.defpath, "HOME": str(folder)}
    done = subprocess.run(
        [str(python), "-m", "pytest", "--fixtures", "-p", "no:cacheprovider", *options],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_plain_pytest_run_beside_clawbot_has_none_of_its_fixtures(venv_with_the_kernel: Path, tmp_path: Path) -> None:
    listed = fixtures_listed(venv_with_the_kernel, tmp_path / "empty")
    assert "tmp_path" in listed  # pytest's own fixtures are listed
    assert "clawbot_home" not in listed and "make_kernel" not in listed, listed


def test_the_fixtures_load_where_a_project_asks_for_them(venv_with_the_kernel: Path, tmp_path: Path) -> None:
    listed = fixtures_listed(venv_with_the_kernel, tmp_path / "asking", "-p", "clawbot.testing.pytest_plugin")
    assert "clawbot_home" in listed and "make_kernel" in listed and "fake_llm" in listed, listed
