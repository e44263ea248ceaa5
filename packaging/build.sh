#!/usr/bin/env bash
# Build the one-folder desktop bundle dist/rlm-studio/ (executable dist/rlm-studio/rlm-studio).
#
# Builds from a dedicated virtual environment (~/.cache/rlm-studio/pkg-venv, or
# RLM_PKG_VENV) into which the project is installed as a normal, non-editable
# package from a clean copy of the sources, so nothing from a developer's venv
# or working tree leaks in. The venv is reused while its inputs (pyproject.toml,
# the pins below, the Python version) are unchanged; the project itself is
# reinstalled on every build.
#
#   bash packaging/build.sh            # quiet; prints size and build time
#   RLM_PKG_VERBOSE=1 bash packaging/build.sh
#   RLM_PKG_PYTHON=/path/to/python3.11 bash packaging/build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${RLM_PKG_PYTHON:-python3}
# The venv lives outside the checkout (CI builds in a fresh clone and reuses it).
VENV=${RLM_PKG_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/rlm-studio/pkg-venv}
SRC=$ROOT/build/pkg-src
WORK=$ROOT/build/pyinstaller
DIST=$ROOT/dist
LOG=$ROOT/build/pkg-build.log
PYINSTALLER_PIN="pyinstaller==6.22.3"
SETUPTOOLS_PIN="setuptools==84.0.0"
START=$(date +%s)

mkdir -p "$ROOT/build"
: >"$LOG"
fail() { echo "build.sh: $*" >&2; echo "build.sh: last lines of $LOG:" >&2; tail -n 40 "$LOG" >&2; exit 1; }
quiet() { if [ -n "${RLM_PKG_VERBOSE:-}" ]; then "$@" 2>&1 | tee -a "$LOG"; else "$@" >>"$LOG" 2>&1; fi; }

"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "build.sh: needs Python >= 3.11 ($PYTHON is $("$PYTHON" --version 2>&1))" >&2; exit 1; }

# 1. A clean copy of what gets installed (no __pycache__, no egg-info, no setuptools build/ leftovers).
rm -rf "$SRC"
mkdir -p "$SRC"
for item in pyproject.toml README.md LICENSE app core ui resources; do
  if [ -e "$item" ]; then cp -r "$item" "$SRC/"; fi
done
find "$SRC" \( -name __pycache__ -o -name '*.egg-info' \) -prune -exec rm -rf {} +
[ -f "$SRC/README.md" ] || echo "# RLM Studio" >"$SRC/README.md"

# 2. The build venv, rebuilt only when its inputs change.
HASH=$( { cat pyproject.toml; echo "$PYINSTALLER_PIN $SETUPTOOLS_PIN"; "$PYTHON" -VV; } | sha256sum | cut -c1-16)
if [ "$(cat "$VENV/.inputs-hash" 2>/dev/null)" != "$HASH" ]; then
  echo "build.sh: creating build venv $VENV"
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  quiet "$PYTHON" -m venv "$VENV" || fail "python -m venv failed"
  quiet "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$SETUPTOOLS_PIN" wheel "$PYINSTALLER_PIN" \
    || fail "installing PyInstaller failed"
  quiet "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$SRC" \
    || fail "installing the project and its pinned dependencies failed"
  echo "$HASH" >"$VENV/.inputs-hash"
else
  quiet "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation \
    --force-reinstall "$SRC" || fail "reinstalling the project failed"
fi

# 3. PyInstaller, run from build/ so the working tree is never on its search path.
rm -rf "$DIST/rlm-studio" "$WORK"
mkdir -p "$WORK"
( cd "$WORK" && quiet "$VENV/bin/python" -m PyInstaller --noconfirm --log-level WARN \
    --distpath "$DIST" --workpath "$WORK" "$ROOT/packaging/rlm-studio.spec" ) \
  || fail "PyInstaller failed"
# Linux: `rlm-studio` is a launcher that blocks SIGINT and runs rlm-studio-bin, so a Ctrl+C in the
# interpreter's own start waits for the app's handler (packaging/launcher.c; exit 130, never a traceback).
if [ "$(uname -s)" = Linux ]; then
  [ -x "$DIST/rlm-studio/rlm-studio-bin" ] || fail "no executable at $DIST/rlm-studio/rlm-studio-bin"
  command -v "${CC:-cc}" >/dev/null || fail "no C compiler (${CC:-cc}) for packaging/launcher.c: install gcc"
  quiet "${CC:-cc}" -O2 -Wall -Wextra -Werror -o "$DIST/rlm-studio/rlm-studio" packaging/launcher.c \
    || fail "compiling packaging/launcher.c failed"
fi
[ -x "$DIST/rlm-studio/rlm-studio" ] || fail "no executable at $DIST/rlm-studio/rlm-studio"
# The desktop entry and its installer travel with the bundle (Linux).
cp packaging/rlm-studio.desktop packaging/install-desktop.sh "$DIST/rlm-studio/"

SECONDS_TAKEN=$(( $(date +%s) - START ))
SIZE=$(du -sh "$DIST/rlm-studio" | cut -f1)
echo "build.sh: built $DIST/rlm-studio ($SIZE) in ${SECONDS_TAKEN}s; log: $LOG"
