#!/usr/bin/env bash
# Install RLM Studio with its test extra into .venv and run the whole test suite.
#   scripts/test.sh                 the whole suite, in one pytest process
#   scripts/test.sh PATH... [ARGS]  only those tests
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system-packages.sh
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -e '.[test]'
export QT_QPA_PLATFORM=offscreen
# --durations=25: the slowest tests are printed at the end of every run. One process: the
# window's tests leave a QApplication whose garbage is collected on its own thread only
# (app/gui_gc.py), so the threads of later tests (ingestion, the engine) never free it.
exec .venv/bin/python -m pytest -q -p no:cacheprovider --durations=25 "$@"
