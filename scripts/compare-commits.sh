#!/bin/sh
# One command for a performance pull request, in the manner of llama.cpp's compare-commits.sh:
#   scripts/compare-commits.sh [--runs N] [--out DIR] [--no-wait] BASE HEAD [run options]
# builds BASE and HEAD in temporary git worktrees (make -j2 all), runs them alternately (BASE, HEAD, BASE,
# HEAD, ...: N runs each, at least 2, so both sides see the same load of a shared machine), and writes one
# compare folder (compare.md, compare.png, compare.svg) from the pooled runs of each side: per row the median
# of the runs' medians, spread from the smallest min to the largest max (forge-roofline compare A1,A2 B1,B2).
# The runs themselves are kept under DIR/runs/. Run options go to every run (default --model qwen3-0.6b),
# e.g. --quick, --context 1,1024, --threads 2. The compare itself is made by this checkout's build.
# The rounds hold the machine lock a run takes (docs/trust.md): another run waits, and so does this one
# (--no-wait: exit 3 instead).
set -eu

usage() {
  echo "usage: scripts/compare-commits.sh [--runs N] [--out DIR] [--no-wait] BASE HEAD [run options]" >&2
  exit 2
}
die() {
  echo "compare-commits: $*" >&2
  exit 2
}

runs=2
out=
no_wait=no
while [ $# -gt 0 ]; do
  case $1 in
    --runs) [ $# -ge 2 ] || usage; runs=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    --no-wait) no_wait=yes; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1' before BASE (try --help)" ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || usage
case $runs in ''|*[!0-9]*) die "--runs needs a whole number, got '$runs'" ;; esac
[ "$runs" -ge 2 ] || die "--runs must be at least 2 (alternated runs are what cancels the machine's load)"
base=$1 head=$2
shift 2
model_given=no
for a in "$@"; do
  case $a in
    --out|--out=*) die "--out goes before BASE (it names the compare folder; each run's folder is chosen here)" ;;
    --model|--model=*) model_given=yes ;;
  esac
done
[ "$model_given" = yes ] || set -- --model qwen3-0.6b "$@"

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

echo "compare-commits: BASE $b7, HEAD $h7, $runs runs each, alternated; run options: $*"
for side in base head; do
  sha=$base_sha
  [ "$side" = base ] || sha=$head_sha
  git -C "$repo" worktree add --detach --quiet "$tmp/$side" "$sha"
  echo "compare-commits: building $side ($(git -C "$tmp/$side" rev-parse --short=7 HEAD)) ..."
  make -C "$tmp/$side" -j2 all >"$tmp/$side-build.log" 2>&1 || {
    tail -20 "$tmp/$side-build.log" >&2
    echo "compare-commits: building $side failed" >&2
    exit 1
  }
done
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

# One run at a time on this machine: the rounds hold the lock the runs take (bench/cli/machine_lock.h, the
# same file), and hand it to this checkout's runs in FORGE_ROOFLINE_LOCK_FD, so nothing runs between them.
lock=${FORGE_ROOFLINE_LOCK:-}
if [ -z "$lock" ]; then
  if [ -d /run/lock ] && [ -w /run/lock ]; then lock=/run/lock/forge-roofline.lock
  elif [ -n "${XDG_RUNTIME_DIR:-}" ] && [ -w "$XDG_RUNTIME_DIR" ]; then lock=$XDG_RUNTIME_DIR/forge-roofline.lock
  else lock=$out/forge-roofline.lock; mkdir -p "$out"; fi
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
i=1
while [ "$i" -le "$runs" ]; do
  for side in base head; do
    dest="$out/runs/$side-$i"
    echo "compare-commits: run $i of $runs, $side ..."
    # each binary runs in its own tree, so it reads its own model/ and scripts/
    if ! (cd "$tmp/$side" && build/forge-roofline "$@" --no-plots --out "$dest") >"$out/runs/$side-$i.log" 2>&1; then
      tail -20 "$out/runs/$side-$i.log" >&2
      echo "compare-commits: run $i of $side failed (log: $out/runs/$side-$i.log)" >&2
      exit 1
    fi
    run=$(cd "$out" && find "runs/$side-$i" -mindepth 1 -maxdepth 1 -type d ! -name '.*' | head -n 1)
    if [ -z "$run" ] || [ ! -f "$out/$run/run.json" ]; then die "run $i of $side left no run.json under $dest"; fi
    if [ "$side" = base ]; then list_base="$list_base${list_base:+,}$run"; else list_head="$list_head${list_head:+,}$run"; fi
  done
  i=$((i + 1))
done

# from the compare folder, so compare.md names the runs by their short relative paths
(cd "$out" && "$compare_bin" compare "$list_base" "$list_head" --out .)
echo "compare-commits: $out/compare.md (paste it, with compare.png, into the pull request)"
