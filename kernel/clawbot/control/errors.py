"""What a client of the control API may catch: the gateway is gone, or its answer was lost.

Kept apart from :mod:`clawbot.control.client` (http.client, ssl) so that the commands that
catch them, imported while ``clawbot --help`` lists the plugins' commands, load no HTTP client.
"""

from __future__ import annotations


class ApiUnavailable(Exception):
    """The gateway went away or answered something that is not the API."""


class ApiAnswerLost(ApiUnavailable):
    """The request reached the gateway, but its answer never came back (the gateway died or
    timed out meanwhile): what was asked may have been done, or cut off half-way."""
