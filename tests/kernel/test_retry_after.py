"""How long a server asked clawbot to wait: one reading of Retry-After for every caller.

Provider plugins read it from an SDK error's headers (``providerkit.parse_retry_after``),
``web_search`` from the search API's answer; both go through
``providerkit.retry_after_seconds``, so a value means the same wherever it arrives.
"""

from __future__ import annotations

import email.utils

import pytest
from clawbot.providerkit import RETRY_AFTER_MAX_S, parse_retry_after, retry_after_seconds

NOW = 1_700_000_000.0


def http_date(epoch: float, *, usegmt: bool = True) -> str:
    return email.utils.formatdate(epoch, usegmt=usegmt)


CASES = [
    ("seconds", "7", 7.0),
    ("seconds with spaces", "  12 ", 12.0),
    ("decimal seconds", "1.5", 1.5),
    ("zero", "0", 0.0),
    ("an HTTP date ahead", http_date(NOW + 30), 30.0),
    ("an HTTP date in the past", http_date(NOW - 600), 0.0),
    ("an HTTP date without a zone (-0000 is UTC)", http_date(NOW + 45, usegmt=False).replace("+0000", "-0000"), 45.0),
    ("empty", "", None),
    ("nothing", None, None),
    ("garbage", "soon, please", None),
    ("a negative number", "-5", None),
    ("a signed number", "+5", None),
    ("not a number", "nan", None),
    ("infinity", "inf", None),
    ("an exponent", "1e3", None),
    ("huge", "9" * 30, RETRY_AFTER_MAX_S),
    ("beyond a float", "9" * 400, RETRY_AFTER_MAX_S),
    ("a date far ahead", http_date(NOW + 10 * 365 * 86_400), RETRY_AFTER_MAX_S),
    ("a date out of range", "Fri, 31 Dec 99999 23:59:59 GMT", None),
]


@pytest.mark.parametrize(("value", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_one_retry_after_value(value: str | None, expected: float | None) -> None:
    got = retry_after_seconds(value, now=NOW)
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected, abs=1.0)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "3"}, 3.0),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),  # the finer header wins
        ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),  # a bad one falls back
        ({"retry-after-ms": "-1", "retry-after": "-1"}, None),
        ({"retry-after-ms": "9" * 30}, RETRY_AFTER_MAX_S),
        ({}, None),
        (None, None),
    ],
)
def test_provider_headers(headers: dict[str, str] | None, expected: float | None) -> None:
    assert parse_retry_after(headers) == expected
