"""Typed errors of the run store (each message says what to do)."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of everything the run store raises on purpose."""


class RunNotFound(StoreError, LookupError):
    pass


class AmbiguousRunId(StoreError, LookupError):
    pass


class RunBusyError(StoreError):
    """The run is still being written by a live process."""


class MissingTextsError(StoreError):
    """The stored run lacks the text of some documents (imported without texts)."""


class StoreWriteError(StoreError):
    """The writer thread could not persist some events (the message says why)."""


class ImportError_(StoreError):  # noqa: N801 - trailing underscore: do not shadow the builtin
    """A file offered to `import_json` is malformed, or from a newer version."""
