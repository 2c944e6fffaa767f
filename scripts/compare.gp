# Two runs: left, both on one roofline (A hollow grey, B filled, coloured by the verdict, an arrow from A
# to B per block); right, B/A time per block (below 1: B faster), coloured green or red only when the
# change is outside both runs' [min, max] spread. Inputs: compare_vars.gp, compare_points.dat.
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
set rmargin at screen 0.47
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
     pts using 5:6:(vcol($8)) with points pt 7 ps 1.6 lc rgb variable title 'run B (green/red: outside spread)'

set lmargin at screen 0.62
set rmargin at screen 0.97
unset logscale y
set logscale x
set xrange [r_lo:r_hi]
set yrange [-0.7:n_rows - 0.3]
set format x '%.2g'
set xtics (0.25, 0.33, 0.5, 0.67, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 2, 3, 4) font ',11'
set ytics scale 0 font ',12' noenhanced
set mxtics default
set grid xtics noytics nomytics
set xlabel 'B/A time per decode step (log scale; below 1: B faster)'
unset ylabel
set title 'per-block change'
unset key
set style fill solid 0.85 border lc rgb '#333333'
set arrow 1 from 1, graph 0 to 1, graph 1 nohead lc rgb '#000000' lw 1.5 front
y(r) = n_rows - 1 - r
plot pts using (1):(y($1)):(1):7:(y($1) - 0.35):(y($1) + 0.35):(vcol($8)):ytic(2) \
         with boxxyerror lc rgb variable notitle, \
     pts using 7:(y($1)):(sprintf(' %.3f', $7)) with labels left font ',10' notitle
unset multiplot
