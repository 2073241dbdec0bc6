"""Typed records a plugin keeps in its own state files, read as strictly as the configuration.

A record of the wrong shape must be skipped and named, never coerced (``str(5)``,
``bool("no")``): :func:`record_converter` is the configuration's strict cattrs converter,
ignoring fields it does not know (a newer version's), and :func:`record_problem` says in one
line what was wrong and in which field ("schedule.kind: expected one of ...").
"""

from __future__ import annotations

import cattrs

from clawbot.config.converter import make_converter
from clawbot.config.problems import walk


def record_converter() -> cattrs.Converter:
    """A fresh strict converter for state records; the caller owns it."""
    return make_converter(forbid_extra_keys=False)


def record_problem(exc: BaseException) -> str:
    """The first thing the converter found wrong in a record, with its field path."""
    return next((str(problem) for problem in walk(exc)), str(exc))


__all__ = ["record_converter", "record_problem"]
