"""The skills catalogue in the system prompt is capped, keeps the highest-precedence skills,
and tells the model how many it left out. A workspace skill linked to a file outside the
workspace shows nothing of that file.

Real skill folders, the real workspace plugin's Skills section, real turns whose system
prompt the model receives, and the ``clawbot context`` report.
"""

from __future__ import annotations

import re
from pathlib import Path

import clawbot_workspace.plugin
from clawbot.agent.conversation import Conversation
from clawbot.agent.models import ModelChoice
from clawbot.agent.prompt_report import prompt_report, report_text

from ..agent.scripted import ScriptedProvider
from .skillhelpers import config_for, reader_plugin, write_skill

LONG = "Use this skill when the task involves its topic. " * 22  # ~1,100 characters


async def _prompt(make_kernel, workspace: Path, extra: str = ""):
    kernel = await make_kernel(plugins={"workspace": clawbot_workspace.plugin, "reader": reader_plugin()}, config=config_for(workspace, extra=extra))
    provider = ScriptedProvider("ok")
    conversation = Conversation(kernel, ModelChoice(provider, "m"), "main", services=None)
    await conversation.send("agent:main:main", "hi")
    built = await conversation.build_prompt("agent:main:main", None)
    skills = next(s.text for s in built.sections if s.key == "skills")
    return provider.requests[0].system.text, skills, prompt_report(built), built


def _listed(section: str) -> list[str]:
    return re.findall(r"<skill><name>(.*?)</name>", section)


async def test_a_thousand_planted_skills_stay_under_the_cap_and_the_model_is_told(make_kernel, workspace: Path) -> None:
    for index in range(1000):
        write_skill(workspace / "skills", f"planted-{index:04d}", description=LONG)
    system, section, report, built = await _prompt(make_kernel, workspace)
    offered = len(built.context.skills)
    assert offered >= 1000  # the planted ones and the bundled ones
    assert len(section) <= 30_000
    assert len(system) < 30_000 + 20_000  # the rest of the prompt is small here
    listed = _listed(section)
    assert 20 <= len(listed) < 60
    assert listed == [f"planted-{index:04d}" for index in range(len(listed))]  # workspace first, by name
    descriptions = re.findall(r"<description>(.*?)</description>", section)
    assert all(len(d) <= 500 for d in descriptions) and descriptions[0].endswith("…")
    left = offered - len(listed)
    assert section.endswith(
        f"</available_skills>\n({left} more skills left out: this list is capped at 30,000 characters "
        "(skills.prompt_max_chars). The user can see every skill with `clawbot skills list`.)"
    )
    assert len(report["skills"]["left_out"]) == left and len(report["skills"]["entries"]) == len(listed)
    assert f"{left:,} more skills left out of the prompt (skills.prompt_max_chars)" in report_text(report)


async def test_precedence_decides_what_stays_when_the_cap_is_small(make_kernel, workspace: Path, clawbot_home: Path) -> None:
    write_skill(workspace / "skills", "zeta-local", description="Mine, in the workspace. " * 10)
    for name in ("alpha-user", "beta-user", "gamma-user"):
        write_skill(clawbot_home / "skills", name, description="Mine, in ~/.clawbot/skills. " * 10)
    extra = "[skills]\nprompt_max_chars = 1200\nprompt_description_max_chars = 60\n"
    _, section, report, built = await _prompt(make_kernel, workspace, extra)
    order = [s.name for s in built.context.skills]
    assert order[:4] == ["zeta-local", "alpha-user", "beta-user", "gamma-user"]  # by source, then by name
    listed = _listed(section)
    assert listed[0] == "zeta-local" and listed == order[: len(listed)] and len(listed) < len(order)
    assert report["skills"]["left_out"] == order[len(listed) :]
    assert len(section) <= 1200
    assert all(len(d) <= 60 for d in re.findall(r"<description>(.*?)</description>", section))


async def test_the_default_catalogue_is_unchanged_when_it_fits(make_kernel, workspace: Path) -> None:
    write_skill(workspace / "skills", "pdf", description="Work with PDFs.")
    _, section, report, built = await _prompt(make_kernel, workspace)
    assert _listed(section) == [s.name for s in built.context.skills]
    assert section.endswith("</available_skills>") and report["skills"]["left_out"] == []


async def test_a_workspace_skill_linked_to_a_key_file_shows_nothing_of_it(make_kernel, workspace: Path, tmp_path: Path) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n")
    (workspace / "skills" / "ssh").mkdir(parents=True)
    (workspace / "skills" / "ssh" / "SKILL.md").symlink_to(secret)
    shared = tmp_path / "shared" / "deploy"
    write_skill(shared.parent, "deploy", description="Deploys the site.")
    (workspace / "skills" / "deploy").symlink_to(shared, target_is_directory=True)  # a real skill, linked in
    system, section, _, built = await _prompt(make_kernel, workspace)
    assert "PRIVATE KEY" not in system and "b3BlbnNzaC1rZXkt" not in system
    assert "ssh" not in [s.name for s in built.context.skills]
    assert "<name>deploy</name><description>Deploys the site.</description>" in section


async def test_a_skill_file_swapped_for_a_device_link_is_never_read(make_kernel, workspace: Path, monkeypatch) -> None:
    """The listing sees a regular SKILL.md; a link to /dev/zero swapped in before it is opened
    must not be read (it would never end)."""
    import os

    planted = write_skill(workspace / "skills", "zero", description="Harmless.")
    write_skill(workspace / "skills", "pdf", description="Work with PDFs.")
    kernel = await make_kernel(plugins={"workspace": clawbot_workspace.plugin, "reader": reader_plugin()}, config=config_for(workspace))
    real_open = os.open
    swapped: list[str] = []

    def open_after_a_swap(path, flags, *args, **kwargs):  # noqa: ANN001, ANN202
        if os.fspath(path) == os.fspath(planted) and not swapped:
            planted.unlink()
            planted.symlink_to("/dev/zero")
            swapped.append("done")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_after_a_swap)
    skills = kernel.skill_catalog.prompt_skills("main")
    assert swapped
    assert [s.name for s in skills if s.source == "workspace"] == ["pdf"]
