#!/bin/bash
# rejudge-compare.sh BIN VALIDATION_DIR [ROUNDS|until:MAX [compare options]]: decides again every complete
# compare of a scripts/validate-compare.sh folder (its kept runs, runs/<label>-<i>/, or of --lockstep
# runs/<kind>-a-<i>/ and runs/<kind>-b-<i>/) with BIN's compare, without timing anything. ROUNDS rounds a
# side (default 4; the i-th compare takes rounds (i-1)R+1 .. iR); or until:MAX, as compare-commits.sh
# decides: each kind's compare grows one round at a time from its first round until every headline row is
# faster, slower or no change, or it has MAX rounds, and the next compare starts after it (a last compare
# the rounds ran out on is not counted). Prints each checked row (the steps, the slowed block) with its
# ratio, interval, p, Holm-adjusted p, the run-level p and, where the verdict misses what the kind should
# give, which of the rule's conditions blocked it; then the four rates. Why it exists: the rule can be
# re-examined on measured runs in seconds, not hours.
set -euo pipefail
usage() { echo "usage: $0 BIN VALIDATION_DIR [ROUNDS|until:MAX [compare options]]" >&2; exit 2; }
[ $# -ge 2 ] || usage
bin=$1 dir=$2 R=${3:-4} until=0
shift $(($# >= 3 ? 3 : 2))
case $R in
  until:[1-9]*) until=${R#until:} R=1 ;;
  [1-9]*) ;;
  *) usage ;;
esac
case $until$R in *[!0-9]*) usage ;; esac
block=gate_up_proj
# validate-compare.sh --lockstep keeps each compare's two sides as runs/<kind>-a-<i> and runs/<kind>-b-<i>
labels="plain plain2 readme slowblock slowstep" lockstep=no
if [ -d "$dir/runs/aa-a-1" ]; then
  labels="aa-a aa-b slowblock-a slowblock-b slowstep-a slowstep-b readme-a readme-b" lockstep=yes
fi
last=$(for l in $labels; do
  find "$dir/runs" -maxdepth 1 -type d -name "$l-*" | sed 's/.*-//' | sort -n | tail -1; done | sort -n | head -1)
if [ -z "$last" ] || [ "$last" -lt 1 ]; then
  echo "rejudge-compare: $dir/runs holds no round of every kind's runs" >&2
  exit 2
fi
n=$((last / R))
if [ -n "${REJUDGE_KEEP:-}" ]; then # keep the compares' folders there
  out=$REJUDGE_KEEP && mkdir -p "$out"
else
  out=$(mktemp -d) && trap 'rm -rf "$out"' EXIT
fi
list() {
  local l="" d i
  for ((i = $2; i <= $3; i++)); do
    d=$(find "$dir/runs/$1-$i" -mindepth 1 -maxdepth 1 -type d ! -name '.*' | head -1)
    [ -n "$d" ] || return 1
    l="$l${l:+,}$d"
  done
  echo "$l"
}
aa=0 sb=0 ss=0 rm=0
declare -A alt=() # kind,test: compares the kind's checked verdict would have had with the paired test instead
# judge KIND C FIRST LAST: compares rounds FIRST..LAST of KIND into $out/KIND-C; sets res (the checked rows'
# lines, then "HIT h", "ALT t w" and "DECIDED d": every headline row faster, slower or no change); returns 1
# when a round's runs are missing, 2 when the compare failed (res says so)
judge() {
  local kind=$1 c=$2 f=$3 l=$4 a b A B csv
  case $kind in
    aa) a=plain b=plain2 ;; slowblock) a=plain b=slowblock ;; slowstep) a=plain2 b=slowstep ;; readme) a=plain b=readme ;;
  esac
  [ "$lockstep" = no ] || a=$kind-a b=$kind-b
  if ! A=$(list "$a" "$f" "$l") || ! B=$(list "$b" "$f" "$l"); then return 1; fi
  rm -rf "$out/$kind-$c"
  "$bin" compare "$A" "$B" --out "$out/$kind-$c" --no-history "${cmp_opts[@]}" >/dev/null 2>&1 ||
    { res="compare failed $kind $c (rounds $f-$l)"; return 2; }
  csv=$out/$kind-$c/compare_verdicts.csv
  # columns by name: key headline ratio lo hi p_adj verdict p_runs (absent from older builds) run_test
  res=$(awk -F, -v kind="$kind" -v c="$c" -v blk="block:$block@" -v span="$([ "$until" = 0 ] || echo " (rounds $f-$l)")" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; decided = 1; next }
    { key = $col["key"]; v = $col["verdict"]; r = $col["ratio"]; lo = $col["lo"]; hi = $col["hi"]
      pa = $col["p_adj"]; pr = ("p_runs" in col) ? $col["p_runs"] : "?"
      pt = ("p_pair_t" in col) ? $col["p_pair_t"] : ""; pw = ("p_pair_wsr" in col) ? $col["p_pair_wsr"] : ""
      head = $col["headline"] == 1
      if (head && v != "faster" && v != "slower" && v != "no change") decided = 0
      checked = key ~ /^step@/ || index(key, blk) == 1
      # the rule without its run test, then with each run test in turn
      base = pa < 0.05 && ((lo > 1 && r >= 1.02) || (hi < 1 && r <= 0.98))
      want = kind == "aa" || kind == "readme" ? head : (kind == "slowblock" ? index(key, blk) == 1 : key ~ /^step@/) && r > 1
      if (want && base && pt != "" && pt < 0.05) alt_t = 1
      if (want && base && pw != "" && pw < 0.05) alt_w = 1
      if (kind == "aa" || kind == "readme") { if (head && (v == "faster" || v == "slower")) hit = 1 }
      else if (kind == "slowblock" && index(key, blk) == 1 && v == "slower") hit = 1
      else if (kind == "slowstep" && key ~ /^step@/ && v == "slower") hit = 1
      if (!checked) next
      why = ""
      if ((kind == "slowblock" && index(key, blk) == 1) || (kind == "slowstep" && key ~ /^step@/)) {
        if (v != "slower") {
          if (!(pa < 0.05)) why = why " p_adj"
          if (!(lo > 1)) why = why " ci"
          if (!(r >= 1.02)) why = why " threshold"
          if (!(pr < 0.05)) why = why " p_runs"
        }
      }
      printf "%s %d%s %s %s [%s, %s] p_adj %s p_runs %s paired t %s signed rank %s: %s%s%s\n", kind, c, span, key, r,
             lo, hi, pa, pr, pt, pw, v, why != "" ? ", blocked by:" : "", why }
    END { print "HIT", hit + 0; print "ALT", alt_t + 0, alt_w + 0; print "DECIDED", decided + 0 }' "$csv")
}
# count KIND: adds the judged compare in res to the rates
count() {
  local kind=$1 t w
  echo "$res" | grep -v '^HIT\|^ALT\|^DECIDED' || true
  read -r _ t w < <(echo "$res" | grep '^ALT' || echo "ALT 0 0")
  alt[$kind,t]=$((${alt[$kind,t]:-0} + t)) alt[$kind,w]=$((${alt[$kind,w]:-0} + w))
  if [ "$(echo "$res" | awk '/^HIT/ { print $2 }')" = 1 ]; then
    case $kind in aa) aa=$((aa + 1)) ;; slowblock) sb=$((sb + 1)) ;; slowstep) ss=$((ss + 1)) ;; readme) rm=$((rm + 1)) ;; esac
  fi
}
# the rates had either paired test been the run test
alt_rates() {
  local k
  for k in t w; do
    echo "  with the paired $([ $k = t ] && echo t || echo signed-rank) test as the run test instead: A/A false ${alt[aa,$k]:-0}," \
      "block slower ${alt[slowblock,$k]:-0}, step slower ${alt[slowstep,$k]:-0}, README wrong ${alt[readme,$k]:-0}"
  done
}
cmp_opts=("$@")
if [ "$until" = 0 ]; then
  for ((c = 1; c <= n; c++)); do
    for kind in aa slowblock slowstep readme; do
      rc=0
      judge "$kind" "$c" $(((c - 1) * R + 1)) $((c * R)) || rc=$?
      [ "$rc" != 2 ] || echo "$res"
      [ "$rc" != 0 ] || count "$kind"
    done
  done
else
  declare -A used=() # kind: rounds each counted compare took, in order
  for kind in aa slowblock slowstep readme; do
    f=1 c=1
    while [ "$f" -le "$last" ]; do
      l=$f
      while :; do
        rc=0
        judge "$kind" "$c" "$f" "$l" || rc=$?
        [ "$rc" = 0 ] || { [ "$rc" != 2 ] || echo "$res"; l=0; break; }
        if echo "$res" | grep -q '^DECIDED 1' || [ $((l - f + 1)) -ge "$until" ]; then break; fi
        [ "$l" -lt "$last" ] || { echo "$kind $c (rounds $f-$l): undecided when the rounds ran out, not counted"; l=0; break; }
        l=$((l + 1))
      done
      [ "$l" -gt 0 ] || break
      count "$kind"
      used[$kind]="${used[$kind]:-}${used[$kind]:+ }$((l - f + 1))"
      f=$((l + 1)) c=$((c + 1))
    done
  done
  for kind in aa slowblock slowstep readme; do echo "rounds a compare, $kind: ${used[$kind]:-none}"; done
  nk() { echo "${used[$1]:-}" | wc -w; }
  echo "until decided, at most $until rounds: A/A false $aa of $(nk aa), block slower $sb of $(nk slowblock)," \
    "step slower $ss of $(nk slowstep), README wrong $rm of $(nk readme)"
  alt_rates
  exit 0
fi
echo "rounds $R, compares $n: A/A false $aa, block slower $sb, step slower $ss, README wrong $rm"
alt_rates
