# Batch sweep: tokens/s of a batched decode step (B sequences, one token each) against B, log-log. The
# predicted roof of the whole step (max of its memory and compute times, this run's ceilings) and of its
# GEMMs alone (the five projections: B / their time), the measured medians with bars from the slowest to the
# fastest repetition, OpenBLAS and oneDNN beside forge when the run has them, and the ridge batch marked: predicted and
# measured for the GEMMs, predicted for the whole step when it lies in range. Inputs: plot_vars.gp,
# plot_batch.dat.
load dir.'/plot_vars.gp'
eval out('batch')
if (!exists('n_batch') || n_batch == 0) { eval no_data('the run had no batch sweep (--batch)') }
if (!exists('n_batch_onednn')) { n_batch_onednn = 0 }
bdat = dir.'/plot_batch.dat'
roof_t(B, a, b, c) = (a + b * B > c * B) ? a + b * B : c * B
step_roof(B) = B / roof_t(B, step_roof_a, step_roof_b, step_roof_c)
gemm_roof(B) = B / roof_t(B, gemm_roof_a, gemm_roof_b, gemm_roof_c)
x_hi = batch_max * 2
if (ridge_gemm_pred * 1.5 > x_hi) { x_hi = ridge_gemm_pred * 1.5 }
set title sprintf("Batched decode at context %d: tokens/s against batch size\n", batch_context).run_title noenhanced
set logscale xy 2
set format x '%.0f'
set format y '%g'
set xrange [0.8:x_hi]
set xlabel 'batch size B (sequences per step)'
set ylabel 'tokens per second (all sequences)'
set key inside top left box opaque
set samples 300
# A ridge label in the right half of the (log) x range goes to the left of its line, so none is cut off.
side(x) = (x > sqrt(0.8 * x_hi)) ? 'right offset -0.5, 0' : 'left offset 0.5, 0'
if (ridge_gemm_pred > 0) {
    set arrow 1 from ridge_gemm_pred, graph 0 to ridge_gemm_pred, graph 1 nohead dt 2 lw 1.5 lc rgb '#31a354'
    eval sprintf("set label 1 'B = %.1f: GEMM ridge predicted' at %g, graph 0.06 %s tc rgb '#31a354'", ridge_gemm_pred, ridge_gemm_pred, side(ridge_gemm_pred))
}
if (ridge_gemm_meas > 0) {
    set arrow 2 from ridge_gemm_meas, graph 0 to ridge_gemm_meas, graph 1 nohead dt 3 lw 1.5 lc rgb '#e6550d'
    eval sprintf("set label 2 'B = %.1f: GEMM ridge measured' at %g, graph 0.12 %s tc rgb '#e6550d'", ridge_gemm_meas, ridge_gemm_meas, side(ridge_gemm_meas))
}
if (ridge_step_pred > 0 && ridge_step_pred < x_hi) {
    set arrow 3 from ridge_step_pred, graph 0 to ridge_step_pred, graph 1 nohead dt 4 lw 1.5 lc rgb '#3182bd'
    eval sprintf("set label 3 'B = %.1f: step ridge predicted' at %g, graph 0.18 %s tc rgb '#3182bd'", ridge_step_pred, ridge_step_pred, side(ridge_step_pred))
}
plot step_roof(x) with lines lw 2.5 lc rgb '#3182bd' title 'whole step: predicted roof', \
     gemm_roof(x) with lines lw 2 dt 2 lc rgb '#31a354' title 'GEMMs alone: predicted roof', \
     bdat using 1:($5 == 0 ? $2 : NaN):3:4 with yerrorlines lw 2 pt 7 ps 1.4 lc rgb '#e6550d' \
         title 'whole step measured, forge (median; bars slowest..fastest)', \
     bdat using 1:($5 == 0 ? $6 : NaN) with linespoints lw 1.5 dt 2 pt 6 ps 1.4 lc rgb '#a63603' \
         title 'GEMMs alone measured, forge (B / their time in the step)', \
     for [i=1:(n_batch_openblas > 0)] bdat using 1:($5 == 1 ? $2 : NaN):3:4 with yerrorlines lw 2 pt 5 \
         ps 1.2 lc rgb '#756bb1' title 'whole step measured, OpenBLAS sgemm (f32 weights)', \
     for [i=1:(n_batch_openblas > 0)] bdat using 1:($5 == 1 ? $6 : NaN) with linespoints lw 1.5 dt 2 pt 4 \
         ps 1.2 lc rgb '#54278f' title 'GEMMs alone measured, OpenBLAS sgemm', \
     for [i=1:(n_batch_onednn > 0)] bdat using 1:($5 == 2 ? $2 : NaN):3:4 with yerrorlines lw 2 pt 9 \
         ps 1.2 lc rgb '#17becf' title "whole step measured, oneDNN matmul (the run's weights)", \
     for [i=1:(n_batch_onednn > 0)] bdat using 1:($5 == 2 ? $6 : NaN) with linespoints lw 1.5 dt 2 pt 8 \
         ps 1.2 lc rgb '#0f7f8a' title 'GEMMs alone measured, oneDNN matmul'
