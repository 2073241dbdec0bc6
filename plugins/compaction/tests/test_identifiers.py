"""The identifiers a summary must keep, found without a model: one row per kind."""

from __future__ import annotations

import pytest
from clawbot_compaction.identifiers import extract, identifiers

CASES = [
    ("Edit /srv/app/config.yaml, then src/main.py.", [("path", "/srv/app/config.yaml"), ("path", "src/main.py")]),
    ("Look in ~/notes/todo.md and ../lib/util.rs", [("path", "~/notes/todo.md"), ("path", "../lib/util.rs")]),
    ("The log is in C:\\Users\\ana\\app.log", [("path", "C:\\Users\\ana\\app.log")]),
    ("Read notes.txt first.", [("path", "notes.txt")]),
    ("Docs at https://example.com/docs?a=1. Thanks", [("url", "https://example.com/docs?a=1")]),
    ("Write to bob.smith@example.org", [("email", "bob.smith@example.org")]),
    ("Run `uv run pytest -q` again", [("code", "uv run pytest -q")]),
    ("Due 2026-01-15 at 14:30", [("date", "2026-01-15"), ("time", "14:30")]),
    ("Deployed 2026-03-02T09:15:00Z", [("date", "2026-03-02T09:15:00Z")]),
    ("Met on March 15, 2026 and 3rd April 2026", [("date", "March 15, 2026"), ("date", "3rd April 2026")]),
    ("Invoice of 15/03/2026", [("date", "15/03/2026")]),
    ("Commit 3f9a2c1d broke it", [("hash", "3f9a2c1d")]),
    ("Request 123e4567-e89b-12d3-a456-426614174000 failed", [("uuid", "123e4567-e89b-12d3-a456-426614174000")]),
    ("Order ORD-48213, ticket JIRA-1234, case #482", [("ticket", "ORD-48213"), ("ticket", "JIRA-1234"), ("ticket", "#482")]),
    ("Upgrade to v1.2.3 or 2.0.1-rc1", [("version", "v1.2.3"), ("version", "2.0.1-rc1")]),
    ("Server 192.168.1.10:8080 is up", [("ip", "192.168.1.10:8080")]),
    ("It costs $1,250 a month", [("money", "$1,250")]),
    ("512 MB, 250ms, 3.5 GB and 45%", [("quantity", "512 MB"), ("quantity", "250ms"), ("quantity", "3.5 GB"), ("quantity", "45%")]),
    ("The DatabasePool calls getUserById", [("name", "DatabasePool"), ("name", "getUserById")]),
    ("Set max_connections and RETRY_LIMIT", [("name", "max_connections"), ("name", "RETRY_LIMIT")]),
    ("Node k8s-node-7 is down", [("id", "k8s-node-7")]),
    ("The staging database host is db-7.internal.", [("host", "db-7.internal")]),
    ("Ask api.eu.example.com or example.com.", [("host", "api.eu.example.com"), ("host", "example.com")]),
    ("That is, e.g. i.e. the end.Then more", []),
    ("The population was 48213 in total", [("number", "48213")]),
    ("I think this is fine. The answer is yes, a/b testing.", []),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0][:30] for c in CASES])
def test_each_kind_of_identifier_is_found_whole(text: str, expected: list[tuple[str, str]]) -> None:
    assert extract(text) == expected


def test_identifiers_are_distinct_in_order_of_appearance_and_capped() -> None:
    texts = ["see /a/b.py and /c/d.py", "again /a/b.py, then 2026-01-15"]
    assert identifiers(texts) == ["/a/b.py", "/c/d.py", "2026-01-15"]
    assert identifiers(texts, limit=2) == ["/a/b.py", "/c/d.py"]
