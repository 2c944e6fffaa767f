# Decode speed against context length: tokens/s predicted by the cost model at the roof and measured
# (median, labelled; bars from the slowest and fastest repetition). Inputs: plot_vars.gp, plot_steps.dat.
load dir.'/plot_vars.gp'
eval out('context')
if (n_context == 0) { eval no_data('no decode step was predicted or measured') }
if (ctx_min > 0) { set logscale x 2; set format x '%.0f' }
set title "Decode speed against context length\n".run_title noenhanced
set xlabel 'context length (tokens in the KV cache)'
set ylabel 'tokens per second'
set yrange [0:ctx_top * 1.2]
set offsets graph 0.04, graph 0.04, 0, 0
set key inside top right box opaque
plot dir.'/plot_steps.dat' using 1:2 with linespoints lw 2 dt 2 pt 6 ps 1.5 lc rgb '#3182bd' \
         title 'predicted (cost model at the roof)', \
     '' using 1:3:4:5 with yerrorlines lw 2 pt 7 ps 1.5 lc rgb '#e6550d' \
         title 'measured (median, bars slowest..fastest)', \
     '' using 1:3:(sprintf('%.1f', $3)) with labels offset 0, -1.3 font ',10' tc rgb '#e6550d' notitle
