#!/usr/bin/env bash
# Install RLM Studio into .venv (first time only) and start the desktop app.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system-packages.sh
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -c "import app, core, ui" 2>/dev/null && .venv/bin/pip show -q rlm-studio >/dev/null 2>&1 \
  || .venv/bin/pip install -q -e .
exec .venv/bin/rlm-studio "$@"
