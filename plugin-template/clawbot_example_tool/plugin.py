"""Entry point of the example_tool plugin (``[project.entry-points.clawbot]``).

clawbot imports this module while it discovers plugins, before it knows whether any hook
will be called. So only ``hookimpl`` is imported at module level; the config class, the
tool and the value types (``Tool``, ``ToolResult`` ...) load inside the hooks that need them.
"""

from clawbot import hookimpl


@hookimpl
def clawbot_config_schema():
    """Validate the ``[plugins.example_tool]`` table with :class:`ExampleToolConfig`."""
    from clawbot_example_tool.config import ExampleToolConfig

    return ExampleToolConfig


@hookimpl
def clawbot_tools(ctx):
    """Offer the tools of this plugin; ``ctx.settings`` is the validated config table."""
    from clawbot_example_tool.config import ExampleToolConfig
    from clawbot_example_tool.remind_tool import remind_tool
    from clawbot_example_tool.tools import text_stats_tool

    return [text_stats_tool(ctx.settings or ExampleToolConfig()), remind_tool()]


@hookimpl
def clawbot_capabilities(ctx):
    """Offer what tools may ask for by type: here, reminders for the chat of a tool call."""
    from clawbot.types import Capability

    from clawbot_example_tool.reminders import ExampleToolReminders, provide_reminders

    return [Capability(ExampleToolReminders, provide_reminders)]


@hookimpl
def clawbot_services(ctx):
    """Offer background work for ``clawbot run``: the service that sends due reminders."""
    from clawbot_example_tool.config import ExampleToolConfig
    from clawbot_example_tool.reminder_service import ExampleToolReminderService

    settings = ctx.settings or ExampleToolConfig()
    return [ExampleToolReminderService(settings.reminder_check_seconds)]
