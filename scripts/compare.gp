# Two runs: left, both on one roofline (A hollow grey, B filled, coloured by the verdict, an arrow from A
# to B per block); right, the forest plot of every row's verdict (B/A with its 95 % interval, the noise
# band shaded). Inputs: compare_vars.gp, compare_points.dat, compare_forest.dat.
load dir.'/compare_vars.gp'
eval term_cmd(1600, 850)
eval out('compare')
peak_top = 1e300
if (n_a_peak > 0) { peak_top = 0; do for [i=1:n_a_peak] { if (a_peak_val[i] > peak_top) { peak_top = a_peak_val[i] } } }
roof(x, bw) = (bw * x < peak_top) ? bw * x : peak_top
array roofcol[4] = ['#222222', '#3b6ea5', '#8a5a9e', '#5a8a5a']
vcol(v) = v == 2 ? 0x2ca02c : v == 3 ? 0xd62728 : 0x7f7f7f
pts = dir.'/compare_points.dat'
if (n_rows == 0) { eval no_data('the two runs share no block') }

set multiplot title "forge-roofline compare: ".run_title."\n".title_a."   vs   ".title_b noenhanced
set lmargin at screen 0.06
set rmargin at screen 0.45
set bmargin at screen 0.26
set tmargin at screen 0.86
set logscale xy
set format x '10^{%L}'
set format y '10^{%L}'
set xrange [x_lo:x_hi]
set yrange [y_lo:y_hi]
set xlabel 'arithmetic intensity (FLOP / byte)'
set ylabel 'performance (GFLOP/s)'
set title 'both runs on run A''s roofs'
set key at screen 0.47, screen 0.17 right vertical maxrows 4 width -2 font ',10' noenhanced
set samples 400
plot NaN notitle, \
     for [i=1:n_a_bw] roof(x, a_bw_val[i]) with lines lw 2.5 dt i lc rgb roofcol[(i-1)%4+1] title 'A '.a_bw_name[i], \
     for [i=1:n_a_peak] (a_peak_val[i] + 0 * x) with lines lw 2 dt 2+i lc rgb '#888888' title 'A '.a_peak_name[i], \
     pts using 3:4:($5 - $3):($6 - $4) with vectors head filled size screen 0.008,20 lc rgb '#aaaaaa' notitle, \
     pts using 3:4 with points pt 6 ps 2 lw 2 lc rgb '#7f7f7f' title 'run A', \
     pts using 5:6:(vcol($8)) with points pt 7 ps 1.6 lc rgb variable title 'run B (green/red: faster/slower)'

# Right: the forest plot, every row decided on samples (compare_forest.dat), the headline rows on top:
# B/A with its 95 % interval, the band of "no change" (1 +- threshold) shaded, coloured by the verdict.
set lmargin at screen 0.66
set rmargin at screen 0.97
set bmargin at screen 0.12
unset logscale y
set logscale x
set xrange [f_lo:f_hi]
set yrange [0.3:n_forest + 0.7]
set format x '%.3g'
set xtics (0.5, 0.67, 0.8, 0.9, 0.95, 1, 1.05, 1.1, 1.25, 1.5, 2) font ',10'
set ytics scale 0 font ',8' noenhanced
set mxtics default
set grid xtics noytics nomytics
set xlabel 'B/A time (95 % interval; log scale; below 1: B faster)'
unset ylabel
set title sprintf('verdicts (band: no change within %.1f %%)', 100 * threshold)
set key at screen 0.97, screen 0.035 right horizontal font ',10' noenhanced
fcol(v) = v == 3 ? 0xd62728 : v == 2 ? 0x2ca02c : v == 1 ? 0x3b6ea5 : 0xff9f1c
set object 1 rect from 1 - threshold, graph 0 to 1 + threshold, graph 1 fc rgb '#e6e6e6' fs solid 1.0 noborder behind
set arrow 1 from 1, graph 0 to 1, graph 1 nohead lc rgb '#000000' lw 1.2 front
forest = dir.'/compare_forest.dat'
if (n_forest == 0) { eval no_data('no row has samples on both sides') }
plot forest using 3:1:4:5:(fcol($6)):ytic(2) with xerrorbars pt 7 ps 0.9 lw 1.5 lc rgb variable notitle, \
     NaN with points pt 7 lc rgb '#d62728' title 'slower', NaN with points pt 7 lc rgb '#2ca02c' title 'faster', \
     NaN with points pt 7 lc rgb '#3b6ea5' title 'no change', NaN with points pt 7 lc rgb '#ff9f1c' title 'inconclusive'
unset multiplot
