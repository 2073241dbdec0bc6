"""The folder each memory test installs its test provider into, put on ``sys.path``."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    return path
