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
    from clawbot import HealthCheck

    from clawbot_tools.config import ToolsSettings
    from clawbot_tools.runtime.health import sandbox_checks
    from clawbot_tools.web import search_unavailable

    settings = ctx.settings or ToolsSettings()
    checks = sandbox_checks(settings.exec, ctx.env, ctx.state_dir)
    if problem := search_unavailable(settings, ctx.env):
        checks.append(HealthCheck("info", "web", "web_search is not offered to the model: no search provider is configured", problem))
    return checks
