"""Whether a path lies inside a directory: the one test behind workspace confinement."""

from __future__ import annotations

import os


def inside(root: str, path: str) -> bool:
    """``path`` is ``root`` or below it (both absolute and already resolved)."""
    try:
        return os.path.commonpath([root, path]) == root
    except ValueError:  # one relative, one absolute, or nothing in common
        return False
