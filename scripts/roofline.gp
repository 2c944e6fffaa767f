# Roofline, log-log: measured ceilings as roofs (sloped: bandwidth, flat: peak FLOP/s), one point per
# block and one for the whole decode step, each named in the key with the roof that binds it (a memory
# level, FMA, exp or the call overhead); a bar in the point's colour marks that roof's performance for the
# block (its FLOPs over its predicted time) and a dotted line joins the point to it; hollow symbols keep
# overlapping points visible. The weight-reading matvecs share one intensity, so an inset zooms on them with direct labels.
# Inputs: plot_vars.gp, plot_points.dat.
load dir.'/plot_vars.gp'
eval out('roofline')
peak_top = 1e300
if (n_peak > 0) { peak_top = 0; do for [i=1:n_peak] { if (peak_val[i] > peak_top) { peak_top = peak_val[i] } } }
roof(x, bw) = (bw * x < peak_top) ? bw * x : peak_top
array col[10] = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', \
                 '#bcbd22', '#17becf']
array sym[8] = [6, 4, 8, 12, 10, 14, 1, 2]
# Roofs differ in colour as well as dash: the libgd png terminal draws every dash type solid.
array roofcol[4] = ['#222222', '#3b6ea5', '#8a5a9e', '#5a8a5a']
pcol(i) = (i == step_point) ? '#000000' : col[(i-1)%10+1]
ptyp(i) = (i == step_point) ? 3 : sym[(i-1)%8+1]
pts = dir.'/plot_points.dat'
# batched steps (forge rows of plot_batch.dat: intensity in column 7, GFLOP/s in 8), labelled with B
if (!exists('n_batch')) { n_batch = 0 }
bpts = dir.'/plot_batch.dat'
# the prefill's blocks (filled diamonds) and the whole prefill (a filled star) of plot_prefill.dat
if (!exists('n_prefill_pts')) { n_prefill_pts = 0 }
ppts = dir.'/plot_prefill.dat'

set multiplot
set lmargin at screen 0.07
set rmargin at screen 0.61
set bmargin at screen 0.09
set tmargin at screen 0.90
set title "Roofline: measured ceilings and the blocks of one decode step\n".run_title noenhanced
set logscale xy
set format x '10^{%L}'
set format y '10^{%L}'
set xrange [x_lo:x_hi]
set yrange [y_lo:y_hi]
set xlabel 'arithmetic intensity (FLOP / byte)'
set ylabel 'performance (GFLOP/s)'
set key at screen 0.99, screen 0.90 right top vertical spacing 1.2 font ',11' box opaque width -2
set samples 400
if (zoom_n > 0) {
    set object 1 rect from zoom_x_lo, zoom_y_lo to zoom_x_hi, zoom_y_hi fs empty border lc rgb '#999999' dt 2
}
plot NaN notitle, \
     for [i=1:n_bw] roof(x, bw_val[i]) with lines lw 2.5 dt i lc rgb roofcol[(i-1)%4+1] title bw_name[i], \
     for [i=1:n_peak] (peak_val[i] + 0 * x) with lines lw 2 dt 2+i lc rgb '#888888' title peak_name[i], \
     for [i=1:n_points] pts every ::(i-1)::(i-1) using 1:2 with points pt ptyp(i) \
         ps (i == step_point ? 3 : 2.2) lw 2 lc rgb pcol(i) title point_name[i], \
     for [i=1:n_points] pts every ::(i-1)::(i-1) using ($1/1.5):7:($1*1.5-$1/1.5):(0) with vectors nohead \
         lw 3 lc rgb pcol(i) notitle, \
     for [i=1:n_points] pts every ::(i-1)::(i-1) using 1:2:(0):($7-$2) with vectors nohead dt 3 lw 1 \
         lc rgb pcol(i) notitle, \
     pts using 1:($6 == 1 ? $2 : NaN) with points pt 6 ps 4.5 lw 2.5 lc rgb '#d62728' \
         title 'red ring: above its roof, an accounting error', \
     for [i=1:(n_batch > 0)] bpts using 7:($5 == 0 ? $8 : NaN) with linespoints pt 9 ps 1.6 lw 1.5 \
         lc rgb '#444444' title sprintf('batched steps, B = 1..%d (T=%d)', batch_max, batch_context), \
     for [i=1:(n_batch > 0)] bpts using 7:($5 == 0 ? $8 : NaN):(sprintf('B=%d', $1)) with labels \
         right offset -0.8, 0.3 font ',9' tc rgb '#444444' notitle, \
     for [i=1:(n_prefill_pts > 0)] ppts using 1:($3 == 0 ? $2 : NaN) with points pt 13 ps 1.8 \
         lc rgb '#b8860b' title sprintf('prompt processing blocks (N=%d)', prefill_len), \
     for [i=1:(n_prefill_pts > 0)] ppts using 1:($3 == 1 ? $2 : NaN) with points pt 7 ps 2.6 \
         lc rgb '#8b4513' title sprintf('whole prefill (N=%d)', prefill_len), \
     for [i=1:(n_prefill_pts > 0)] ppts using 1:2:4 with labels left offset 0.9, 0 font ',9' noenhanced \
         tc rgb '#8b4513' notitle, \
     for [i=1:(strlen(not_drawn) > 0)] keyentry with points pt -1 title not_drawn
unset object 1

if (zoom_n > 0) {
    set lmargin at screen 0.40
    set rmargin at screen 0.59
    set bmargin at screen 0.15
    set tmargin at screen 0.43
    set title 'zoom: weight-reading matvecs (linear axes)' font ',10'
    unset xlabel
    unset ylabel
    unset key
    unset logscale xy
    set xrange [zoom_x_lo:zoom_x_hi]
    set yrange [zoom_y_lo:zoom_y_hi]
    set format x '%.3g'
    set format y '%.3g'
    set xtics zoom_x_lo, (zoom_x_hi - zoom_x_lo) / 3 font ',9'
    set ytics font ',9'
    unset mxtics
    unset mytics
    set grid noxtics nomxtics nomytics ytics
    set object 2 rect from graph 0, graph 0 to graph 1, graph 1 behind fc rgb 'white' fs solid noborder
    plot for [i=1:n_bw] bw_val[i] * x with lines lw 2.5 dt i lc rgb roofcol[(i-1)%4+1] notitle, \
         for [i=1:n_points] pts every ::(i-1)::(i-1) using 1:($3 == 1 ? $2 : NaN) with points pt ptyp(i) \
             ps 1.8 lw 2 lc rgb pcol(i) notitle, \
         pts using 1:($3 == 1 ? $2 : NaN):(zoom_dx):($4 - $2) with vectors nohead lc rgb '#999999' notitle, \
         pts using 1:($3 == 1 && $6 == 1 ? $2 : NaN) with points pt 6 ps 3.5 lw 2.5 lc rgb '#d62728' notitle, \
         pts using ($1 + zoom_dx):($3 == 1 ? $4 : NaN):5 with labels left offset 0.5, 0 font ',10' \
             noenhanced notitle
    unset object 2
}
unset multiplot
