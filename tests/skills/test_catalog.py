"""The skill catalog on a real kernel: sources and precedence, eligibility, filters, changes."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import attrs
from clawbot import ConfigSection
from clawbot.skills import catalog as catalog_module
from clawbot.skills.catalog import SkillCatalog
from clawbot.skills.discovery import BUNDLED_DIR
from clawbot.testing import plugin_from_hooks
from clawbot.types import SkillSource

from .skillhelpers import config_for, fake_bin, toml_str, write_skill

PLAIN_SKILL = (
    "# create-python-script\n\n当用户请求创建 Python 脚本时使用本 Skill。\n\n## 步骤\n"
    "1. 用 `ls` 查看当前目录结构。\n2. 用 `write` 创建 `.py` 文件。\n"
    "3. 文件内容应包含 shebang 和清晰的注释。\n4. 创建后给用户一个简要说明。\n"
)


def _names(entries) -> list[str]:
    return [e.name for e in entries]


def _by_name(entries) -> dict:
    return {e.name: e for e in entries}


async def test_a_workspace_skill_without_frontmatter_reaches_the_agent_that_allows_it(make_kernel, workspace: Path) -> None:
    skill = workspace / "skills" / "create-python-script" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(PLAIN_SKILL, encoding="utf-8")
    config = config_for(workspace, extra='[[agents.list]]\nid = "coder"\ndefault = true\nskills = { allow = ["create-python-script"] }\n')
    kernel = await make_kernel(config=config)
    catalog = SkillCatalog(kernel)

    (entry,) = catalog.prompt_skills("coder")
    assert entry.name == "create-python-script"
    assert entry.description == "当用户请求创建 Python 脚本时使用本 Skill。"
    assert entry.location == workspace / "skills" / "create-python-script" / "SKILL.md"
    assert entry.source == "workspace" and entry.eligible and entry.reasons == ()
    snapshot = catalog.snapshot("coder")
    assert snapshot.excluded["skill-creator"] == "not in the skills.allow of agent 'coder'"


async def test_bundled_skills_ship_and_are_valid(make_kernel, workspace: Path) -> None:
    kernel = await make_kernel(config=config_for(workspace))
    snapshot = SkillCatalog(kernel).snapshot("main")
    bundled = {e.name: e for e in snapshot.entries if e.source == "bundled"}
    assert {"skill-creator", "clawbot-config"} <= set(bundled)
    assert bundled["skill-creator"].location == BUNDLED_DIR / "skill-creator" / "SKILL.md"
    assert bundled["skill-creator"].eligible and "skill-creator" in _names(snapshot.prompt)
    assert snapshot.problems == ()


async def test_precedence_and_shadowing_across_all_five_kinds(make_kernel, workspace: Path, tmp_path: Path) -> None:
    user_dir = Path(os.environ["CLAWBOT_HOME"]) / "skills"
    extra_dir, team_dir, vendor_dir = tmp_path / "extra", tmp_path / "team", tmp_path / "vendor"
    for directory, label in ((workspace / "skills", "ws"), (user_dir, "user"), (extra_dir, "extra"), (team_dir, "team"), (vendor_dir, "vendor")):
        write_skill(directory, "dup", description=f"dup from {label}")
    write_skill(user_dir, "mine", description="user only")
    write_skill(extra_dir, "skill-creator", description="my own skill-creator")  # extra beats bundled
    write_skill(team_dir, "clawbot-config", description="loses to bundled")  # bundled beats plugins
    write_skill(vendor_dir, "vendored", description="vendor only")
    write_skill(vendor_dir, "team-thing", description="vendor copy")
    write_skill(team_dir, "team-thing", description="team copy")  # higher plugin precedence wins
    sources = plugin_from_hooks(
        clawbot_skill_sources=lambda ctx: [
            SkillSource("vendor", vendor_dir, precedence=1),
            SkillSource("team", team_dir, precedence=5),
        ]
    )
    kernel = await make_kernel(config=config_for(workspace, extra=f"[skills]\nextra_dirs = [{toml_str(extra_dir)}]\n"), plugins={"sources": sources})
    catalog = SkillCatalog(kernel)
    entries = _by_name(catalog.entries("main"))

    assert entries["dup"].source == "workspace" and entries["dup"].description == "dup from ws"
    assert entries["mine"].source == "user"
    assert entries["skill-creator"].source == "extra" and entries["skill-creator"].description == "my own skill-creator"
    assert entries["clawbot-config"].source == "bundled"
    assert entries["team-thing"].source == "team" and entries["vendored"].source == "vendor"
    assert _names(catalog.entries("main")) == sorted(entries)

    shadowed = {(s.name, s.source): s for s in catalog.shadowed("main")}
    assert {source for name, source in shadowed if name == "dup"} == {"user", "extra", "team", "vendor"}
    assert all(s.winner_source == "workspace" for (name, _), s in shadowed.items() if name == "dup")
    assert shadowed[("skill-creator", "bundled")].winner_source == "extra"
    assert shadowed[("clawbot-config", "team")].winner_source == "bundled"
    assert shadowed[("team-thing", "vendor")].winner_location == team_dir / "team-thing" / "SKILL.md"
    warnings = [str(p) for p in catalog.problems("main") if p.severity == "warning"]
    assert any(str(user_dir / "dup" / "SKILL.md") in w and "shadowed by" in w for w in warnings)


async def test_relative_extra_dirs_are_read_from_the_config_files_directory(make_kernel, workspace: Path) -> None:
    home = Path(os.environ["CLAWBOT_HOME"])
    write_skill(home / "shared-skills", "shared")
    kernel = await make_kernel(config=config_for(workspace, extra='[skills]\nextra_dirs = ["shared-skills", "~/missing"]\n'))
    catalog = SkillCatalog(kernel)
    assert _by_name(catalog.entries("main"))["shared"].source == "extra"
    (missing,) = [p for p in catalog.problems("main") if "not a directory" in p.message]
    assert missing.path == home / "missing" and missing.severity == "warning"


async def test_eligibility_reasons_per_requirement(make_kernel, workspace: Path, tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    fake_bin(bindir, "present")
    skills = workspace / "skills"
    write_skill(skills, "bins-ok", meta={"requires": {"bins": ["present"]}})
    write_skill(skills, "bins-missing", meta={"requires": {"bins": ["present", "gemini", "uv"]}})
    write_skill(skills, "any-ok", meta={"requires": {"anyBins": ["nope", "present"]}})
    write_skill(skills, "any-missing", meta={"requires": {"any_bins": ["brew", "apt"]}})
    write_skill(skills, "env-ok", meta={"requires": {"env": ["SET_VAR"]}})
    write_skill(skills, "env-missing", meta={"requires": {"env": ["EMPTY_VAR", "UNSET_VAR"]}})
    write_skill(skills, "config-ok", meta={"requires": {"config": ["agents.defaults.timezone", "channels.fake.enabled"]}})
    write_skill(skills, "config-missing", meta={"requires": {"config": ["agents.defaults.model.primary", "channels.fake.token", "browser.enabled"]}})
    other_os = "win32" if sys.platform != "win32" else "linux"
    write_skill(skills, "wrong-os", meta={"os": [other_os]})
    write_skill(skills, "always-on", meta={"always": True, "requires": {"bins": ["gemini"], "env": ["UNSET_VAR"]}})
    write_skill(skills, "always-wrong-os", meta={"always": True, "os": [other_os]})

    @attrs.frozen
    class FakeChannelConfig:
        enabled: bool = False
        token: str = ""

    schema = plugin_from_hooks(clawbot_config_schema=lambda: ConfigSection("channels.fake", FakeChannelConfig))
    config = config_for(workspace, extra='timezone = "Europe/Paris"\n[channels.fake]\nenabled = true\n')
    kernel = await make_kernel(config=config, plugins={"fake": schema}, env={"PATH": str(bindir), "SET_VAR": "1", "EMPTY_VAR": ""})
    entries = _by_name(SkillCatalog(kernel).entries("main"))

    for name in ("bins-ok", "any-ok", "env-ok", "config-ok", "always-on"):
        assert entries[name].eligible and entries[name].reasons == (), name
    assert entries["bins-missing"].reasons == ("needs the `gemini` binary on PATH", "needs the `uv` binary on PATH")
    assert entries["any-missing"].reasons == ("needs one of `brew`, `apt` on PATH",)
    assert entries["env-missing"].reasons == (
        "needs the environment variable `EMPTY_VAR` set",
        "needs the environment variable `UNSET_VAR` set",
    )
    assert entries["config-missing"].reasons == tuple(
        f"needs `{path}` set (true or non-empty) in the configuration" for path in ("agents.defaults.model.primary", "channels.fake.token", "browser.enabled")
    )
    assert entries["wrong-os"].reasons[0].startswith(f"runs only on {other_os} (this is ")
    assert not entries["always-wrong-os"].eligible  # always skips requirements, never the OS
    assert entries["always-on"].always
    prompt = _names(SkillCatalog(kernel).prompt_skills("main"))
    assert "bins-ok" in prompt and "always-on" in prompt and "bins-missing" not in prompt


async def test_allow_deny_agent_allow_and_disable_model_invocation(make_kernel, workspace: Path) -> None:
    skills = workspace / "skills"
    for name in ("alpha", "beta", "gamma"):
        write_skill(skills, name)
    write_skill(skills, "manual", frontmatter="disable-model-invocation: true\nuser-invocable: true")
    config = config_for(
        workspace,
        extra=(
            '[skills]\nallow = ["alpha", "beta", "manual"]\ndeny = ["beta"]\n'
            '[[agents.list]]\nid = "main"\ndefault = true\n'
            '[[agents.list]]\nid = "wide"\nskills = { allow = ["beta", "gamma"] }\n'
            '[[agents.list]]\nid = "none"\nskills = { allow = [] }\n'
        ),
    )
    kernel = await make_kernel(config=config)
    catalog = SkillCatalog(kernel)

    assert _names(catalog.prompt_skills("main")) == ["alpha"]
    excluded = catalog.snapshot("main").excluded
    assert excluded["beta"] == "denied by skills.deny"
    assert excluded["gamma"] == "not in skills.allow"
    assert excluded["manual"].startswith("disable-model-invocation")
    manual = _by_name(catalog.entries("main"))["manual"]
    assert manual.disable_model_invocation and manual.user_invocable and manual.eligible

    assert _names(catalog.prompt_skills("wide")) == ["gamma"]  # own allow replaces the global one; deny still applies
    assert catalog.snapshot("wide").excluded["alpha"] == "not in the skills.allow of agent 'wide'"
    assert catalog.prompt_skills("none") == ()
    assert len(catalog.entries("none")) == len(catalog.entries("main"))  # entries are not filtered


async def test_changes_are_seen_on_the_next_call_and_only_changed_files_are_parsed(make_kernel, workspace: Path, tmp_path: Path, monkeypatch) -> None:
    skills = workspace / "skills"
    first = write_skill(skills, "first", description="old text")
    write_skill(skills, "second")
    kernel = await make_kernel(config=config_for(workspace))
    catalog = SkillCatalog(kernel)
    parsed: list[str] = []
    real_parse = catalog_module.parse_skill

    def counting(text: str, folder: str, **options):
        parsed.append(folder)
        return real_parse(text, folder, **options)

    monkeypatch.setattr(catalog_module, "parse_skill", counting)
    before = catalog.prompt_skills("main")
    assert _by_name(before)["first"].description == "old text"
    assert catalog.prompt_skills("main") is before  # unchanged: the very same cached tuple
    parsed.clear()

    write_skill(skills, "first", description="new and longer text")
    assert _by_name(catalog.prompt_skills("main"))["first"].description == "new and longer text"
    assert parsed == ["first"]

    write_skill(skills, "third")
    assert "third" in _names(catalog.prompt_skills("main"))
    assert parsed == ["first", "third"]

    for path in first.parent.iterdir():
        path.unlink()
    first.parent.rmdir()
    assert "first" not in _names(catalog.prompt_skills("main"))

    broken = skills / "second" / "SKILL.md"
    broken.write_text("---\nname: second\ndescription: [oops\n---\n", encoding="utf-8")
    assert "second" not in _names(catalog.entries("main"))
    (problem,) = [p for p in catalog.problems("main") if p.severity == "error"]
    assert problem.path == broken and problem.line == 3
    write_skill(skills, "second", description="fixed")
    assert _by_name(catalog.entries("main"))["second"].description == "fixed"
    assert catalog.problems("main") == ()


async def test_environment_and_path_changes_update_eligibility(make_kernel, workspace: Path, tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    write_skill(workspace / "skills", "needs-key", meta={"requires": {"env": ["API_KEY"]}})
    write_skill(workspace / "skills", "needs-tool", meta={"requires": {"bins": ["tool"]}})
    kernel = await make_kernel(config=config_for(workspace), env={"PATH": str(bindir)})
    catalog = SkillCatalog(kernel)
    assert not {"needs-key", "needs-tool"} & set(_names(catalog.prompt_skills("main")))

    kernel.env["API_KEY"] = "sk-test"  # type: ignore[index]
    assert "needs-key" in _names(catalog.prompt_skills("main"))

    stamp = bindir.stat().st_mtime_ns
    fake_bin(bindir, "tool")
    # file times are coarse (a few ms): make sure the directory looks changed, as it would to a user
    os.utime(bindir, ns=(stamp + 10**9, stamp + 10**9))
    assert "needs-tool" in _names(catalog.prompt_skills("main"))


async def test_malformed_skill_is_skipped_with_a_logged_warning_and_a_lower_one_wins(make_kernel, workspace: Path, caplog) -> None:
    user_dir = Path(os.environ["CLAWBOT_HOME"]) / "skills"
    bad = workspace / "skills" / "dup" / "SKILL.md"
    bad.parent.mkdir(parents=True)
    bad.write_text("---\nname: dup\ndescription: fine\nuser-invocable: sometimes\n---\n", encoding="utf-8")
    write_skill(user_dir, "dup", description="the user's copy")
    kernel = await make_kernel(config=config_for(workspace))
    catalog = SkillCatalog(kernel)
    with caplog.at_level(logging.WARNING, logger="clawbot.skills"):
        entry = _by_name(catalog.entries("main"))["dup"]
        catalog.entries("main")
    assert entry.source == "user" and entry.description == "the user's copy"
    (problem,) = catalog.problems("main")
    assert str(problem) == f"{bad}:4: `user_invocable` must be true or false, not 'sometimes'"
    logged = [r.getMessage() for r in caplog.records if str(bad) in r.getMessage()]
    assert len(logged) == 1 and ":4:" in logged[0]  # logged once, not on every call


async def test_symlinked_skill_folders_and_loops(make_kernel, workspace: Path, tmp_path: Path) -> None:
    skills = workspace / "skills"
    skills.mkdir(parents=True)
    outside = tmp_path / "outside"
    write_skill(outside, "linked", description="lives elsewhere")
    (skills / "linked").symlink_to(outside / "linked", target_is_directory=True)
    (skills / "loop-a").symlink_to(skills / "loop-b")
    (skills / "loop-b").symlink_to(skills / "loop-a")
    (skills / "self").symlink_to(skills, target_is_directory=True)  # no SKILL.md inside: not a skill
    (skills / "README.md").write_text("not a skill folder\n", encoding="utf-8")
    write_skill(skills, ".hidden")
    # the user dir listed again as an extra dir: the same files are not "shadowed" by themselves
    user_dir = Path(os.environ["CLAWBOT_HOME"]) / "skills"
    write_skill(user_dir, "mine")
    kernel = await make_kernel(config=config_for(workspace, extra=f"[skills]\nextra_dirs = [{toml_str(user_dir)}]\n"))
    catalog = SkillCatalog(kernel)
    entries = _by_name(catalog.entries("main"))
    assert entries["linked"].location == skills / "linked" / "SKILL.md"
    assert entries["mine"].source == "user"
    assert not {"loop-a", "loop-b", "self", ".hidden", "README.md"} & set(entries)
    assert catalog.shadowed("main") == () and catalog.problems("main") == ()


async def test_unchanged_catalog_of_100_skills_is_served_without_reading_a_skill_file(make_kernel, workspace: Path, tmp_path: Path) -> None:
    # What a call costs is measured by bench/prompt.py; here: an unchanged catalog is the
    # cached one, and no SKILL.md is opened again to tell.
    bindir = tmp_path / "bin"
    fake_bin(bindir, "present")
    for index in range(100):
        meta = {"requires": {"bins": ["present"], "env": ["SOME_KEY"]}} if index % 3 == 0 else None
        write_skill(workspace / "skills", f"skill-{index:03d}", meta=meta)
    kernel = await make_kernel(config=config_for(workspace), env={"PATH": str(bindir), "SOME_KEY": "x"})
    catalog = SkillCatalog(kernel)
    first = catalog.snapshot("main")
    assert len(first.prompt) >= 100
    opened: list[str] = []
    watching = [True]

    def record_opens(event: str, args: tuple[object, ...]) -> None:
        if watching[0] and event == "open" and str(args[0]).endswith("SKILL.md"):
            opened.append(str(args[0]))

    sys.addaudithook(record_opens)  # cannot be removed: it stops recording when the test ends
    try:
        assert all(catalog.snapshot("main") is first for _ in range(300))
        assert opened == []
        write_skill(workspace / "skills", "skill-new")
        assert catalog.snapshot("main") is not first
        assert opened, "the new skill was never read"
    finally:
        watching[0] = False
