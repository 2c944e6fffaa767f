# Sampler cost against vocabulary size: one line per variant (colour) and row kind (dash and symbol fill),
# median with min..max bars, and the measured decode step as a horizontal line for scale.
# Inputs: plot_vars.gp, plot_sampler.dat.
load dir.'/plot_vars.gp'
eval out('sampler')
set title "Sampler cost against vocabulary size\n".run_title noenhanced
set logscale xy
set format y '10^{%L}'
set xlabel 'vocabulary size (logits per row)'
set ylabel 'time per row (µs; median, bars min..max)'
set key outside right top font ',11'
set xtics ('32k' 32000, '64k' 65536, '128k' 128256, '152k' 151936, '256k' 262144, '1k' 1024, '4k' 4096, '16k' 16384) font ',10'
set mxtics default
set offsets graph 0.04, graph 0.04, 0, 0
has_step = (step_s == step_s)
step_title = has_step ? sprintf('whole decode step at T=%d: %.1f ms', step_context, step_s * 1e3) \
                      : 'decode step not measured'
if (n_sampler_rows == 0) { eval no_data('no sampler variant was measured') }
set autoscale xfix
set yrange [*:(has_step && step_s * 1e6 > smp_hi_us ? step_s * 1e6 * 3 : smp_hi_us * 3)]
array vcol[6] = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b']
array kpt[4] = [7, 6, 5, 4]
plot for [i=0:n_series-1] dir.'/plot_sampler.dat' index i using 1:2:3:4 with yerrorlines lw 2 ps 1.5 \
         lc rgb vcol[series_variant[i+1] % 6 + 1] dt 1 + series_kind[i+1] % 4 \
         pt kpt[series_kind[i+1] % 4 + 1] title series_name[i+1], \
     (has_step ? step_s * 1e6 : NaN) with lines dt 3 lw 2 lc rgb '#000000' title step_title
