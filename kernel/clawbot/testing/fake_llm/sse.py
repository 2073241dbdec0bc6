"""Server-sent-event framing and delta chunking shared by the wire renderers."""

from __future__ import annotations

import json
from typing import Any


def sse(data: Any, event: str | None = None) -> bytes:
    """One SSE frame; ``data`` is JSON-encoded unless it is already a string."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def chunks(text: str, size: int = 6) -> list[str]:
    """``text`` cut into delta-sized pieces (at least one piece, possibly empty)."""
    if not text:
        return []
    return [text[i : i + size] for i in range(0, len(text), size)]
