#!/bin/sh
# Fault injection: quick runs of Qwen3-0.6B under outside load, checking that each run says what it met.
#   scripts/load-runs.sh [ROUNDS]   (default 1; needs build/forge-roofline; about 20 s a run)
# Each round runs `--quick --batch none --context 1024` four times: with nothing else running, under a busy
# loop pinned to core 0, under one pinned to core 1, and under a memory-bandwidth hog (dd writing 256 MiB
# buffers from /dev/zero, unpinned: on a 2-core machine it also takes a core). For each run it counts the
# repetitions samples.csv marks disturbed and checks that
#   1. report.md's findings count the same number ("samples.csv marks N of its M repetitions disturbed");
#   2. the findings open with the "Outside load" line exactly when a headline row (a step or a block at the
#      blocks' context) kept disturbed repetitions (fewer than 3 clean) or had a quarter of them disturbed;
#   3. the blocks the findings rank as lost against their roofs are the quiet run's, or the run flags the
#      ranking (rows left out as disturbed, or the Outside load line).
# Prints one line per run and exits 1 when a check fails. Never run it beside other work you time.
set -eu
rounds=${1:-1}
bin=${FORGE_ROOFLINE_FAST_BIN:-build/forge-roofline}
[ -x "$bin" ] || { echo "load-runs: $bin not built (make all)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fr-load-runs-XXXXXX")
hog=
stop_hog() { [ -z "$hog" ] || { kill "$hog" 2>/dev/null || true; wait "$hog" 2>/dev/null || true; hog=; }; }
trap 'stop_hog; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
export FORGE_ROOFLINE_LOCK="$work/lock" # its own lock: never waits for a real run, nor blocks one
run_args="--model qwen3-0.6b --quick --batch none --context 1024 --no-plots --no-history"

start_hog() {
  case $1 in
    none) ;;
    cpu0 | cpu1) taskset -c "${1#cpu}" sh -c 'while :; do :; done' & hog=$! ;;
    membw) sh -c 'while :; do dd if=/dev/zero of=/dev/null bs=256M count=64 2>/dev/null; done' & hog=$! ;;
  esac
}

# The names ranked "Lost against the roof #k", in order, comma-separated.
ranking() { grep -o 'Lost against the roof #[0-9]: `[a-z_]*`' "$1" | sed 's/.*`\(.*\)`/\1/' | paste -sd, -; }

fail=0
quiet_rank=
r=1
while [ "$r" -le "$rounds" ]; do
  for load in none cpu0 cpu1 membw; do
    out="$work/$r-$load"
    start_hog "$load"
    sleep 1
    "$bin" $run_args --out "$out" >"$out.log" 2>&1 || { stop_hog; echo "load-runs: the $load run failed" >&2; tail -3 "$out.log" >&2; exit 1; }
    stop_hog
    dir=$(find "$out" -mindepth 1 -maxdepth 1 -type d | head -n 1)
    rep="$dir/report.md"
    marked=$(awk -F, '$5 == 1' "$dir/samples.csv" | wc -l)
    headline=$(awk -F, '$5 == 1 && ($1 ~ /^step@/ || $1 ~ /^block:.*@1024$/)' "$dir/samples.csv" | wc -l)
    # headline rows the load touched, by the findings' rule: disturbed repetitions kept (fewer than 3 clean)
    # or a quarter of the row's repetitions disturbed
    touched=$(awk -F, '$1 ~ /^step@/ || $1 ~ /^block:.*@1024$/ { n[$1]++; d[$1] += $5 == 1 }
      END { t = 0; for (k in n) if (d[k] > 0 && (n[k] - d[k] < 3 || 4 * d[k] >= n[k])) t++; print t }' "$dir/samples.csv")
    told=$(sed -n 's/.*samples.csv marks \([0-9][0-9]*\) of its.*/\1/p' "$rep" | head -n 1)
    [ -n "$told" ] || told=0
    top=no
    sed -n '/^## Findings/,/^## /p' "$rep" | grep -m1 '^- ' | grep -q 'Outside load' && top=yes
    rank=$(ranking "$rep")
    [ "$load" = none ] && [ "$r" -eq 1 ] && quiet_rank=$rank
    verdict=ok
    [ "$told" -eq "$marked" ] || verdict="FAILED: findings count $told, samples.csv marks $marked"
    if [ "$touched" -gt 0 ] && [ "$top" = no ]; then verdict="FAILED: $touched headline rows touched, no Outside load line"; fi
    if [ "$touched" -eq 0 ] && [ "$top" = yes ]; then verdict="FAILED: an Outside load line with no headline row touched"; fi
    if [ "$rank" != "$quiet_rank" ] && [ "$top" = no ]; then verdict="FAILED: ranking $rank moved from $quiet_rank unflagged"; fi
    case $verdict in FAILED*) fail=$((fail + 1)) ;; esac
    read_gbs=$(awk -F'|' '/^\| 1024 /{gsub(/ /, "", $13); print $13; exit}' "$rep")
    printf 'load-runs: round %d %-5s disturbed %3d (headline %3d, rows touched %d), findings say %3d, Outside load line %-3s, paired read %s GB/s, ranked %s: %s\n' \
      "$r" "$load" "$marked" "$headline" "$touched" "$told" "$top" "${read_gbs:-n/a}" "${rank:-none}" "$verdict"
  done
  r=$((r + 1))
done
echo "load-runs: $((rounds * 4)) runs, $fail failed"
[ "$fail" -eq 0 ]
