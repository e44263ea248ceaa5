#!/usr/bin/env bash
# Smoke-test a BUILT bundle, not the source tree:
#
#   bash packaging/smoke.sh dist/rlm-studio
#
#  1. `--version` prints the version of app/version.py
#  2. `keys list` works; under dbus-run-session with gnome-keyring, a key
#     stored with `keys set` comes back from `keys list` (SecretService backend)
#  3. a headless `ask` over a small folder against the scripted
#     OpenAI-compatible server on 127.0.0.1 finishes with the expected answer
#     (the frozen REPL worker runs model code, a batched sub-call and a nested
#     RLM with a worker of its own)
#  4. the GUI starts offscreen, paints, and quits on its own with status 0
#  5. SIGINT at 40 points of `ask`'s start (tests/support/sigint_sweep.py): each ends with 130
#     (the launcher, packaging/launcher.c, holds it through the interpreter's start)
#
# The scripted server runs from the dev venv (RLM_SMOKE_PYTHON, default
# .venv/bin/python). Everything runs in a temp dir with RLMSTUDIO_DESKTOP_HOME there.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUNDLE=$(cd "${1:?usage: bash packaging/smoke.sh BUNDLE_DIR}" && pwd)
EXE=$BUNDLE/rlm-studio
PY=${RLM_SMOKE_PYTHON:-$REPO/.venv/bin/python}
QUIT_AFTER_MS=1500
[ -x "$EXE" ] || { echo "smoke: no executable at $EXE" >&2; exit 1; }
[ -x "$PY" ] || { echo "smoke: no dev python at $PY (set RLM_SMOKE_PYTHON)" >&2; exit 1; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/rlm-smoke.XXXXXX")
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT
export RLMSTUDIO_DESKTOP_HOME=$TMP/home QT_QPA_PLATFORM=offscreen
unset PYTHONPATH PYTHONHOME VIRTUAL_ENV   # the bundle must need none of them
cd "$TMP"                                  # nothing from the source tree is in reach

now_ms() { date +%s%3N; }
fail() {
  echo "smoke: FAILED: $*" >&2
  for f in "$TMP"/*.err "$RLMSTUDIO_DESKTOP_HOME"/logs/*.log; do
    [ -s "$f" ] && { echo "--- $f (last 30 lines)" >&2; tail -n 30 "$f" >&2; }
  done
  exit 1
}
TIMINGS=()
record() { TIMINGS+=("$(printf '%-34s %6s ms' "$1" "$2")"); }

# 1. --version ------------------------------------------------------------------
want="rlm-studio $(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$REPO/app/version.py")"
t0=$(now_ms); got=$("$EXE" --version 2>version.err) || fail "--version exited $?"; t1=$(now_ms)
[ "$got" = "$want" ] || fail "--version printed '$got', expected '$want'"
got=$("$EXE" --version 2>>version.err); t2=$(now_ms)
record "--version (first, cold)" $((t1 - t0)); record "--version (second)" $((t2 - t1))
echo "smoke: ok --version: $got"

# 2. keyring ----------------------------------------------------------------------
t0=$(now_ms)
"$EXE" keys list >keys.out 2>keys.err || fail "keys list exited $?"
record "keys list" $(( $(now_ms) - t0 ))
grep -q Traceback keys.err && fail "keys list printed a traceback"
echo "smoke: ok keys list"
if command -v dbus-run-session >/dev/null && command -v gnome-keyring-daemon >/dev/null; then
  mkdir -p "$TMP/kr-home"
  t0=$(now_ms)
  HOME=$TMP/kr-home timeout 60 dbus-run-session -- bash -c '
    set -e
    printf "smoke" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
    printf "sk-smoke-test-4321" | "$1" keys set openai
    "$1" keys list --json' _ "$EXE" >keyring.out 2>keyring.err || fail "keys set/list under SecretService failed"
  record "keys set+list (SecretService)" $(( $(now_ms) - t0 ))
  "$PY" - keyring.out <<'EOF' || fail "the key stored in the SecretService keychain did not come back"
import json, sys
rows = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
row = next(r for r in rows if r["provider"] == "openai")
assert row["masked"].endswith("4321") and not row["source"].startswith("env"), row
EOF
  echo "smoke: ok keyring round trip through SecretService"
else
  echo "smoke: skipped the SecretService round trip (no dbus-run-session or gnome-keyring-daemon)"
fi

# 3. headless ask through the frozen REPL worker --------------------------------
"$PY" "$REPO/tests/packaging/serve_scripted.py" --max-seconds 600 >server.out 2>server.err &
SERVER_PID=$!
URL=""
for _ in $(seq 1 200); do
  URL=$(head -n 1 server.out 2>/dev/null || true)
  [ -n "$URL" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || fail "the scripted server did not start"
  sleep 0.1
done
[ -n "$URL" ] || fail "the scripted server printed no URL"
mkdir -p docs/sub
printf 'apples: 3\n' >docs/one.txt
printf '# pears\npears: 4\n' >docs/sub/two.md
t0=$(now_ms)
OPENAI_API_KEY=sk-smoke PYTHON_KEYRING_BACKEND=keyring.backends.null.Keyring \
  timeout 180 "$EXE" ask "What fruit is counted here, and how many in all?" "$TMP/docs" \
  --root openai/root --sub openai/sub --api-base "$URL" --max-depth 2 --json --quiet >ask.out 2>ask.err \
  || fail "ask exited $?"
record "ask (batched + nested RLM)" $(( $(now_ms) - t0 ))
"$PY" - ask.out <<'EOF' || fail "ask did not finish with the expected answer: $(cat ask.out)"
import json, sys
data = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
assert data["status"] == "finished", data
assert data["answer"] == "ONE.TXT, SUB/TWO.MD | total=7 | nested=12345", data["answer"]
assert data["sub_calls"] >= 3, data
EOF
echo "smoke: ok ask: $(cat ask.out | head -c 200)"
kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""

# 4. GUI offscreen, quits on its own -------------------------------------------
t0=$(now_ms)
timeout 90 "$EXE" --smoke-quit-after "$QUIT_AFTER_MS" >gui.out 2>gui.err || fail "the GUI exited $?"
total=$(( $(now_ms) - t0 ))
grep -q Traceback gui.err && fail "the GUI printed a traceback"
grep -qs "uncaught exception" "$RLMSTUDIO_DESKTOP_HOME"/logs/*.log && fail "the GUI logged an uncaught exception"
paint=$(sed -n 's/.*first paint after \([0-9]*\) ms.*/\1/p' gui.out | head -n 1)
record "GUI start to quit (quit at ${QUIT_AFTER_MS})" "$total"
if [ -n "$paint" ]; then record "GUI launch to first paint" "$paint"
else record "GUI launch to quit minus quit delay" $((total - QUIT_AFTER_MS)); fi
echo "smoke: ok GUI offscreen"

# 5. Ctrl+C at 40 points of ask's start: 130 each time, nothing left -----------------
t0=$(now_ms)
( cd "$REPO" && "$PY" -m tests.support.sigint_sweep "$EXE" ) >sigint.out 2>sigint.err \
  || { cat sigint.err >&2; fail "a Ctrl+C in ask's start did not end in 130: $(tail -n 1 sigint.out)"; }
record "Ctrl+C at 40 points of ask" $(( $(now_ms) - t0 ))
echo "smoke: ok Ctrl+C: $(tail -n 1 sigint.out)"

echo "smoke: timings"
printf '  %s\n' "${TIMINGS[@]}"
echo "smoke: bundle $(du -sh "$BUNDLE" | cut -f1) at $BUNDLE"
echo "smoke: all passed"
