"""Entry point of the workspace plugin: the default bootstrap-file loader.

Stage 4 adds the core prompt sections, skills sources and file size caps here.
"""

from clawbot import hookimpl


@hookimpl
def clawbot_bootstrap_files(ctx):
    from clawbot_workspace.bootstrap import load_bootstrap_files

    return load_bootstrap_files(ctx)
