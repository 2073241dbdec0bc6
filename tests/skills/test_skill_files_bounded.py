"""The catalogue reads workspace skill files as it reads any workspace file: confined to the
workspace wherever the skill folder is configured (``skills.extra_dirs`` inside it too), and
never a file of unbounded size."""

from __future__ import annotations

import json
import resource
from pathlib import Path

from clawbot.skills.catalog import MAX_SKILL_BYTES, SkillCatalog

from .skillhelpers import write_skill


async def test_a_skill_in_an_extra_dir_inside_the_workspace_linked_to_a_key_shows_nothing_of_it(make_kernel, workspace: Path, tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "id_key"
    secret.parent.mkdir()
    secret.write_text("TOPSECRET-KEY-MATERIAL\n")
    extra = workspace / "team-skills"
    (extra / "leak").mkdir(parents=True)
    (extra / "leak" / "SKILL.md").symlink_to(secret)  # what a sandboxed `ln -s` can plant
    write_skill(extra, "lint", description="Lint the code.")
    config = f"[agents.defaults]\nworkspace = {json.dumps(str(workspace))}\n[skills]\nextra_dirs = [{json.dumps(str(extra))}]\n"
    kernel = await make_kernel(config=config)
    entries = {e.name: e for e in SkillCatalog(kernel).prompt_skills("main")}
    assert all("TOPSECRET" not in e.description for e in entries.values()), entries
    assert entries["lint"].description == "Lint the code."  # a skill of the folder itself still works


async def test_a_huge_skill_file_is_skipped_with_a_problem_not_read(make_kernel, workspace: Path) -> None:
    skill = workspace / "skills" / "big" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    with open(skill, "wb") as handle:
        handle.write(b"---\nname: big\ndescription: x\n---\n")
        handle.truncate(512 * 1024 * 1024)  # sparse: a sandboxed `truncate -s` costs no disk
    write_skill(workspace / "skills", "small", description="Still here.")
    kernel = await make_kernel(config=f'[agents.defaults]\nworkspace = "{workspace}"\n')
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    snapshot = SkillCatalog(kernel).snapshot("main")
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024
    assert grown_mb < 64, f"building the catalogue grew clawbot by {grown_mb} MB"
    names = {entry.name for entry in snapshot.entries}
    assert "big" not in names and "small" in names
    [problem] = [p for p in snapshot.problems if p.path == skill]
    assert f"larger than {MAX_SKILL_BYTES // 1024} KiB" in problem.message
