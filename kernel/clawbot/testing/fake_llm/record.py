"""``clawbot dev fake-llm --record FILE``: every request received, one JSON line each.

A line holds the API, method, path, model, whether it streamed, the headers and the body.
Credentials never reach the file: a header that carries one (``authorization``,
``x-api-key``, anything named like a key, token, secret or cookie) is written as
``"[redacted]"``, so a recording can be shared or committed as a fixture. The file is created
mode 0600: the bodies hold whole conversations.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import IO, Any

from clawbot.testing.fake_llm.script import RecordedRequest

REDACTED = "[redacted]"
_SECRET_HEADER = re.compile(r"auth|key|token|secret|cookie|session|password|signature", re.IGNORECASE)


def request_record(request: RecordedRequest) -> dict[str, Any]:
    """The request as written to the recording, credentials redacted."""
    headers = {name: (REDACTED if _SECRET_HEADER.search(name) else value) for name, value in request.headers.items()}
    return {
        "api": request.api,
        "method": request.method,
        "path": request.path,
        "model": request.model,
        "stream": request.stream,
        "headers": headers,
        "body": request.body,
    }


class RequestRecorder:
    """Appends each request to ``path`` as it arrives (flushed, so ``tail -f`` shows it)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        # whole conversations go in: a new file only its owner may read
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), 0o600)
        self._file: IO[str] = os.fdopen(fd, "a", encoding="utf-8")

    def __call__(self, request: RecordedRequest) -> None:
        line = json.dumps(request_record(request), ensure_ascii=False, default=str)
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()
