"""A test-only extractor for the worker processes: files named *.hang sleep
forever, *.crash segfault their process, *.balloon ask for 8 GiB, *.bug raise KeyError, *.pidhang write the worker's pid and
then sleep; everything else goes to the real extractor. Passed as
Ingestion(extractor=...); the product never uses it."""

from __future__ import annotations

import ctypes
import os
import time

from core.ingest.extract import extract_file


def extract(entry, max_bytes):
    if entry.path.endswith(".hang"):
        time.sleep(3600)
    if entry.path.endswith(".crash"):
        ctypes.string_at(0)          # SIGSEGV: what a crashing C parser does
    if entry.path.endswith(".bug"):
        {}["missing key"]            # a parser bug: an unexpected exception
    if entry.path.endswith(".balloon"):
        bytearray(8 << 30)           # over the worker's address-space limit
    if entry.path.endswith(".pidhang"):
        with open(entry.source_path + ".pid", "w") as handle:
            handle.write(str(os.getpid()))
        time.sleep(3600)
    return extract_file(entry, max_bytes)
