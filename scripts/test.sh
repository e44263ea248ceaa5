#!/usr/bin/env bash
# Install RLM Studio with its test extra into .venv and run the whole test suite.
#   scripts/test.sh                 the whole suite: the window's tests in one process, the rest in another
#   scripts/test.sh PATH... [ARGS]  only those tests, in one process
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system-packages.sh
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -e '.[test]'
export QT_QPA_PLATFORM=offscreen
# --durations=25: the slowest tests are printed at the end of every run
run() { .venv/bin/python -m pytest -q -p no:cacheprovider --durations=25 "$@"; }
if [ $# -gt 0 ]; then
  run "$@"
  exit $?
fi
# The window's tests leave Qt objects that the QApplication keeps processing events for until
# the process ends; the engine, store and sandbox tests run apart from them, in a process of
# their own (one full run at load 1 crashed in Qt's event processing during a unit test).
status=0
run tests/gui || status=$?
run tests --ignore=tests/gui || status=$?
exit $status
