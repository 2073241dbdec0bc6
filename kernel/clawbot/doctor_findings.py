"""One line of ``clawbot doctor``'s report: how bad, which area, what was found, how to fix it.

Its own module so every check (the installation's, the setup's, the main session's) writes
the same line without importing the doctor that collects them.
"""

from __future__ import annotations

from typing import Literal

import attrs

Level = Literal["ok", "info", "warn", "fail"]


@attrs.frozen
class Finding:
    level: Level
    check: str
    detail: str
    fix: str = ""
