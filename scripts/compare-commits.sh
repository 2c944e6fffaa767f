#!/bin/sh
# One command for a performance pull request that decides, in the manner of llama.cpp's compare-commits.sh:
#   scripts/compare-commits.sh [--budget 10m] [--runs N] [--threshold PCT] [--raw] [--fail-on-slower]
#                              [--out DIR] [--no-wait] [--no-lockstep] BASE HEAD [run options]
# builds BASE and HEAD once in temporary git worktrees (make -j2 all), then runs alternated rounds (BASE HEAD,
# HEAD BASE, BASE HEAD, ...: the order flips each round so neither side always runs first) and, from the
# first round on, compares every repetition of the runs so far (forge-roofline compare A1,A2,.. B1,B2,..),
# until every headline row (the decode step at each context, the sampler at V = 151,936) has a verdict
# (faster, slower or no change) or the budget (default 10m, builds included; also 600s or 600) would be
# spent by one more round. --runs N runs exactly N rounds instead. The headline verdicts end the output in one
# short table; the runs stay under DIR/runs/. Run options go to every run (default --model qwen3-0.6b), e.g.
# --quick, --context 1,1024. With --fail-on-slower the exit status is 1 when a headline row is slower, 0
# otherwise, 2 on bad input. The compare itself is made by this checkout's build. The rounds hold the
# machine lock a run takes (docs/trust.md): another run waits for them, and they wait for it (--no-wait:
# exit 3 instead). Where both builds have `--lockstep`, each round is one `forge-roofline lockstep` of the
# two (their repetitions alternated, milliseconds apart; who goes first flips each round) with
# --repetitions 30 unless given; --no-lockstep (or an older build) runs them one after the other.
set -eu

usage() {
  echo "usage: scripts/compare-commits.sh [--budget 10m] [--runs N] [--threshold PCT] [--raw] [--fail-on-slower] [--out DIR] [--no-wait] [--no-lockstep] BASE HEAD [run options]" >&2
  exit 2
}
die() {
  echo "compare-commits: $*" >&2
  exit 2
}

runs=
out=
budget=600
cmp_opts=
fail_on_slower=no
no_wait=no
lockstep=yes
max_rounds=16 # forge-roofline compare pools at most 16 runs a side
while [ $# -gt 0 ]; do
  case $1 in
    --runs) [ $# -ge 2 ] || usage; runs=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    --budget)
      [ $# -ge 2 ] || usage
      case $2 in
        *[!0-9smh]*|''|[smh]*) die "--budget: expected e.g. 10m, 600s or 600, got '$2'" ;;
        *m) budget=$((${2%m} * 60)) ;;
        *h) budget=$((${2%h} * 3600)) ;;
        *s) budget=${2%s} ;;
        *) budget=$2 ;;
      esac
      case $budget in ''|*[!0-9]*) die "--budget: expected e.g. 10m, 600s or 600, got '$2'" ;; esac
      shift 2 ;;
    --threshold) [ $# -ge 2 ] || usage; cmp_opts="$cmp_opts --threshold $2"; shift 2 ;;
    --raw) cmp_opts="$cmp_opts --raw"; shift ;;
    --fail-on-slower) fail_on_slower=yes; shift ;;
    --no-wait) no_wait=yes; shift ;;
    --no-lockstep) lockstep=no; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1' before BASE (try --help)" ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || usage
if [ -n "$runs" ]; then
  case $runs in ''|*[!0-9]*) die "--runs needs a whole number, got '$runs'" ;; esac
  [ "$runs" -ge 2 ] || die "--runs must be at least 2 (alternated runs are what cancels the machine's load)"
  [ "$runs" -le "$max_rounds" ] || die "--runs: at most $max_rounds (compare pools at most $max_rounds runs a side)"
fi
base=$1 head=$2
shift 2
model_given=no
reps_given=no
for a in "$@"; do
  case $a in
    --lockstep|--lockstep=*) die "--lockstep is the script's to give (--no-lockstep turns it off)" ;;
    --repetitions|--repetitions=*) reps_given=yes ;;
    --out|--out=*) die "--out goes before BASE (it names the compare folder; each run's folder is chosen here)" ;;
    --model|--model=*) model_given=yes ;;
  esac
done
[ "$model_given" = yes ] || set -- --model qwen3-0.6b "$@"
start=$(date +%s)

repo=$(git rev-parse --show-toplevel 2>/dev/null) || die "not inside a git checkout"
base_sha=$(git -C "$repo" rev-parse --verify --quiet "$base^{commit}") || die "'$base' is not a commit"
head_sha=$(git -C "$repo" rev-parse --verify --quiet "$head^{commit}") || die "'$head' is not a commit"
b7=$(git -C "$repo" rev-parse --short=7 "$base_sha")
h7=$(git -C "$repo" rev-parse --short=7 "$head_sha")
[ -n "$out" ] || out="$repo/results/compare-$b7-vs-$h7-$(date -u +%Y%m%dT%H%M%SZ)"
[ ! -e "$out" ] || die "'$out' exists already"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fr-compare-commits-XXXXXX")
cleanup() {
  for side in base head; do
    [ ! -d "$tmp/$side" ] || git -C "$repo" worktree remove --force "$tmp/$side" >/dev/null 2>&1 || true
  done
  git -C "$repo" worktree prune >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -n "$runs" ]; then plan="$runs rounds"; else plan="rounds until the headline rows are decided, budget ${budget}s"; fi
echo "compare-commits: BASE $b7, HEAD $h7, $plan, alternated; run options: $*"
build_side() { # build_side SIDE
  echo "compare-commits: building $1 ($(git -C "$tmp/$1" rev-parse --short=7 HEAD)) ..."
  make -C "$tmp/$1" -j2 all >"$tmp/$1-build.log" 2>&1 || {
    tail -20 "$tmp/$1-build.log" >&2
    echo "compare-commits: building $1 failed" >&2
    exit 1
  }
}
git -C "$repo" worktree add --detach --quiet "$tmp/base" "$base_sha"
git -C "$repo" worktree add --detach --quiet "$tmp/head" "$head_sha"
build_side base
# HEAD starts from BASE's objects, newer than every source checked out: touching the files that differ
# rebuilds only what they reach (headers through the dependency files). A change to the Makefile or the
# build's scripts may change every object's flags: then HEAD is built from scratch.
changed=$(git -C "$repo" diff --name-only "$base_sha" "$head_sha")
if ! printf '%s\n' "$changed" | grep -qE '^(Makefile|scripts/bootstrap\.sh)$'; then
  cp -a "$tmp/base/build" "$tmp/head/build"
  printf '%s\n' "$changed" | while IFS= read -r f; do [ ! -e "$tmp/head/$f" ] || touch "$tmp/head/$f"; done
fi
build_side head
# The compare is made by this checkout's build (it knows pooled sides even when BASE and HEAD are older);
# when this checkout is HEAD with no local change, HEAD's build is that build.
compare_bin="$tmp/head/build/forge-roofline"
if [ "$(git -C "$repo" rev-parse HEAD)" != "$head_sha" ] || ! git -C "$repo" diff --quiet HEAD --; then
  echo "compare-commits: building this checkout's forge-roofline for the compare ..."
  make -C "$repo" -j2 all >"$tmp/self-build.log" 2>&1 || {
    tail -20 "$tmp/self-build.log" >&2
    echo "compare-commits: building $repo failed" >&2
    exit 1
  }
  compare_bin="$repo/build/forge-roofline"
fi

# Lockstep needs both builds to take turns; an older one cannot, and then the rounds run one after the other.
if [ "$lockstep" = yes ]; then
  for side in base head; do
    if ! "$tmp/$side/build/forge-roofline" run --help 2>/dev/null | grep -q -- '--lockstep'; then
      echo "compare-commits: $side's build has no --lockstep: its rounds run one after the other (fallback)"
      lockstep=no
    fi
  done
fi
if [ "$lockstep" = yes ]; then
  echo "compare-commits: rounds in lockstep (forge-roofline lockstep: repetitions alternated, first side flipping)"
  [ "$reps_given" = yes ] || set -- "$@" --repetitions 30
fi

# One run at a time on this machine: the rounds hold the lock a run takes (bench/cli/machine_lock.h, the
# same file), and hand it to this checkout's runs in FORGE_ROOFLINE_LOCK_FD, so nothing runs between them.
lock=${FORGE_ROOFLINE_LOCK:-}
if [ -z "$lock" ]; then
  if [ -d /run/lock ] && [ -w /run/lock ]; then lock=/run/lock/forge-roofline.lock
  elif [ -n "${XDG_RUNTIME_DIR:-}" ] && [ -w "$XDG_RUNTIME_DIR" ]; then lock=$XDG_RUNTIME_DIR/forge-roofline.lock
  else mkdir -p "$out"; lock=$out/forge-roofline.lock; fi
fi
exec 9>>"$lock"
if ! flock -n 9; then
  holder=$(head -n 1 "$lock" 2>/dev/null || true)
  if [ "$no_wait" = yes ]; then
    echo "compare-commits: the machine is busy: ${holder:-another run} holds $lock; not waiting (--no-wait)" >&2
    exit 3
  fi
  echo "compare-commits: waiting for the machine: ${holder:-another run} holds $lock (one run at a time)" >&2
  flock 9
fi
printf 'pid %s since %s: scripts/compare-commits.sh %s %s\n' $$ "$(date -u '+%Y-%m-%d %H:%M:%S UTC')" \
  "$base" "$head" >"$lock"
export FORGE_ROOFLINE_LOCK="$lock" FORGE_ROOFLINE_LOCK_FD=9

mkdir -p "$out/runs"
out=$(cd "$out" && pwd) # the runs start in the worktrees: the folder must not be relative
list_base=''
list_head=''

add_run() { # add_run SIDE ROUND: the run folder the round left, onto its side's list
  run=$(cd "$out" && find "runs/$1-$2" -mindepth 1 -maxdepth 1 -type d ! -name '.*' | head -n 1)
  if [ -z "$run" ] || [ ! -f "$out/$run/run.json" ]; then die "round $2 of $1 left no run.json under runs/$1-$2"; fi
  if [ "$1" = base ]; then list_base="$list_base${list_base:+,}$run"; else list_head="$list_head${list_head:+,}$run"; fi
}

run_one() { # run_one SIDE ROUND [run options]
  s=$1 r=$2
  shift 2
  dest="$out/runs/$s-$r"
  echo "compare-commits: round $r, $s ..."
  # each binary runs in its own tree, so it reads its own model/ and scripts/
  if ! (cd "$tmp/$s" && build/forge-roofline "$@" --no-plots --out "$dest") >"$out/runs/$s-$r.log" 2>&1; then
    tail -20 "$out/runs/$s-$r.log" >&2
    echo "compare-commits: round $r of $s failed (log: $out/runs/$s-$r.log)" >&2
    exit 1
  fi
  add_run "$s" "$r"
}

# run_pair ROUND FIRST SECOND [run options]: one round in lockstep, each binary in its own tree (its own model/
# and scripts/) through sh -c, which passes the driver's --lockstep on to it
run_pair() {
  r=$1 first=$2 second=$3
  shift 3
  echo "compare-commits: round $r, $first and $second in lockstep ..."
  # shellcheck disable=SC2016 # "$0" and "$@" are the inner sh's
  if ! "$compare_bin" lockstep \
      sh -c 'cd "$0" && exec build/forge-roofline "$@"' "$tmp/$first" "$@" --no-plots --out "$out/runs/$first-$r" ::: \
      sh -c 'cd "$0" && exec build/forge-roofline "$@"' "$tmp/$second" "$@" --no-plots --out "$out/runs/$second-$r" \
      >"$out/runs/pair-$r.log" 2>&1; then
    tail -20 "$out/runs/pair-$r.log" >&2
    echo "compare-commits: round $r failed (log: $out/runs/pair-$r.log)" >&2
    exit 1
  fi
  add_run base "$r"
  add_run head "$r"
}

# the compare of the runs so far, from the compare folder (compare.md names the runs by short paths);
# sets undecided to the headline rows still inconclusive
compare_now() {
  # shellcheck disable=SC2086 # cmp_opts holds whole words
  if ! (cd "$out" && "$compare_bin" compare "$list_base" "$list_head" --out . $cmp_opts) >"$out/compare.log" 2>&1; then
    cat "$out/compare.log" >&2
    die "compare failed"
  fi
  undecided=$(awk -F, 'NR > 1 && $2 == 1 && $9 == "inconclusive"' "$out/compare_verdicts.csv" | wc -l)
}

round=1
round_s=0
undecided=1
while :; do
  t0=$(date +%s)
  if [ $((round % 2)) -eq 1 ]; then order="base head"; else order="head base"; fi
  if [ "$lockstep" = yes ]; then
    # shellcheck disable=SC2086 # order is two words
    run_pair "$round" $order "$@"
  else
    for side in $order; do
      run_one "$side" "$round" "$@"
    done
  fi
  round_s=$(($(date +%s) - t0))
  compare_now
  echo "compare-commits: after round $round: $undecided headline row(s) undecided ($(($(date +%s) - start)) s so far)"
  if [ -n "$runs" ]; then
    [ "$round" -lt "$runs" ] || break
  else
    [ "$undecided" -gt 0 ] || break
    [ "$round" -lt "$max_rounds" ] || { echo "compare-commits: stopping at $max_rounds rounds (the most compare pools)"; break; }
    elapsed=$(($(date +%s) - start))
    if [ $((elapsed + round_s)) -gt "$budget" ]; then
      echo "compare-commits: budget: ${elapsed} s spent of ${budget} s, a round takes ~${round_s} s: stopping"
      break
    fi
  fi
  round=$((round + 1))
done

cat "$out/compare.md"
echo
echo "compare-commits: $out/compare.md (paste it, with compare.png, into the pull request)"
echo "compare-commits: BASE $b7 vs HEAD $h7, $round round(s), $(($(date +%s) - start)) s in all; headline verdicts (B/A time, 95 % interval):"
awk -F, 'NR == 1 { printf "  %-28s %-26s %s\n", "row", "B/A [95 % CI]", "verdict" }
         NR > 1 && $2 == 1 { v = $9; if (v == "inconclusive" && $10 != "") v = v " (~" $10 " more rounds)";
                             printf "  %-28s %.3f [%.3f, %.3f]     %s\n", $1, $5, $6, $7, v }' "$out/compare_verdicts.csv"
if [ "$fail_on_slower" = yes ] && awk -F, 'NR > 1 && $2 == 1 && $9 == "slower" { f = 1 } END { exit !f }' "$out/compare_verdicts.csv"; then
  echo "compare-commits: a headline row is slower (--fail-on-slower)" >&2
  exit 1
fi
