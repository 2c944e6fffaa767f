# Time per block in one decode step: predicted (cost model at the DRAM roof), measured in isolation
# (microbenchmark), and measured inside the real step (observer), milliseconds on a log axis so the small
# blocks stay visible. Inputs: plot_vars.gp, plot_breakdown.dat.
load dir.'/plot_vars.gp'
eval out('breakdown')
if (n_breakdown == 0) { eval no_data('no block was predicted or measured') }
n_rows = n_breakdown_rows
x0 = bd_lo / 3
set title sprintf("Time per block in one decode step (context %d); labels: share of the measured step\n%s", \
                 blocks_context, run_title) noenhanced
set logscale x
set xrange [x0:bd_hi * 3]
set yrange [-0.7:n_rows - 0.3]
set format x '10^{%L}'
set xlabel 'milliseconds per decode step (all calls of the block; log scale)'
set ytics scale 0 font ',12' noenhanced
set grid noytics
set key outside bottom center horizontal maxrows 1 font ',11' samplen 2 spacing 1.5
set bmargin 6
set style fill solid 0.85 border lc rgb '#333333'
y(r) = n_rows - 1 - r
plot dir.'/plot_breakdown.dat' using (x0):(y($1) + 0.27):(x0):3:(y($1) + 0.15):(y($1) + 0.39) \
         with boxxyerror lc rgb '#9ecae1' title 'predicted (cost model at the roof)', \
     '' using (x0):(y($1)):(x0):4:(y($1) - 0.12):(y($1) + 0.12):ytic(2) \
         with boxxyerror lc rgb '#3182bd' title 'measured (microbenchmark, median)', \
     '' using (x0):(y($1) - 0.27):(x0):5:(y($1) - 0.39):(y($1) - 0.15) \
         with boxxyerror lc rgb '#fd8d3c' title sprintf('measured inside the decode step (T=%d)', step_context)
