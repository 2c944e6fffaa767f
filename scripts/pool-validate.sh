#!/bin/sh
# Pools the rates of several scripts/validate-compare.sh runs (their results/validate-compare-<stamp>.txt):
#   scripts/pool-validate.sh RATES_FILE...
# The targets are rates over 20 compares of each kind; on a 2-core VM that is over three hours of quiet
# machine, more than one sitting has. Files pool only when they ran the same protocol: the same run options,
# rounds a compare and injected slowdowns (their "commit:" line after the commit, and "injected:" line); the
# commits may differ (say which in what you quote). Prints each file's counts, then the pooled counts and
# rates against the targets.
# Exit 0 when pooled, 2 on bad input (a missing or malformed file, protocols that differ, one validation
# given twice).
set -eu

die() {
  echo "pool-validate: $*" >&2
  exit 2
}
[ $# -ge 1 ] || die "usage: scripts/pool-validate.sh RATES_FILE... (results/validate-compare-<stamp>.txt)"
case $1 in -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac

protocol='' seen=''
for f in "$@"; do
  [ -f "$f" ] || die "no such rates file: $f"
  # one validation's compares counted once, also under another name (its stamp line names it)
  id=$(sed -n 's/^# forge-roofline validate-compare, //p' "$f")
  [ -n "$id" ] || die "$f: no '# forge-roofline validate-compare, STAMP' line (not a validate-compare rates file?)"
  case " $seen " in *" $id "*) die "$f: validation $id is given twice: its compares would count twice" ;; esac
  seen="$seen $id"
  p=$(sed -n 's/^commit: [0-9a-f]*; //p' "$f")
  [ -n "$p" ] || die "$f: no 'commit: SHA; run options: ...' line (not a validate-compare rates file?)"
  p="$p; $(sed -n 's/^injected: //p' "$f")"
  for k in aa_false_alarm slow_block_detected slow_step_detected readme_wrong; do
    grep -q "^$k,[0-9]*,[0-9]*," "$f" || die "$f: no '$k' row"
  done
  if [ -z "$protocol" ]; then
    protocol=$p
  elif [ "$p" != "$protocol" ]; then
    die "$f ran another protocol ('$p') than $1 ('$protocol'): its rates do not pool"
  fi
done

echo "protocol: $protocol"
echo "file,commit,compares,aa_false_alarm,slow_block_detected,slow_step_detected,readme_wrong"
for f in "$@"; do
  awk -F, -v f="$f" '
    /^commit: / { sha = substr($0, 9, 7) }
    $1 ~ /^(aa_false_alarm|slow_block_detected|slow_step_detected|readme_wrong)$/ { n = $2; h[$1] = $3 }
    END {
      print f "," sha "," n "," h["aa_false_alarm"] "," h["slow_block_detected"] "," \
        h["slow_step_detected"] "," h["readme_wrong"]
    }' "$f"
done
echo
echo "kind,compares,hits,rate,target"
cat "$@" | awk -F, '
  $1 ~ /^(aa_false_alarm|slow_block_detected|slow_step_detected|readme_wrong)$/ {
    n[$1] += $2; h[$1] += $3; t[$1] = $5
  }
  END {
    split("aa_false_alarm slow_block_detected slow_step_detected readme_wrong", k, " ")
    for (i = 1; i <= 4; i++)
      printf "%s,%d,%d,%.3f,%s\n", k[i], n[k[i]], h[k[i]], n[k[i]] ? h[k[i]] / n[k[i]] : 0, t[k[i]]
  }'
