#!/usr/bin/env bash
# Install RLM Studio with its test extra into .venv and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system-packages.sh
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -e '.[test]'
export QT_QPA_PLATFORM=offscreen
# --durations=25: the slowest tests are printed at the end of every run (the suite keeps to 10 minutes)
exec .venv/bin/python -m pytest -q -p no:cacheprovider --durations=25 "$@"
