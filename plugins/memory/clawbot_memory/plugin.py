"""Entry point of the memory plugin: hooks only, everything heavy loads when they are called."""

from clawbot import hookimpl


@hookimpl
def clawbot_config_schema():
    from clawbot_memory.config import MemorySettings

    return MemorySettings


@hookimpl
def clawbot_memory_providers(ctx):
    from clawbot_memory.config import MemorySettings
    from clawbot_memory.provider import SqliteMemory

    provider = SqliteMemory(settings=ctx.settings or MemorySettings(), state_dir=ctx.state_dir, workspace_of=ctx.clawbot.workspace_of, env=ctx.env)
    # Watchers and open index files end with the kernel, whether or not it closes providers itself.
    ctx.on_close(provider.close)
    return [provider]


@hookimpl
async def clawbot_compaction_near(event):
    """The pre-compaction memory flush: durable notes go to the daily file this plugin indexes."""
    from clawbot_memory.flush import flush_before_compaction  # deferred: the CLI's --help loads this module, not the kernel

    return await flush_before_compaction(event)
