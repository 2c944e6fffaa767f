# One row's series from the run store (forge-roofline history plot): each run's point (raw), the point
# normalised by the run's paired DRAM read where it has one, the level of each segment between shifts, and
# each shift the detector found (dashed line, size, confidence and commit range). Inputs: history_vars.gp,
# history.dat (index, point, normalised, level, utc, commit).
load dir.'/history_vars.gp'
eval out('history')
dat = dir.'/history.dat'
if (n_points == 0) { eval no_data('no runs in the series') }
set title plot_title noenhanced
set xlabel 'run (oldest first)'
set ylabel sprintf('point (%s)', unit) noenhanced
set xrange [-0.5:n_points - 0.5]
set key top left
if (n_shifts > 0) {
  do for [k=1:n_shifts] {
    set arrow k from first shift_x[k], graph 0 to first shift_x[k], graph 1 nohead dt 2 lc rgb '#d62728'
    set label k shift_label[k] at first shift_x[k], graph (0.95 - 0.05 * ((k - 1) % 4)) right offset -0.5, 0 \
        font ',9' tc rgb '#d62728' noenhanced
  }
}
if (has_norm) {
  plot dat using 1:2 with linespoints pt 7 ps 0.5 lc rgb '#3b6ea5' title 'raw', \
       dat using 1:3 with linespoints pt 6 ps 0.5 lc rgb '#2ca02c' title 'normalised by the paired read', \
       dat using 1:4 with steps lw 2 lc rgb '#222222' title 'level between shifts'
} else {
  plot dat using 1:2 with linespoints pt 7 ps 0.5 lc rgb '#3b6ea5' title 'raw', \
       dat using 1:4 with steps lw 2 lc rgb '#222222' title 'level between shifts'
}
