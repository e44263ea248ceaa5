#!/usr/bin/env bash
# Install RLM Studio with its test extra into .venv and run the whole test suite.
#   scripts/test.sh                 the whole suite: three groups at once (below)
#   scripts/test.sh PATH... [ARGS]  only those tests, in one process
# RLM_TEST_WORKERS=N: pytest-xdist workers of the engine's group (default 2; 0: one process).
set -euo pipefail
cd "$(dirname "$0")/.."
load() { cut -d' ' -f1-3 /proc/loadavg; }
started=$SECONDS
bash scripts/system-packages.sh
[ -x .venv/bin/python ] || python3 -m venv .venv
# ray: the review grid's test on a real local Ray cluster (tests/integration/test_grid_ray.py) runs,
# it is not skipped; the bundle never carries Ray (packaging/rlm-studio.spec).
.venv/bin/pip install -q --disable-pip-version-check -e '.[test,ray]'
echo "install: $((SECONDS - started)) s (load $(load))"
export QT_QPA_PLATFORM=offscreen
# --durations=25: the slowest tests are printed at the end of every run.
run() { .venv/bin/python -m pytest -q -p no:cacheprovider --durations=25 "$@"; }
if [ $# -gt 0 ]; then
  run "$@"
  exit $?
fi
# Three groups at once, each in processes of its own: most tests wait on subprocesses (REPL
# workers, the CLI), sockets and the scripted server rather than on the CPU, so the groups
# overlap on the machine's cores. The window's tests stay apart from the rest: a process that
# made a QApplication collects garbage on the GUI thread only (app/gui_gc.py), and the rest
# never runs in it (docs/dev/test-suite.md). The engine's group, the longest, is split further
# over pytest-xdist workers, whole files per worker (module fixtures run once).
# Each group's output is printed whole when it ends; the exit status is non-zero if any failed.
workers=${RLM_TEST_WORKERS:-2}
engine_args=(tests/integration tests/packaging tests/security)
# --no-loadscope-reorder: files in the order tests/conftest.py gives (the longest first).
[ "$workers" -gt 0 ] && engine_args=(-n "$workers" --dist loadfile --no-loadscope-reorder "${engine_args[@]}")
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
declare -A group_of began
names=(engine window unit)
declare -A args_of=([engine]="${engine_args[*]}" [window]="tests/gui" [unit]="tests/unit")
suite_started=$SECONDS
echo "suite: three groups at once (load $(load))"
for name in "${names[@]}"; do
  # shellcheck disable=SC2086  (the group's arguments are plain words)
  run --basetemp="$logs/tmp-$name" ${args_of[$name]} >"$logs/$name.log" 2>&1 &
  group_of[$!]=$name
  began[$name]=$SECONDS
done
status=0
summary=()
for _ in "${names[@]}"; do
  rc=0
  wait -n -p pid || rc=$?
  name=${group_of[$pid]}
  took=$((SECONDS - began[$name]))
  echo
  echo "======== $name: ${args_of[$name]} (exit $rc, $((took / 60)) min $((took % 60)) s, load $(load)) ========"
  cat "$logs/$name.log"
  summary+=("$name exit $rc in $((took / 60)) min $((took % 60)) s")
  [ "$rc" -eq 0 ] || status=$rc
done
echo
took=$((SECONDS - suite_started))
echo "suite: $(printf '%s; ' "${summary[@]}")all $((took / 60)) min $((took % 60)) s (load $(load))"
exit $status
