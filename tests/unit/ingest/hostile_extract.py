"""A test-only extractor for the worker processes: files (and archive members)
named *.hang sleep forever, *.crash segfault their process, *.balloon ask for
8 GiB, *.bug raise KeyError, *.pidhang write the worker's pid and then sleep;
everything else goes to the real extractor. Passed as Ingestion(extractor=...);
the product never uses it."""

from __future__ import annotations

import ctypes
import os
import time

from core.ingest.extract import extract_data


def extract(path, source_path, data, name, job):
    if path.endswith(".hang"):
        time.sleep(3600)
    if path.endswith(".crash"):
        ctypes.string_at(0)          # SIGSEGV: what a crashing C parser does
    if path.endswith(".bug"):
        {}["missing key"]            # a parser bug: an unexpected exception
    if path.endswith(".balloon"):
        bytearray(8 << 30)           # over the worker's address-space limit
    if path.endswith(".pidhang"):
        with open(source_path + ".pid", "w") as handle:
            handle.write(str(os.getpid()))
        time.sleep(3600)
    return extract_data(path, source_path, data, name, job)
