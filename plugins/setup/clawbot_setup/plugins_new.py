"""``clawbot plugins new``: a new plugin distribution from the plugin template, and how to go on."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from clawbot.commandkit import echo
from clawbot.paths import inside

from clawbot_setup.scaffold import PluginNames, TemplateError, render_plugin
from clawbot_setup.scaffold_steps import current_install, next_steps


@click.group()
def plugins() -> None:
    """List installed plugins or create a new one."""


@plugins.command("new")
@click.argument("name")
@click.option(
    "--directory",
    "-d",
    type=click.Path(file_okay=False),
    default=None,
    help="Where to create the distribution (default: ./clawbot-NAME).",
)
@click.option(
    "--in-source-tree",
    is_flag=True,
    help="Allow creating it inside the clawbot source checkout (e.g. under plugins/).",
)
def new_plugin(name: str, directory: str | None, in_source_tree: bool) -> None:
    """Create a plugin distribution NAME from the plugin template, with a passing test.

    Prints the commands that install the plugin and run its tests with this clawbot:
    installed clawbot, the plugin goes (editable) into the environment clawbot runs from;
    in a source checkout, `uv run` uses the checkout's kernel and leaves its environment alone.
    """
    install = current_install()
    try:
        names = PluginNames.from_name(name)
        target = Path(directory) if directory else Path.cwd() / names.distribution
        tree = install.source_tree
        if tree is not None and inside(str(tree.resolve()), str(target.resolve())) and not in_source_tree:
            raise TemplateError(
                f"{target.resolve()} is inside the clawbot source checkout {tree}; create the plugin "
                "elsewhere with -d DIR, or pass --in-source-tree to put it there anyway"
            )
        target = render_plugin(name, target)
    except TemplateError as exc:
        echo(f"error: {exc}", err=True)
        sys.exit(2)
    heading, commands, after = next_steps(target, install, names.plugin)
    echo(f"Created {target}")
    echo(f"Next, {heading}")
    for command in commands:
        echo(f"  {command}")
    echo(after)
