"""Entry point of the workspace plugin: bootstrap files, core prompt sections, `clawbot init`.

Only ``hookimpl`` is imported at module level, so plugin discovery stays cheap.
"""

from clawbot import hookimpl


@hookimpl
def clawbot_bootstrap_files(ctx):
    from clawbot_workspace.bootstrap import load_bootstrap_files

    return load_bootstrap_files(ctx)


@hookimpl
def clawbot_prompt_sections(ctx):
    from clawbot_workspace.sections import all_sections

    return all_sections(ctx)


@hookimpl
def clawbot_commands(cli):
    from clawbot_workspace.init import init_command

    cli.add_command(init_command, "init")


@hookimpl
def clawbot_gateway_start(event):
    # First start: create the workspace of every configured agent whose folder does not
    # exist or is empty (a file deleted on purpose is never brought back).
    from clawbot_workspace.init import seed_on_first_start

    seed_on_first_start(event.clawbot)
