#!/bin/sh
# Draws the plots of a forge-roofline results folder with gnuplot, each as PNG and SVG:
#   roofline, breakdown, sampler, context        (scripts/plots.sh RUN_DIR)
#   batch                                        (when the run has batch.csv)
#   compare                                      (scripts/plots.sh --compare COMPARE_DIR)
#   history                                      (scripts/plots.sh --history DIR: history plot's inputs)
# It reads the CSV and plot_* files the run wrote; the images are regenerated, never committed.
# Exit status: 0 drawn; 77 gnuplot is not installed (data files are complete, images skipped);
# 2 usage or missing input; 1 gnuplot failed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
mode=run
if [ "${1:-}" = "--compare" ] || [ "${1:-}" = "--history" ]; then
  mode=${1#--}
  shift
fi
if [ $# -ne 1 ]; then
  echo "usage: plots.sh [--compare|--history] DIR" >&2
  exit 2
fi
dir=$1
if [ ! -d "$dir" ]; then
  echo "plots.sh: '$dir' is not a folder" >&2
  exit 2
fi
gp=${GNUPLOT:-gnuplot}
if ! command -v "$gp" >/dev/null 2>&1; then
  echo "plots.sh: gnuplot not found; plots skipped (install gnuplot-nox)" >&2
  exit 77
fi

# pngcairo draws anti-aliased text; the libgd png terminal is the fallback.
if "$gp" -e 'set terminal pngcairo' </dev/null >/dev/null 2>&1; then png_term=pngcairo; else png_term=png; fi
# A gnuplot single-quoted string: double any quote in the path.
qdir=$(printf '%s' "$dir" | sed "s/'/''/g")

draw() { # draw SCRIPT NEEDED_FILE
  if [ ! -f "$dir/$2" ]; then
    echo "plots.sh: $dir/$2 is missing" >&2
    exit 2
  fi
  for fmt in png svg; do
    if ! log=$("$gp" -e "dir='$qdir'; fmt='$fmt'; png_term='$png_term'" "$here/plot_common.gp" "$here/$1" 2>&1); then
      printf '%s\n' "$log" >&2
      echo "plots.sh: gnuplot failed on $1 ($fmt): $(printf '%s\n' "$log" | grep -v '^ *$' | tail -n 1)" >&2
      exit 1
    fi
  done
}

if [ "$mode" = compare ]; then
  draw compare.gp compare_vars.gp
elif [ "$mode" = history ]; then
  draw history.gp history_vars.gp
else
  draw roofline.gp plot_vars.gp
  draw breakdown.gp plot_breakdown.dat
  draw sampler.gp plot_sampler.dat
  draw context.gp plot_steps.dat
  if [ -f "$dir/batch.csv" ]; then draw batch.gp plot_batch.dat; fi
fi
