"""Sessions: which conversation a message belongs to, and what it said.

:mod:`~clawbot.sessions.keys` maps a message to its session key (per ``session.dm_scope``);
:mod:`~clawbot.sessions.store` keeps each session's append-only JSONL transcript
(:mod:`~clawbot.sessions.transcript`) and the per-agent session index
(:mod:`~clawbot.sessions.index`) under ``<state>/sessions/``, one writer per session.
"""
