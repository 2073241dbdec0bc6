"""Small helpers shared by the section builders: display forms of paths and XML text."""

from __future__ import annotations

import functools
from pathlib import Path

_XML_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"})


def xml_text(value: str) -> str:
    """``value`` on one line (runs of whitespace become one space), safe inside an XML element."""
    return " ".join(value.split()).translate(_XML_ESCAPES)


def _home() -> Path | None:
    try:
        return Path.home()
    except RuntimeError:  # no HOME and no passwd entry
        return None


def _relative(path: Path, base: Path) -> Path | None:
    """``path`` below ``base``, trying the paths as given and then with symlinks resolved."""
    from clawbot.paths import inside

    for p, b in ((path, base), (path.resolve(), base.resolve())):
        if inside(str(b), str(p)):
            return p.relative_to(b)
    return None


@functools.lru_cache(maxsize=4096)  # built every turn for every skill; resolving paths is the slow part
def display_path(path: Path, workspace: Path | None = None) -> str:
    """``./x`` inside the workspace, ``~/x`` inside the home directory, else the absolute path."""
    path = Path(path).expanduser()
    if workspace is not None:
        inside = _relative(path, Path(workspace).expanduser())
        if inside is not None:
            return "./" + inside.as_posix() if inside.parts else "."
    home = _home()
    if home is not None:
        inside = _relative(path, home)
        if inside is not None and inside.parts:
            return "~/" + inside.as_posix()
    return path.as_posix()


def absolute(path: Path) -> str:
    path = Path(path).expanduser()
    return (path if path.is_absolute() else path.absolute()).as_posix()


def block(title: str, *lines: str) -> str:
    """A section's text: its title line, then one line per argument."""
    return "\n".join((title, *lines))
