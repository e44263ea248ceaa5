"""Capped text capture for a cell's sys.stdout / sys.stderr.

Keeps the first `head_chars` and the last `tail_chars` characters written and
counts all of them, so a cell that prints 500 MB costs at most a few MB of
memory and its cost per write stays small (a huge single string is sliced,
never copied whole).
"""

from __future__ import annotations

import collections
import io
import threading

DEFAULT_HEAD_CHARS = 1_000_000
DEFAULT_TAIL_CHARS = 1_000_000


class CappedText(io.TextIOBase):
    def __init__(self, head_chars: int = DEFAULT_HEAD_CHARS,
                 tail_chars: int = DEFAULT_TAIL_CHARS) -> None:
        super().__init__()
        self._head_cap = head_chars
        self._tail_cap = tail_chars
        self._head: list[str] = []
        self._head_len = 0
        self._tail: collections.deque[str] = collections.deque()
        self._tail_len = 0
        self._lock = threading.Lock()
        self.chars = 0           # everything ever written

    @property
    def encoding(self) -> str:   # type: ignore[override]
        return "utf-8"

    @property
    def errors(self) -> str:     # type: ignore[override]
        return "strict"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def flush(self) -> None:
        return None

    def write(self, s: str) -> int:   # type: ignore[override]
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        n = len(s)
        if not n:
            return 0
        with self._lock:
            self.chars += n
            start = 0
            room = self._head_cap - self._head_len
            if room > 0:
                part = s if n <= room else s[:room]
                self._head.append(part)
                self._head_len += len(part)
                start = len(part)
            if start < n:
                self._add_tail(s, start, n)
        return n

    def _add_tail(self, s: str, start: int, n: int) -> None:
        if n - start >= self._tail_cap:
            self._tail.clear()
            self._tail.append(s[n - self._tail_cap:])
            self._tail_len = self._tail_cap
            return
        part = s[start:] if start else s
        self._tail.append(part)
        self._tail_len += len(part)
        while self._tail_len > self._tail_cap:
            excess = self._tail_len - self._tail_cap
            first = self._tail[0]
            if len(first) <= excess:
                self._tail.popleft()
                self._tail_len -= len(first)
            else:
                self._tail[0] = first[excess:]
                self._tail_len -= excess

    @property
    def omitted(self) -> int:
        return self.chars - self._head_len - self._tail_len

    def getvalue(self) -> str:
        with self._lock:
            head = "".join(self._head)
            tail = "".join(self._tail)
            omitted = self.chars - self._head_len - self._tail_len
        if not tail:
            return head
        if omitted:
            return f"{head}\n[... {omitted:,} characters omitted ...]\n{tail}"
        return head + tail


class DiscardText(CappedText):
    """Where output goes between cells (threads left running): counted, dropped."""

    def __init__(self) -> None:
        super().__init__(0, 0)

    def write(self, s: str) -> int:   # type: ignore[override]
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        self.chars += len(s)
        return len(s)
