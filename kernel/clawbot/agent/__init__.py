"""Running agents: model selection and the turn.

:mod:`~clawbot.agent.models` picks the model chain (primary, then fallbacks);
:mod:`~clawbot.agent.conversation` runs a turn: the tool loop (up to
``agents.defaults.max_iterations`` model calls), with failover across auth profiles and
models (:mod:`~clawbot.agent.failover`), tool calls (:mod:`~clawbot.agent.toolbatch` orders a
reply's calls, :mod:`~clawbot.agent.toolrun` runs one), cost and compaction, all recorded
in the session's transcript.
"""
