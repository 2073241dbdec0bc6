"""Bounded memory for a command's output: its first few KB and its last 200 KB.

A build can print gigabytes; the beginning (what was run, the first error) and the end
(the result) are what matter, so the middle is dropped and replaced by a
``[... N bytes omitted ...]`` marker. Positions count bytes of the whole stream, so a
reader can ask "what came after byte P" (``process poll``) even when some was dropped.
"""

from __future__ import annotations

HEAD_BYTES = 8 * 1024
TAIL_BYTES = 200 * 1024


def omitted(count: int, unit: str = "bytes") -> str:
    return f"\n[... {count} {unit} omitted ...]\n"


class OutputBuffer:
    def __init__(self, head_bytes: int = HEAD_BYTES, tail_bytes: int = TAIL_BYTES) -> None:
        self._head_limit = head_bytes
        self._tail_limit = tail_bytes
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0  # bytes received so far

    def append(self, data: bytes) -> None:
        self.total += len(data)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            excess = len(self._tail) - self._tail_limit
            if excess > 0:
                del self._tail[:excess]

    @property
    def dropped(self) -> int:
        """Bytes of the middle no longer kept."""
        return self._tail_start - len(self._head)

    @property
    def _tail_start(self) -> int:
        return self.total - len(self._tail)

    def read_from(self, position: int, *, final: bool = False) -> tuple[str, int]:
        """Text after byte ``position`` and the position to read from next time.

        Unless ``final`` (no more output will come), an incomplete UTF-8 character at the
        end is left for the next read.
        """
        parts: list[bytes] = []
        pos = max(0, position)
        if pos < len(self._head):
            parts.append(bytes(self._head[pos:]))
            pos = len(self._head)
        gap = self._tail_start - pos
        if gap > 0:
            parts.append(omitted(gap).encode())
            pos = self._tail_start
        parts.append(bytes(self._tail[pos - self._tail_start :]))
        data = b"".join(parts)
        keep = 0 if final else _incomplete_suffix(data)
        end = self.total - keep
        if keep:
            data = data[:-keep]
        return data.decode("utf-8", "replace"), end

    def text(self) -> str:
        """Everything kept."""
        return self.read_from(0, final=True)[0]


def _incomplete_suffix(data: bytes) -> int:
    """How many bytes at the end of ``data`` start a UTF-8 character not yet complete."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:
            continue  # continuation byte: look further back
        if byte & 0x80 == 0:
            return 0
        needed = 2 if byte & 0xE0 == 0xC0 else 3 if byte & 0xF0 == 0xE0 else 4 if byte & 0xF8 == 0xF0 else 1
        return back if needed > back else 0
    return 0


def cap(text: str, max_chars: int) -> str:
    """``text`` cut to about ``max_chars``: a fifth from the start, the rest from the end."""
    if len(text) <= max_chars:
        return text
    head = max_chars // 5
    tail = max_chars - head
    return text[:head] + omitted(len(text) - head - tail, "characters") + text[-tail:]
