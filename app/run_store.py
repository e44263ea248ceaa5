"""The window's run store, opened on first use and closed at shutdown (a StorePort,
app/ports.py): History, Sources' extract cache, trust and the run status read it."""

from __future__ import annotations

from typing import Any


class StoreHolder:
    def __init__(self) -> None:
        self._store: Any = None

    def store(self) -> Any:
        if self._store is None:
            # lazy: free in the window (where it runs)
            from core.store import RunStore
            self._store = RunStore.open()
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
