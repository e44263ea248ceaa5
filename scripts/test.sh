#!/usr/bin/env bash
# Install RLM Studio with its test extra into .venv and run the whole test suite.
#   scripts/test.sh                 the whole suite, in three pytest processes (below)
#   scripts/test.sh PATH... [ARGS]  only those tests, in one process
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system-packages.sh
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -e '.[test]'
export QT_QPA_PLATFORM=offscreen
# --durations=25: the slowest tests are printed at the end of every run.
run() { .venv/bin/python -m pytest -q -p no:cacheprovider --durations=25 "$@"; }
if [ $# -gt 0 ]; then
  run "$@"
  exit $?
fi
# Three processes: the window's tests, the engine's integration and security tests, the unit
# tests. A single process crashed in Qt's event processing when a collection on another thread
# freed widgets; app/gui_gc.py now collects on the GUI thread only (docs/dev/test-suite.md), and
# the groups stay apart until one process has passed many runs.
status=0
run tests/gui || status=$?
run tests/integration tests/packaging tests/security || status=$?
run tests/unit || status=$?
exit $status
