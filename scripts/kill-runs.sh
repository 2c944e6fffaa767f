#!/bin/sh
# Kills a tiny full run at random moments and checks that nothing it leaves behind passes for a result:
#   scripts/kill-runs.sh [N]   (default 20; needs build/forge-roofline)
# Each try starts `forge-roofline --model tests/fixtures/tiny-qwen3 --quick` into one folder, waits a random
# 0.2 to 8 s and sends SIGINT, SIGTERM or SIGKILL in turn. A run killed by INT or TERM removes its folder; a
# run killed by KILL cannot, and leaves its temporary folder marked INCOMPLETE. Afterwards every entry left
# in the folder is given to `forge-roofline compare` against a complete run: each must be refused (exit 2,
# "not a complete run"), and the complete run must be accepted against itself. Exit 0 when all hold.
set -eu
n=${1:-20}
bin=${FORGE_ROOFLINE_FAST_BIN:-build/forge-roofline}
[ -x "$bin" ] || { echo "kill-runs: $bin not built (make all)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fr-kill-runs-XXXXXX")
trap 'rm -rf "$work"' EXIT
export FORGE_ROOFLINE_LOCK="$work/lock" # its own lock: never waits for a real run, nor blocks one
run_args="--model tests/fixtures/tiny-qwen3 --quick --context 1 --batch none --no-plots"

echo "kill-runs: a complete run first"
"$bin" $run_args --out "$work/complete" >/dev/null 2>&1 || { echo "kill-runs: the complete run failed" >&2; exit 1; }
ref=$(find "$work/complete" -mindepth 1 -maxdepth 1 -type d | head -n 1)
"$bin" compare "$ref" "$ref" --out "$work/cmp-ref" >/dev/null 2>&1 || { echo "kill-runs: compare refuses a complete run" >&2; exit 1; }

i=1
finished=0
while [ "$i" -le "$n" ]; do
  case $((i % 3)) in 0) sig=INT ;; 1) sig=TERM ;; *) sig=KILL ;; esac
  delay=$(awk -v s="$i$$" 'BEGIN { srand(s); printf "%.2f", 0.2 + rand() * 7.8 }')
  # a background job of a script starts with SIGINT ignored (and a run keeps a signal ignored at start):
  # restore the default so that SIGINT tries are real
  env --default-signal=INT "$bin" $run_args --out "$work/killed" >/dev/null 2>&1 &
  pid=$!
  sleep "$delay"
  if kill -s "$sig" "$pid" 2>/dev/null; then
    echo "kill-runs: try $i: SIG$sig after $delay s"
  else
    echo "kill-runs: try $i: the run finished before $delay s"
    finished=$((finished + 1))
  fi
  wait "$pid" 2>/dev/null || true
  i=$((i + 1))
done

bad=0
left=0
complete=0
for entry in "$work/killed"/* "$work/killed"/.[!.]*; do
  [ -e "$entry" ] || continue
  left=$((left + 1))
  if [ -f "$entry/run.json" ] && [ ! -e "$entry/INCOMPLETE" ] && case $(basename "$entry") in .*.tmp) false ;; *) true ;; esac; then
    complete=$((complete + 1))
    continue # a run that finished before its signal: complete, and rightly accepted
  fi
  if msg=$("$bin" compare "$entry" "$ref" --out "$work/cmp" 2>&1 >/dev/null); then
    echo "kill-runs: ACCEPTED an unfinished run: $entry" >&2
    bad=$((bad + 1))
  elif ! echo "$msg" | grep -q "not a complete run\|No such file"; then
    echo "kill-runs: refused for another reason: $entry: $msg" >&2
    bad=$((bad + 1))
  fi
done
echo "kill-runs: $n tries ($finished finished first), $left entries left ($complete complete runs), $bad unfinished accepted as complete"
[ "$bad" -eq 0 ]
