#!/bin/sh
# Measures the compare's own error rates on the machine at hand (docs/statistics.md):
#   scripts/validate-compare.sh [--compares N] [--rounds R] [--block NAME] [--block-pct P] [--step-pct Q]
#                               [--budget 40m] [--lockstep] [--out FILE] [run options]
# builds this checkout's HEAD four ways in temporary worktrees: plain; README-only (a commit that changes
# nothing but README.md); NAME slowed by P % (-DFR_SLOW_BLOCK=NAME -DFR_SLOW_PCT=P: a projection runs its
# matvec again over P % of another layer's rows: real reads and FMAs, model/decode.c); and NAME slowed
# by Q %, chosen so the whole step is about 3 % slower. Then rounds: each round runs every build once (plus a
# second plain run), in an order that rotates each round; every R rounds make one compare of each kind:
#   A/A         plain vs plain           false alarm: any headline row faster or slower
#   slow block  plain vs block P %       detected: the block's row slower
#   slow step   plain vs block Q %       detected: a decode step slower
#   README      plain vs README-only     wrong: any headline row faster or slower
# until N compares of each kind (default 20) or the budget is spent. The rates, the observed ratios and the
# time taken go to FILE (default results/validate-compare-<UTC stamp>.txt). Run options go to every run
# (default --model qwen3-0.6b --quick --batch none). --lockstep: each compare's two builds run as one
# `forge-roofline lockstep` a round (repetitions alternated; who goes first flips each round), with
# --repetitions 30 unless given, as compare-commits.sh runs them. Exit 0 when it ran (the rates are the result), 1 when a
# build or run failed, 2 on bad input.
set -eu

die() {
  echo "validate-compare: $*" >&2
  exit 2
}
num() { case $2 in ''|*[!0-9]*) die "$1 needs a whole number, got '$2'" ;; esac; }

compares=20 rounds=4 block=gate_up_proj block_pct=5 step_pct=11 budget=2400 out='' lockstep=no
while [ $# -gt 0 ]; do
  case $1 in
    --compares) [ $# -ge 2 ] || die "--compares needs a value"; num "$1" "$2"; compares=$2; shift 2 ;;
    --rounds) [ $# -ge 2 ] || die "--rounds needs a value"; num "$1" "$2"; rounds=$2; shift 2 ;;
    --block) [ $# -ge 2 ] || die "--block needs a name"; block=$2; shift 2 ;;
    --block-pct) [ $# -ge 2 ] || die "--block-pct needs a value"; num "$1" "$2"; block_pct=$2; shift 2 ;;
    --step-pct) [ $# -ge 2 ] || die "--step-pct needs a value"; num "$1" "$2"; step_pct=$2; shift 2 ;;
    --budget)
      [ $# -ge 2 ] || die "--budget needs a value"
      case $2 in
        *m) num "$1" "${2%m}"; budget=$((${2%m} * 60)) ;;
        *s) num "$1" "${2%s}"; budget=${2%s} ;;
        *) num "$1" "$2"; budget=$2 ;;
      esac
      shift 2 ;;
    --out) [ $# -ge 2 ] || die "--out needs a file"; out=$2; shift 2 ;;
    --lockstep) lockstep=yes; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) break ;;
    *) die "unexpected argument '$1' (try --help)" ;;
  esac
done
case $block in attention|qkv_proj|o_proj|gate_up_proj|down_proj) ;;
  *) die "--block: one of attention, qkv_proj, o_proj, gate_up_proj, down_proj (got '$block')" ;; esac
[ "$rounds" -ge 2 ] || die "--rounds must be at least 2"
[ "$compares" -ge 1 ] || die "--compares must be at least 1"
[ $# -gt 0 ] || set -- --model qwen3-0.6b --quick --batch none
if [ "$lockstep" = yes ]; then
  case " $* " in *" --repetitions "*) ;; *) set -- "$@" --repetitions 30 ;; esac
fi

repo=$(git rev-parse --show-toplevel 2>/dev/null) || die "not inside a git checkout"
sha=$(git -C "$repo" rev-parse HEAD)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
[ -n "$out" ] || out="$repo/results/validate-compare-$stamp.txt"
mkdir -p "$(dirname "$out")"
work="$repo/results/validate-compare-$stamp"
mkdir -p "$work/runs"
start=$(date +%s)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fr-validate-XXXXXX")
builds="plain readme slowblock slowstep"
cleanup() {
  for b in $builds; do
    [ ! -d "$tmp/$b" ] || git -C "$repo" worktree remove --force "$tmp/$b" >/dev/null 2>&1 || true
  done
  git -C "$repo" worktree prune >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# every worktree first, then one build copied to the others (objects newer than every source, so only what
# differs is rebuilt: decode.c with the slowdown, cmd_run.c with the README commit's hash)
for b in $builds; do git -C "$repo" worktree add --detach --quiet "$tmp/$b" "$sha"; done
(cd "$tmp/readme" && printf '\nREADME-only change for validate-compare.\n' >>README.md &&
  git -c user.name=validate -c user.email=validate@localhost commit --quiet -am "README-only change") ||
  die "cannot commit the README-only change"
echo "validate-compare: building $sha ..."
make -C "$tmp/plain" -j2 all >"$work/build-plain.log" 2>&1 || { tail -20 "$work/build-plain.log" >&2; exit 1; }
sleep 1
for b in readme slowblock slowstep; do cp -a "$tmp/plain/build" "$tmp/$b/build"; done
touch "$tmp/slowblock/model/decode.c" "$tmp/slowstep/model/decode.c" "$tmp/readme/bench/cli/cmd_run.c"
make -C "$tmp/readme" -j2 all >"$work/build-readme.log" 2>&1 || { tail -20 "$work/build-readme.log" >&2; exit 1; }
make -C "$tmp/slowblock" -j2 all CFLAGS="-O3 -g -DFR_SLOW_BLOCK=$block -DFR_SLOW_PCT=$block_pct" \
  >"$work/build-slowblock.log" 2>&1 || { tail -20 "$work/build-slowblock.log" >&2; exit 1; }
make -C "$tmp/slowstep" -j2 all CFLAGS="-O3 -g -DFR_SLOW_BLOCK=$block -DFR_SLOW_PCT=$step_pct" \
  >"$work/build-slowstep.log" 2>&1 || { tail -20 "$work/build-slowstep.log" >&2; exit 1; }
build_s=$(($(date +%s) - start))
echo "validate-compare: builds took ${build_s} s"

bin="$tmp/plain/build/forge-roofline"
# the runs of one compare, per build: comma-separated relative paths
run_once() { # run_once BUILD LABEL ROUND [run options]
  b=$1 label=$2 r=$3
  shift 3
  dest="$work/runs/$label-$r"
  if ! (cd "$tmp/$b" && build/forge-roofline "$@" --no-plots --out "$dest") >"$dest.log" 2>&1; then
    tail -20 "$dest.log" >&2
    echo "validate-compare: run $label-$r failed" >&2
    exit 1
  fi
}
run_dir() { (cd "$work" && find "runs/$1-$2" -mindepth 1 -maxdepth 1 -type d ! -name '.*' | head -n 1); }
list() { # list LABEL FIRST LAST
  l='' i=$2
  while [ "$i" -le "$3" ]; do l="$l${l:+,}$(run_dir "$1" "$i")"; i=$((i + 1)); done
  printf '%s' "$l"
}

# pair_once KIND ROUND BUILD_A BUILD_B [run options]: one lockstep round of a compare's two builds, into
# runs/KIND-a-ROUND and runs/KIND-b-ROUND; A goes first in odd rounds
pair_once() {
  kind=$1 r=$2 ba=$3 bb=$4
  shift 4
  sa="$tmp/$ba" sb="$tmp/$bb" la="$kind-a" lb="$kind-b"
  if [ $((r % 2)) -eq 0 ]; then sa="$tmp/$bb" sb="$tmp/$ba" la="$kind-b" lb="$kind-a"; fi
  # shellcheck disable=SC2016 # "$0" and "$@" are the inner sh's
  if ! "$bin" lockstep sh -c 'cd "$0" && exec build/forge-roofline "$@"' "$sa" "$@" --no-plots --out "$work/runs/$la-$r" ::: \
      sh -c 'cd "$0" && exec build/forge-roofline "$@"' "$sb" "$@" --no-plots --out "$work/runs/$lb-$r" \
      >"$work/runs/$kind-$r.log" 2>&1; then
    tail -20 "$work/runs/$kind-$r.log" >&2
    echo "validate-compare: lockstep round $kind-$r failed" >&2
    exit 1
  fi
}

n=0 aa=0 slow_hit=0 step_hit=0 readme_bad=0
: >"$work/compares.csv"
round=0
labels="plain plain2 readme slowblock slowstep"
round_s=0
while [ "$n" -lt "$compares" ]; do
  t0=$(date +%s)
  k=0
  while [ "$k" -lt "$rounds" ]; do
    round=$((round + 1))
    # rotate the order each round so no build always runs first
    # shellcheck disable=SC2086 # labels is a list of words
    order=$(printf '%s\n' $labels | awk -v r="$round" '{ a[NR] = $0 } END { for (i = 0; i < NR; i++) print a[(i + r) % NR + 1] }')
    if [ "$lockstep" = yes ]; then
      pair_once aa "$round" plain plain "$@"
      pair_once slowblock "$round" plain slowblock "$@"
      pair_once slowstep "$round" plain slowstep "$@"
      pair_once readme "$round" plain readme "$@"
    else
      for label in $order; do
        b=$label
        [ "$label" != plain2 ] || b=plain
        run_once "$b" "$label" "$round" "$@"
      done
    fi
    k=$((k + 1))
  done
  first=$((round - rounds + 1))
  n=$((n + 1))
  for kind in aa slowblock slowstep readme; do
    case $kind in
      aa) a=plain b=plain2 ;;
      slowblock) a=plain b=slowblock ;;
      slowstep) a=plain2 b=slowstep ;;
      readme) a=plain b=readme ;;
    esac
    [ "$lockstep" = no ] || a=$kind-a b=$kind-b
    dir="$work/cmp-$kind-$n"
    (cd "$work" && "$bin" compare "$(list "$a" "$first" "$round")" "$(list "$b" "$first" "$round")" --out "$dir") \
      >"$dir.log" 2>&1 || { tail -5 "$dir.log" >&2; die "compare $kind $n failed"; }
    awk -F, -v kind="$kind" -v n="$n" 'NR > 1 { print kind "," n "," $0 }' "$dir/compare_verdicts.csv" >>"$work/compares.csv"
    csv="$dir/compare_verdicts.csv"
    case $kind in
      aa) awk -F, 'NR > 1 && $2 == 1 && ($9 == "faster" || $9 == "slower") { f = 1 } END { exit !f }' "$csv" && aa=$((aa + 1)) ;;
      readme) awk -F, 'NR > 1 && $2 == 1 && ($9 == "faster" || $9 == "slower") { f = 1 } END { exit !f }' "$csv" && readme_bad=$((readme_bad + 1)) ;;
      slowblock) awk -F, -v k="block:$block@" 'NR > 1 && index($1, k) == 1 && $9 == "slower" { f = 1 } END { exit !f }' "$csv" && slow_hit=$((slow_hit + 1)) ;;
      slowstep) awk -F, 'NR > 1 && index($1, "step@") == 1 && $9 == "slower" { f = 1 } END { exit !f }' "$csv" && step_hit=$((step_hit + 1)) ;;
    esac
  done
  round_s=$(($(date +%s) - t0))
  echo "validate-compare: compare $n: A/A false alarms $aa, block slower $slow_hit, step slower $step_hit, README wrong $readme_bad ($(($(date +%s) - start)) s)"
  [ $(($(date +%s) - start + round_s)) -le "$budget" ] || { echo "validate-compare: budget spent"; break; }
done

# the observed effects: the median over compares of each checked row's B/A
med() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2); else print "n/a" }'; }
eff_block=$(awk -F, -v k="block:$block@" '$1 == "slowblock" && index($3, k) == 1 { print $7 }' "$work/compares.csv" | med)
eff_step=$(awk -F, '$1 == "slowstep" && index($3, "step@") == 1 { print $7 }' "$work/compares.csv" | med)
eff_block_step=$(awk -F, '$1 == "slowblock" && index($3, "step@") == 1 { print $7 }' "$work/compares.csv" | med)
total_s=$(($(date +%s) - start))
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
{
  echo "# forge-roofline validate-compare, $stamp"
  echo "machine: $(hostname), $cpu, $(nproc) CPUs (shared with other work: see the load below)"
  if [ "$lockstep" = yes ]; then
    echo "commit: $sha; run options: $*; $rounds rounds per compare, each one lockstep pair of its two builds (first side flipping)"
  else
    echo "commit: $sha; run options: $*; $rounds rounds (alternated, order rotating) per compare"
  fi
  echo "injected: $block given $block_pct % more work (slow block) and $step_pct % more (slow step): its matvec again over that share of another layer's rows"
  echo "compares of each kind: $n; time: ${total_s} s in all (builds ${build_s} s); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "kind,compares,hits,rate,target"
  echo "aa_false_alarm,$n,$aa,$(awk -v a="$aa" -v n="$n" 'BEGIN { printf "%.3f", a / n }'),at most 1 of 20 (0.05)"
  echo "slow_block_detected,$n,$slow_hit,$(awk -v a="$slow_hit" -v n="$n" 'BEGIN { printf "%.3f", a / n }'),at least 18 of 20 (0.90)"
  echo "slow_step_detected,$n,$step_hit,$(awk -v a="$step_hit" -v n="$n" 'BEGIN { printf "%.3f", a / n }'),at least 16 of 20 (0.80)"
  echo "readme_wrong,$n,$readme_bad,$(awk -v a="$readme_bad" -v n="$n" 'BEGIN { printf "%.3f", a / n }'),0"
  echo
  echo "observed (median over compares of B/A the verdict rests on): block $block with $block_pct %: $eff_block (its step: $eff_block_step); step with $step_pct %: $eff_step"
  echo "every row of every compare: $work/compares.csv"
} >"$out"
cat "$out"
