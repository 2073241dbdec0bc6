"""Reading one SKILL.md: frontmatter variants, the no-frontmatter fallback, malformed files."""

from __future__ import annotations

import pytest
from clawbot.skills.frontmatter import MAX_DESCRIPTION_CHARS, parse_skill

# As OpenClaw writes it: the `clawdbot` key, metadata written as one line of JSON.
GEMINI = """\
---
name: gemini
description: Use Gemini CLI for coding assistance and Google search lookups
metadata: {"clawdbot":{"emoji":"♊️","requires":{"bins":["gemini"]}}}
---

# Gemini Skill

## When to Use
- Complex coding questions
"""

PLAIN_SKILL = """\
# create-python-script

当用户请求创建 Python 脚本时使用本 Skill。

## 步骤
1. 用 `ls` 查看当前目录结构。
2. 用 `write` 创建 `.py` 文件。
"""


def _ok(text: str, folder: str = "folder"):
    result = parse_skill(text, folder)
    assert result.document is not None, result.findings
    return result.document


def test_openclaw_frontmatter_with_clawdbot_metadata() -> None:
    doc = _ok(GEMINI)
    assert doc.name == "gemini"
    assert doc.description == "Use Gemini CLI for coding assistance and Google search lookups"
    assert doc.emoji == "♊️"
    assert doc.requires.bins == ("gemini",)
    assert doc.user_invocable is True and doc.disable_model_invocation is False and doc.always is False


@pytest.mark.parametrize("key", ["clawbot", "openclaw", "clawdbot"])
def test_each_metadata_key_is_read_as_yaml_mapping(key: str) -> None:
    doc = _ok(
        f"""---
name: tool
description: Does things.
homepage: https://example.invalid/tool
user-invocable: false
disable-model-invocation: true
metadata:
  {key}:
    always: true
    emoji: "🔧"
    os: [darwin, linux]
    primaryEnv: TOOL_KEY
    requires:
      bins: [jq]
      anyBins: [brew, apt]
      env: [TOOL_KEY]
      config: [channels.fake.enabled]
    install:
      - kind: brew
        formula: jq
---
body
"""
    )
    assert doc.homepage == "https://example.invalid/tool"
    assert doc.user_invocable is False and doc.disable_model_invocation is True
    assert doc.always is True and doc.emoji == "🔧" and doc.os == ("darwin", "linux")
    assert doc.primary_env == "TOOL_KEY"
    assert doc.requires.bins == ("jq",) and doc.requires.any_bins == ("brew", "apt")
    assert doc.requires.env == ("TOOL_KEY",) and doc.requires.config == ("channels.fake.enabled",)
    assert doc.install == ({"kind": "brew", "formula": "jq"},)


def test_clawbot_key_wins_over_openclaw_and_clawdbot() -> None:
    doc = _ok('---\nname: x\ndescription: d\nmetadata: {"clawdbot": {"emoji": "c"}, "openclaw": {"emoji": "o"}, "clawbot": {"emoji": "b"}}\n---\n')
    assert doc.emoji == "b"
    doc = _ok('---\nname: x\ndescription: d\nmetadata: {"clawdbot": {"emoji": "c"}, "openclaw": {"emoji": "o"}}\n---\n')
    assert doc.emoji == "o"


def test_metadata_as_a_json_string() -> None:
    doc = _ok(
        "---\nname: x\ndescription: d\n"
        """metadata: '{"openclaw": {"os": ["linux"], "requires": {"any_bins": ["a", "b"], "env": ["K"]}, "primary_env": "K"}}'\n"""
        "---\n"
    )
    assert doc.os == ("linux",) and doc.requires.any_bins == ("a", "b") and doc.requires.env == ("K",)
    assert doc.primary_env == "K"


def test_openclaw_multi_line_flow_metadata() -> None:
    doc = _ok(
        """---
name: gh
description: "Interact with GitHub using the `gh` CLI"
metadata:
  {
    "openclaw":
      {
        "emoji": "🐙",
        "requires": { "bins": ["gh"] },
      },
  }
---
"""
    )
    assert doc.requires.bins == ("gh",) and doc.emoji == "🐙"


def test_no_frontmatter_uses_folder_name_and_first_paragraph() -> None:
    doc = _ok(PLAIN_SKILL, "create-python-script")
    assert doc.name == "create-python-script"
    assert doc.description == "当用户请求创建 Python 脚本时使用本 Skill。"
    assert doc.has_frontmatter is False
    # the same layout without blank lines works too
    compact = "# create-python-script\n当用户请求创建 Python 脚本时使用本 Skill。\n## 步骤\n1. x\n"
    assert _ok(compact, "create-python-script").description == "当用户请求创建 Python 脚本时使用本 Skill。"


def test_frontmatter_without_description_falls_back_to_the_body() -> None:
    doc = _ok("---\nname: notes\n---\n# Notes\n\nKeep notes\nin notes.md.\n\nMore.\n", "x")
    assert doc.name == "notes" and doc.description == "Keep notes in notes.md."


def test_long_description_is_capped_with_a_warning() -> None:
    result = parse_skill(f"---\nname: x\ndescription: {'word ' * 400}\n---\n", "x")
    assert result.document is not None
    assert len(result.document.description) == MAX_DESCRIPTION_CHARS
    (finding,) = result.findings
    assert finding.severity == "warning" and finding.line == 3 and "1024" in finding.message


def test_unquoted_colon_in_a_value_is_read_like_openclaw_with_a_warning() -> None:
    result = parse_skill("---\nname: x\ndescription: Use it when: the user asks\n---\n", "x")
    assert result.document is not None and result.document.description == "Use it when: the user asks"
    (finding,) = result.findings
    assert finding.severity == "warning" and finding.line == 3


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("---\nname: [broken\ndescription: d\n---\n", 3, "flow sequence starts on line 2"),
        ("---\nname: [broken\n---\n", 2, "invalid YAML"),
        ("---\nname: x\n  description: d\n---\n", 3, "invalid YAML"),
        ("---\nname: x\ndescription: d\n", 1, "never closed"),
        ("---\n- a\n- b\n---\n", 2, "must be a mapping"),
        ("---\nname: x\ndescription: d\nuser-invocable: maybe\n---\n", 4, "`user_invocable` must be true or false"),
        ("---\nname: x\ndescription: [1, 2]\n---\n", 3, "`description` must be a string"),
        ("---\nname: x\ndescription: d\nmetadata:\n  clawbot:\n    requires:\n      bins: 3\n---\n", 7, "requires.bins` must be a list of strings"),
        ("---\nname: x\ndescription: d\nmetadata: '{not json'\n---\n", 4, "not valid JSON"),
        ("---\nname: x\ndescription: d\nmetadata: [1]\n---\n", 4, "`metadata` must be a mapping"),
        ("---\nname: ../etc\ndescription: d\n---\n", 2, "not a valid skill name"),
        ("---\nname: x\ndescription: d\nmetadata: {clawbot: {install: nope}}\n---\n", 4, "install` must be a list of mappings"),
        ("---\nname: x\n---\n# Title only\n", 1, "no description"),
    ],
)
def test_malformed_files_are_errors_with_the_file_line(text: str, line: int | None, words: str) -> None:
    result = parse_skill(text, "x")
    assert result.document is None
    errors = [f for f in result.findings if f.severity == "error"]
    assert len(errors) == 1
    assert words in errors[0].message
    assert errors[0].line == line


def test_folder_name_that_is_not_a_slug_is_an_error() -> None:
    result = parse_skill("# t\n\nDoes things.\n", "my skill!")
    assert result.document is None and "folder name" in result.findings[0].message


def test_crlf_and_bom_are_accepted() -> None:
    doc = _ok("\ufeff---\r\nname: x\r\ndescription: d\r\n---\r\nbody\r\n")
    assert doc.name == "x" and doc.description == "d"
