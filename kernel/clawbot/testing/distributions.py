"""Installing throwaway distributions for tests, the way an installer lays them out.

``importlib.metadata`` finds a distribution through its ``*.dist-info`` folder on
``sys.path``; writing one (plus its modules) into a directory on ``PYTHONPATH`` is exactly
what ``pip install`` leaves behind, without a build or a network.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def install_distribution(
    site_dir: Path,
    name: str,
    *,
    version: str = "0.1.0",
    entry_points: Mapping[str, str] | None = None,
    modules: Mapping[str, str] | None = None,
    group: str = "clawbot",
) -> Path:
    """Write distribution ``name`` into ``site_dir``: its modules and a dist-info folder.

    ``entry_points`` maps entry-point names to ``module[:attr]`` in ``group``; ``modules``
    maps module file names (``my_plugin.py`` or ``pkg/__init__.py``) to source text.
    """
    site_dir.mkdir(parents=True, exist_ok=True)
    for relative, source in (modules or {}).items():
        path = site_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    dist_info = site_dir / f"{name.replace('-', '_')}-{version}.dist-info"
    dist_info.mkdir(exist_ok=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    lines = [f"[{group}]", *(f"{ep} = {target}" for ep, target in (entry_points or {}).items())]
    (dist_info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (dist_info / "RECORD").write_text("", encoding="utf-8")
    return dist_info
