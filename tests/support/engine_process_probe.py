"""A real engine-side process for tests/security/test_engine_process.py.

    python -m tests.support.engine_process_probe [--no-prepare]

Prepares itself as app/main.py does (unless --no-prepare, the control), starts an ingest
worker (which brings up multiprocessing's resource tracker and forkserver), lets the worker
report on itself, starts one more process the way multiprocessing starts its helpers, and
prints one JSON line: pids and what each process said. Then it waits for a line on stdin,
so the test can look at the live processes' /proc entries.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

PR_GET_DUMPABLE = 3


def own_view() -> dict:
    try:
        environ = open("/proc/self/environ", "rb").read().decode("utf-8", "replace")
    except OSError as exc:
        environ = f"unreadable: {exc}"
    return {"pid": os.getpid(), "dumpable": ctypes.CDLL(None).prctl(PR_GET_DUMPABLE, 0, 0, 0, 0),
            "environ": environ, "os_environ": sorted(os.environ)}


def probe(path, source_path, data, name, job):
    """An extractor that reports on the ingest worker it runs in (the signature of
    core.ingest.extract.extract_data)."""
    from core.ingest.model import Document
    text = json.dumps(own_view())
    return Document(path, source_path, "txt", text, len(text), 0, "0" * 64)


def main(argv: list[str]) -> int:
    prepared = None
    if "--no-prepare" not in argv:
        from core.engine_process import prepare_engine_process
        prepared = prepare_engine_process()
    from multiprocessing import forkserver, resource_tracker, util
    from core.ingest.model import FileEntry
    from core.ingest.workers import Worker
    worker = Worker(extractor=probe)
    kind, doc = worker.run(FileEntry("probe.txt", "/dev/null", 0), 1, 60)[:2]
    assert kind == "doc", (kind, doc)
    code = "import ctypes, sys; sys.exit(10 + ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))"
    from multiprocessing import spawn
    exe = spawn.get_executable()             # what multiprocessing itself passes
    pid = util.spawnv_passfds(exe, [exe, "-c", code], [])
    spawned = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    from keyring.backends import null
    from core.secrets import KeyStore
    resolved = KeyStore(null.Keyring()).resolve("groq")     # still found, from memory
    print(json.dumps({
        "resolved_groq": list(resolved), "engine": own_view(), "prepared": None if prepared is None else {
            "dumpable": prepared.dumpable, "keys_moved": list(prepared.keys_moved),
            "environ_wiped": prepared.environ_wiped, "helpers_non_dumpable": prepared.helpers_non_dumpable},
        "worker": json.loads(doc.text), "resource_tracker": resource_tracker._resource_tracker._pid,
        "forkserver": forkserver._forkserver._forkserver_pid, "spawned_exit": spawned}), flush=True)
    sys.stdin.readline()
    worker.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
