#!/bin/sh
# The include graph of the project's own files (#include "..."), checked two ways; run by `make lint`.
#   1. No circles between modules: foo.c and foo.h are one node, and no node may reach itself. Two files that
#      need each other's helpers share a third, lower module instead (CONVENTIONS.md, rule 14).
#   2. Folders include downwards only: bench/cli -> bench, bench/report -> model, roofline -> kernels
#      (docs/build.md, Layout). Folders on one layer do not include each other (model never times anything,
#      roofline never knows about the model, bench's suites do not write reports).
#   3. With --objects DIR (the objects of a build, as `make lint` passes build/obj): no circle either in the
#      graph of "calls a function defined in", read from the objects' symbols (nm), which also sees a header
#      that declares another file's functions (two files calling each other through one header).
# Every violation is printed on one line naming the files; the exit status is 1 when there is any, 2 on bad
# use. tests/ may include any layer, but its own headers take part in the circle check.
#   scripts/check-includes.sh [--objects DIR] [--edges]   (--edges prints the graph and checks nothing)
set -eu

cd "$(dirname "$0")/.."

# Layer of each folder of library code, highest first. A new folder gets a line here.
layers='bench/cli 4
bench/tune 4
bench/history 3
bench 2
bench/report 2
model 1
roofline 1
kernels 0'

mode=check
objects=
while [ $# -gt 0 ]; do
  case $1 in
    --edges) mode=edges; shift ;;
    --objects) [ $# -ge 2 ] || { echo "check-includes: --objects needs a folder" >&2; exit 2; }
      objects=$2; shift 2
      [ -d "$objects" ] || { echo "check-includes: no folder '$objects' (build first)" >&2; exit 2; } ;;
    *) echo "usage: scripts/check-includes.sh [--objects DIR] [--edges]" >&2; exit 2 ;;
  esac
done

if git rev-parse --git-dir >/dev/null 2>&1; then
  files=$(git ls-files -co --exclude-standard -- '*.c' '*.h')
else
  files=$(find . -name build -prune -o \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||')
fi

# One line per quoted include: "<file> <target>", the target resolved as the compiler does with -I.: beside
# the including file first, then from the root. Includes of files outside the tree are not ours to check.
edges=$(for f in $files; do
  [ -f "$f" ] || continue
  d=$(dirname "$f")
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
    if [ -f "$d/$inc" ]; then
      t=$(realpath -m --relative-to=. "$d/$inc")
    elif [ -f "$inc" ]; then
      t=$(realpath -m --relative-to=. "$inc")
    else
      continue
    fi
    echo "I $f $t"
  done
done)

# One line per call into another object: "S <user> <definer> <symbol>", modules named as source paths.
if [ -n "$objects" ]; then
  objs=$(find "$objects" -name '*.o' ! -path '*/tests/*' | sort)
  [ -n "$objs" ] || { echo "check-includes: no objects under '$objects' (build first)" >&2; exit 2; }
  calls=$(for o in $objs; do
    m=${o#"$objects"/}
    [ -f "${m%.o}.c" ] || continue # left over from a source since removed
    nm "$o" | awk -v m="${m%.o}" '$1 == "U" { print "U", $2, m } $2 ~ /^[TDBRV]$/ { print "D", $3, m }'
  done | awk '$1 == "D" { def[$2] = $3; next } { use[++n] = $2 " " $3 }
              END { for (i = 1; i <= n; i++) { split(use[i], u, " ")
                      if ((u[1] in def) && def[u[1]] != u[2]) print "S " u[2] ".c " def[u[1]] ".c " u[1] } }' | sort -u)
  edges=$(printf '%s\n%s\n' "$edges" "$calls")
fi

printf '%s\n' "$edges" | awk -v mode="$mode" -v layers="$layers" -v objects="$objects" '
function node(p) { sub(/\.[ch]$/, "", p); return p }
function folder(p) { if (p !~ /\//) return "."; sub(/\/[^\/]*$/, "", p); return p }
BEGIN {
  n = split(layers, l, "\n")
  for (i = 1; i <= n; i++) { split(l[i], w, " "); rank[w[1]] = w[2] + 0 }
}
$1 == "S" {
  a = "calls:" node($2); b = "calls:" node($3)
  key = a SUBSEP b
  if (!(key in via)) { via[key] = $2 " calls " $4 " of " $3; succ[a] = succ[a] " " b; nodes[a]; nodes[b] }
  next
}
$1 == "I" {
  $0 = $2 " " $3
  a = "includes:" node($1); b = "includes:" node($2)
  if (a == b) next
  key = a SUBSEP b
  if (!(key in via)) { via[key] = $1 " includes " $2; succ[a] = succ[a] " " b; nodes[a]; nodes[b] }
  fa = folder($1); fb = folder($2)
  if (fa ~ /^tests(\/|$)/ || fa == fb) next
  if (!(fa in rank)) { bad[++nbad] = $1 ": folder " fa " has no layer in scripts/check-includes.sh"; next }
  if (!(fb in rank)) { bad[++nbad] = $1 " includes " $2 ": folder " fb " has no layer in scripts/check-includes.sh"; next }
  if (rank[fa] <= rank[fb])
    bad[++nbad] = $1 " includes " $2 ": " fa " may not include " fb " (includes point down: " \
                  "bench/cli -> bench, bench/report -> model, roofline -> kernels)"
}
# Depth-first search; an edge back to a node on the current path closes a circle, printed as the path.
function visit(v,   s, k, i, w, j, c, sep, g) {
  state[v] = 1; path[++depth] = v
  k = split(succ[v], s, " ")
  for (i = 1; i <= k; i++) {
    w = s[i]
    if (state[w] == 1) {
      c = ""; sep = ""
      for (j = depth; j >= 1 && path[j] != w; j--) ;
      for (; j <= depth; j++) {
        c = c sep path[j]
        why = why (j > 1 && why != "" ? "; " : "") via[path[j] SUBSEP (j < depth ? path[j + 1] : w)]
        sep = " -> "
      }
      g = c; sub(/:.*/, "", g); gsub(/(includes|calls):/, "", c)
      bad[++nbad] = "circle of " g ": " c " -> " substr(w, index(w, ":") + 1) " (" why ")"
      why = ""
    } else if (state[w] == 0) {
      visit(w)
    }
  }
  depth--; state[v] = 2
}
END {
  if (mode == "edges") {
    for (k in via) { split(k, e, SUBSEP); print e[1] " -> " substr(e[2], index(e[2], ":") + 1) }
    exit 0
  }
  # Visit in a fixed order so the same tree always names the same circles.
  m = 0
  for (v in nodes) order[++m] = v
  for (i = 2; i <= m; i++) { v = order[i]; for (j = i - 1; j >= 1 && order[j] > v; j--) order[j + 1] = order[j]; order[j + 1] = v }
  for (i = 1; i <= m; i++) if (state[order[i]] == 0) visit(order[i])
  for (i = 1; i <= nbad; i++) print "check-includes: " bad[i] > "/dev/stderr"
  if (nbad) { print "check-includes: " nbad " problem(s) in the module graph" > "/dev/stderr"; exit 1 }
  printf "check-includes: %d modules, %d edges (includes%s), no circle, every include points down\n", m, length(via), objects ? " and calls" : ""
}'
