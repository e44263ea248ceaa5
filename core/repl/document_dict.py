"""One entry of the REPL's `documents` when `context` is one joined str.

    doc = DocumentDict(context, path="a.txt", chars=120, offset=14)
    doc["text"]          # context[14:134], cut when asked for, never stored

A CPython str slice is a copy, so documents holding their own texts beside `context`
would double the worker's memory. A DocumentDict is a real dict (isinstance, json.dumps,
dict(), {**d}, ==, copy, pickle all see "text") whose "text" is cut from `context` each
time it is read; the cut is freed when the model's code lets go of it. Assigning
doc["text"] stores that value as any dict would.

The dict's own storage does not hold "text": the methods below put it back. Operations
that read a dict's storage directly and that are not overridden here (PyDict_GetItem in C
extensions) do not see it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:   # (typing costs the worker's start ~8 ms of CPU)
    from typing import Any, Iterator

TEXT = "text"            # listed second, after "path", as in a plain document dict


class DocumentDict(dict):
    __slots__ = ("_context",)

    def __init__(self, context: str, **fields: Any) -> None:
        super().__init__(**fields)
        self._context = context

    def _cut(self) -> str:
        start = dict.__getitem__(self, "offset")
        return self._context[start:start + dict.__getitem__(self, "chars")]

    def _lazy(self) -> bool:
        return not dict.__contains__(self, TEXT)

    def __getitem__(self, key: Any) -> Any:
        if key == TEXT and self._lazy():
            return self._cut()
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        if key == TEXT and self._lazy():
            return self._cut()
        return dict.get(self, key, default)

    def __contains__(self, key: Any) -> bool:
        return (key == TEXT and self._lazy()) or dict.__contains__(self, key)

    def __len__(self) -> int:
        return dict.__len__(self) + self._lazy()

    def __iter__(self) -> Iterator[Any]:
        return iter(self.keys())

    def keys(self) -> Any:                           # type: ignore[override]
        stored = list(dict.keys(self))
        if self._lazy():
            at = stored.index("path") + 1 if "path" in stored else 0
            stored.insert(at, TEXT)
        return stored

    def items(self) -> Any:                          # type: ignore[override]
        return [(k, self[k]) for k in self.keys()]

    def values(self) -> Any:                         # type: ignore[override]
        return [self[k] for k in self.keys()]

    def pop(self, key: Any, *default: Any) -> Any:
        if key == TEXT and self._lazy():
            value = self._cut()
            dict.__setitem__(self, TEXT, value)     # now stored, then removed like any key
        return dict.pop(self, key, *default)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key == TEXT and self._lazy():
            return self._cut()
        return dict.setdefault(self, key, default)

    def copy(self) -> dict:                          # a plain dict, text included
        return dict(self.items())

    def __copy__(self) -> dict:
        return self.copy()

    def __deepcopy__(self, memo: dict) -> dict:
        import copy
        return {copy.deepcopy(k, memo): copy.deepcopy(v, memo) for k, v in self.items()}

    def __reduce__(self) -> Any:                     # pickles as a plain dict
        return (dict, (self.items(),))

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, dict):
            return dict(self.items()) == (dict(other.items()) if isinstance(other, DocumentDict) else other)
        return NotImplemented

    def __ne__(self, other: Any) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = None                                  # type: ignore[assignment]

    def __or__(self, other: Any) -> Any:
        if not isinstance(other, dict):
            return NotImplemented
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other: Any) -> Any:
        if not isinstance(other, dict):
            return NotImplemented
        merged = dict(other)
        merged.update(self.items())
        return merged

    def __repr__(self) -> str:
        return repr(dict(self.items()))


_MESSAGE_HEADERS = {"from": "from", "to": "to", "cc": "cc", "date": "date", "subject": "subject"}


class Messages:
    """A mailbox's messages, `documents[i]["messages"]`: a sequence (len, [i], [a:b], for)
    whose items are built when read, one DocumentDict each ({"number", "text", "from", "to",
    "cc", "date", "subject", "offset", "chars"}), from the message spans the context index
    holds anyway. A list of 200,000 dicts with their headers held ~190 MB beside the text."""

    __slots__ = ("_text", "_base", "_spans")

    def __init__(self, text: str, base: int, spans: list) -> None:
        self._text, self._base, self._spans = text, base, spans

    def __len__(self) -> int:
        return len(self._spans)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._message(i) for i in range(*index.indices(len(self._spans)))]
        count = len(self._spans)
        at = index + count if index < 0 else index
        if not 0 <= at < count:
            raise IndexError(f"message index {index} out of range (0..{count - 1})")
        return self._message(at)

    def __iter__(self) -> Iterator[Any]:
        return map(self._message, range(len(self._spans)))

    def __reversed__(self) -> Iterator[Any]:
        return map(self._message, range(len(self._spans) - 1, -1, -1))

    def __bool__(self) -> bool:
        return bool(self._spans)

    def __repr__(self) -> str:
        return (f"<{len(self._spans)} messages: each a dict of number, text, from, to, cc, date, "
                "subject, offset, chars; read them with [i], [a:b] or a for loop>")

    def _message(self, i: int) -> DocumentDict:
        start, end = int(self._spans[i][0]), int(self._spans[i][1])
        offset = self._base + start
        message = DocumentDict(self._text, number=i + 1, offset=offset, chars=end - start)
        head = self._text[offset:min(offset + 2048, self._base + end)]
        for line in head.split("\n")[1:]:            # after "--- message N ---"
            name, sep, value = line.partition(": ")
            key = _MESSAGE_HEADERS.get(name.lower()) if sep else None
            if key is None:
                break
            message[key] = value
        return message
