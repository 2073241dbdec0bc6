"""The ``[cron]`` table, claimed by this plugin under the name it always had.

Heartbeats keep their settings in ``agents.defaults.heartbeat`` (and each agent's own
``heartbeat``): the kernel reads ``ack_max_chars`` there too, for every reply it holds back
as a heartbeat acknowledgement.
"""

from __future__ import annotations

from typing import Literal

import attrs
from clawbot.types import InRange


@attrs.frozen(kw_only=True)
class CronConfig:
    """``[cron]``: jobs run while ``clawbot run`` runs (``enabled = false``: none do).

    ``catch_up``: what happens to runs missed while clawbot was down: ``once`` (one run now
    for all that were missed, the default), ``all`` (each missed run, up to 10), ``none``
    (skipped, recorded as such); a run cut off by a crash or a kill is interrupted, and
    ``once`` and ``all`` run it again at the next start. ``max_concurrent_runs``: jobs running at once.
    ``run_timeout_s``: a run that takes longer fails. ``history``: runs kept per job.
    """

    enabled: bool = True
    catch_up: Literal["once", "all", "none"] = "once"
    max_concurrent_runs: int = attrs.field(default=2, validator=InRange(1, 100))
    run_timeout_s: int = attrs.field(default=600, validator=InRange(1, 24 * 3600))
    history: int = attrs.field(default=50, validator=InRange(1, 10_000))
