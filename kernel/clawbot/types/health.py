"""What a plugin tells ``clawbot doctor`` about its environment."""

from __future__ import annotations

from typing import Literal

import attrs

HealthLevel = Literal["ok", "info", "warn", "fail"]


@attrs.frozen
class HealthCheck:
    """One line of ``clawbot doctor``: ``area`` names the subject (``sandbox``), ``detail``
    what was found, ``fix`` what the user can do about a warning or failure."""

    level: HealthLevel
    area: str
    detail: str
    fix: str = ""
