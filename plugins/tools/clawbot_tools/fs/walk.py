"""Walking a directory tree for find and grep; their glob patterns are matched by ``clawbot.globs``."""

from __future__ import annotations

import os
from collections.abc import Iterator

from clawbot_tools.fs.common import SKIP_DIRS


def walk_files(top: str) -> Iterator[str]:
    """Every non-directory path under ``top``, in a stable order; symlinked dirs not entered."""
    if not os.path.isdir(top):
        yield top
        return
    for directory, dirnames, filenames in os.walk(top, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            yield os.path.join(directory, name)


def walk_entries(top: str) -> Iterator[tuple[str, bool]]:
    """Every path under ``top`` (dirs too) as ``(path, is_dir)``; symlinked dirs not entered."""
    for directory, dirnames, filenames in os.walk(top, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in dirnames:
            yield os.path.join(directory, name), True
        for name in sorted(filenames):
            yield os.path.join(directory, name), False
