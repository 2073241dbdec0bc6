"""Entry point of the automation plugin: hooks only, the scheduler and the CLI load when asked for."""

from clawbot import hookimpl

CRON_HELP = "Add, list, remove and run cron jobs: messages your agent acts on at set times."


@hookimpl
def clawbot_config_schema():
    from clawbot import ConfigSection

    from clawbot_automation.config import CronConfig

    return ConfigSection("cron", CronConfig)


@hookimpl
def clawbot_commands(cli):
    from clawbot.commandkit import LazyCommand

    cli.add_command(LazyCommand("cron", CRON_HELP, "clawbot_automation.cron_cli:cron"))


@hookimpl
def clawbot_tools(ctx):
    from clawbot_automation.cron_tool import make_tool

    return [make_tool()]


@hookimpl
def clawbot_services(ctx):
    from clawbot_automation.heartbeat import HeartbeatService
    from clawbot_automation.running import running_scheduler
    from clawbot_automation.service import CronService, cron_config

    cron = cron_config(ctx)
    return [HeartbeatService(), *([CronService(cron, running_scheduler(ctx.state))] if cron.enabled else [])]


@hookimpl
def clawbot_capabilities(ctx):
    from clawbot.types import Capability

    from clawbot_automation.cron_access import CronAccess, CronJobs
    from clawbot_automation.running import running_scheduler
    from clawbot_automation.service import cron_config

    cron, running = cron_config(ctx), running_scheduler(ctx.state)
    return [Capability(CronJobs, lambda scope: CronAccess(scope, cron, running))]
