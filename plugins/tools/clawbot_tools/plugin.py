"""Entry point of the tools plugin. Only ``hookimpl`` at module level: discovery stays cheap."""

from clawbot import hookimpl


@hookimpl
def clawbot_config_schema():
    from clawbot_tools.config import ToolsSettings

    return ToolsSettings


@hookimpl
def clawbot_tools(ctx):
    from clawbot_tools.config import ToolsSettings
    from clawbot_tools.registry import all_tools

    return all_tools(ctx.settings or ToolsSettings(), ctx)


@hookimpl
def clawbot_doctor_checks(ctx):
    from clawbot_tools.config import ToolsSettings
    from clawbot_tools.runtime.health import sandbox_checks

    return sandbox_checks((ctx.settings or ToolsSettings()).exec, ctx.env, ctx.state_dir)
