"""Entry point of the terminal channel plugin.

Only ``hookimpl`` is imported at module level: plugin discovery must stay cheap, so the
config class and the channel load when their hooks are called.
"""

from clawbot import hookimpl


@hookimpl
def clawbot_config_schema():
    from clawbot import ConfigSection

    from clawbot_terminal.config import TerminalConfig

    return ConfigSection("channels.terminal", TerminalConfig)


@hookimpl
def clawbot_channels(ctx):
    from clawbot_terminal.channel import TerminalChannel
    from clawbot_terminal.config import TerminalConfig

    # What is typed is kept for the prompt's history (Up, Ctrl-R), private to the user.
    history = ctx.state_dir / "terminal" / "history"
    return [TerminalChannel(ctx.section("channels.terminal") or TerminalConfig(), history=history)]
