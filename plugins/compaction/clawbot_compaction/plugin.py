"""Entry point of the compaction plugin: hooks only, the strategies load when asked for."""

from clawbot import hookimpl


@hookimpl
def clawbot_compaction_strategies(ctx):
    from clawbot_compaction.summary import SummaryStrategy
    from clawbot_compaction.trim import TrimStrategy

    return [SummaryStrategy(), TrimStrategy()]
