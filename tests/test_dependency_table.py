"""docs/architecture.md's dependency table lists exactly what the pyproject files depend on.

A dependency is a promise to every user who installs clawbot, so each one is written down
with its reason; a new one without a row (or a row for one that was dropped) fails here.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
HEADING = "## 9. Dependencies and why"


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    return normalized(re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1))


def pyprojects() -> list[Path]:
    found = [ROOT / "pyproject.toml", *sorted(ROOT.glob("kernel/pyproject.toml")), *sorted(ROOT.glob("plugins/*/pyproject.toml"))]
    found.extend(sorted(ROOT.glob("plugin-template/pyproject.toml")))
    return found


def declared() -> dict[str, list[str]]:
    """Every third-party requirement name -> the files that name it (the workspace's own left out)."""
    own: set[str] = set()
    found: dict[str, list[str]] = {}
    for path in pyprojects():
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        project = data.get("project", {})
        own.add(normalized(project.get("name", "")))
        requirements = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            requirements.extend(extra)
        for group in data.get("dependency-groups", {}).values():
            requirements.extend(r for r in group if isinstance(r, str))
        requirements.extend(data.get("build-system", {}).get("requires", []))
        for requirement in requirements:
            found.setdefault(requirement_name(requirement), []).append(str(path.relative_to(ROOT)))
    return {name: files for name, files in found.items() if name not in own}


def documented() -> set[str]:
    """The names in backticks in the first column of the dependency table."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index(HEADING) :]
    section = section[: section.find("\n## ", 1)] if "\n## " in section[1:] else section
    names: set[str] = set()
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith(("| dependency", "|---")):
            continue
        first = line.split("|")[1]
        names.update(normalized(n) for n in re.findall(r"`([^`]+)`", first))
    return names


def test_every_dependency_has_a_row_and_every_row_a_dependency() -> None:
    needed = declared()
    assert {"pluggy", "pytest", "hatchling", "anthropic"} <= set(needed), sorted(needed)  # the scan works
    rows = documented()
    missing = {name: files for name, files in needed.items() if name not in rows}
    extra = rows - set(needed)
    assert not missing, f"add a row to {HEADING} in docs/architecture.md (what it is for, why this one) for: {missing}"
    assert not extra, f"{HEADING} names dependencies no pyproject.toml has: {sorted(extra)}"


def test_the_table_says_why_for_each_row() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index(HEADING) :]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    short = [row.split("|")[1].strip() for row in rows if len(row.split("|")[3].strip()) < 40]
    assert not short, f"these rows say too little about why: {short}"
