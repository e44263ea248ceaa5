"""The run store: every run saved to SQLite as it happens (see docs/storage.md).

    from core.store import RunStore
    store = RunStore.open()
    writer = store.writer()          # sink for engine events
"""

from core.store.errors import (AmbiguousRunId, ImportError_, MissingTextsError, RunBusyError, RunNotFound,
                               StoreError, StoreWriteError)
from core.store.queries import StoredDocument, StoredSkip
from core.store.runstore import RunStore, opened_cache
from core.store.writer import EventWriter

__all__ = ["RunStore", "EventWriter", "StoredDocument", "StoredSkip", "StoreError", "RunNotFound",
           "AmbiguousRunId", "RunBusyError", "MissingTextsError", "StoreWriteError", "ImportError_", "opened_cache"]
