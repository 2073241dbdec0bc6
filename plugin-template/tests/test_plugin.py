"""Tests of the example_tool plugin, using the fixtures of ``clawbot.testing``.

``make_kernel`` (and ``clawbot_home``, ``workspace`` ...) come from clawbot's pytest plugin,
which pytest loads automatically once clawbot-kernel is installed.
"""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import clawbot_example_tool.plugin as plugin
import pytest
from clawbot import Tool, ToolCall, ToolResult
from clawbot.testing import ConfigError, create_plugin_manager

PLUGIN = "example_tool"
DISTRIBUTION = "clawbot-example-tool"
TOOL = "example_tool_text_stats"
PROJECT = Path(__file__).resolve().parents[1]


def call(tool: Tool, workspace: Path, **arguments: object) -> ToolCall:
    return ToolCall("call-1", tool.name, arguments, "main", "agent:main:main", workspace)


def text_of(result: ToolResult) -> str:
    return "".join(block.text for block in result.content)


def test_plugin_registers_cleanly() -> None:
    manager = create_plugin_manager(plugins={PLUGIN: plugin}, load_entrypoints=False)
    manager.check_pending()  # raises on a hook name that does not exist (a typo)
    record = manager.records[PLUGIN]
    assert record.status == "loaded", record.error
    assert record.hooks == ["clawbot_capabilities", "clawbot_config_schema", "clawbot_services", "clawbot_tools"]
    assert record.warnings == []


def test_entry_point_is_declared() -> None:
    """clawbot finds the plugin through this entry point; check the installed metadata."""
    try:
        entry_points = importlib.metadata.distribution(DISTRIBUTION).entry_points
    except importlib.metadata.PackageNotFoundError:  # running from a checkout: read pyproject
        declared = tomllib.loads((PROJECT / "pyproject.toml").read_text("utf-8"))
        targets = declared["project"]["entry-points"]["clawbot"]
    else:
        targets = {ep.name: ep.value for ep in entry_points if ep.group == "clawbot"}
    assert targets == {PLUGIN: plugin.__name__}


async def test_tool_counts_words_lines_and_characters(make_kernel, workspace: Path) -> None:
    kernel = await make_kernel(plugins={PLUGIN: plugin})
    assert kernel.tools.names() == ["example_tool_remind", TOOL]
    assert kernel.tools.plugin_of(TOOL) == PLUGIN
    tool = kernel.tools[TOOL]
    assert tool.summary and tool.group == "text"
    assert tool.concurrent  # only computes, so its calls may overlap with other read-only ones
    assert tool.parameters["required"] == ["text"]

    result = await tool.handler(call(tool, workspace, text="The cat saw the dog.\nThe end"))
    assert not result.is_error
    assert result.details["words"] == 7
    assert result.details["unique_words"] == 5
    assert result.details["lines"] == 2
    assert result.details["characters"] == 28
    assert result.details["top_words"][0] == ["the", 3]  # case-insensitive by default
    assert text_of(result).startswith("7 words (5 distinct), 2 lines, 28 characters.")


async def test_config_changes_behaviour(make_kernel, workspace: Path) -> None:
    config = "[plugins.example_tool]\ntop_words = 1\ncase_sensitive = true\n"
    kernel = await make_kernel(plugins={PLUGIN: plugin}, config=config)
    assert kernel.config.section(f"plugins.{PLUGIN}").top_words == 1
    tool = kernel.tools[TOOL]

    result = await tool.handler(call(tool, workspace, text="b a a B b"))
    assert result.details["top_words"] == [["b", 2]]  # one word listed; "B" is another word
    assert result.details["unique_words"] == 3

    overridden = await tool.handler(call(tool, workspace, text="b a a B b", top=0))
    assert overridden.details["top_words"] == []
    assert "Most frequent" not in text_of(overridden)


async def test_bad_arguments_are_an_error_result(make_kernel, workspace: Path) -> None:
    kernel = await make_kernel(plugins={PLUGIN: plugin})
    tool = kernel.tools[TOOL]
    result = await tool.handler(call(tool, workspace, text="hi", top=-2))
    assert result.is_error and "top" in text_of(result)


@pytest.mark.parametrize(
    ("table", "path", "message"),
    [
        ('top_words = "three"', "plugins.example_tool.top_words", "expected an integer"),
        ("top_wrds = 3", "plugins.example_tool.top_wrds", "did you mean top_words?"),
        ("top_words = -1", "plugins.example_tool.top_words", "must be between 0 and 1000, got -1"),
    ],
)
async def test_invalid_config_names_the_key(make_kernel, table: str, path: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        await make_kernel(plugins={PLUGIN: plugin}, config=f"[plugins.example_tool]\n{table}\n")
    assert [(p.path, message in p.message) for p in caught.value.problems] == [(path, True)]
    assert path in str(caught.value)
