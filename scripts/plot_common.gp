# Shared by every plot: terminal (PNG or SVG, chosen by plots.sh; a script may resize with
# `eval term_cmd(W, H)`), fonts, grid. Each plot script then runs `eval out(NAME)` and draws; `dir` is the
# results folder.
out(name) = sprintf("set output '%s/%s.%s'", dir, name, fmt)
term_cmd(w, h) = fmt ne 'png' \
    ? sprintf("set terminal svg size %d,%d enhanced font 'sans,12' linewidth 1.3 background rgb 'white'", w, h) \
    : png_term eq 'pngcairo' \
    ? sprintf("set terminal pngcairo size %d,%d enhanced font 'sans,12' linewidth 1.3", w, h) \
    : sprintf("set terminal png size %d,%d enhanced font ',12'", w, h)
eval term_cmd(1400, 850)
set datafile missing 'NaN'
set grid xtics ytics mxtics mytics lc rgb '#dddddd' lw 1
set border lw 1
set key noenhanced
# A panel that says why there is no plot: `eval no_data('...')` draws it and ends this gnuplot.
no_data(msg) = "set label 99 '".msg."' at graph 0.5, graph 0.5 center font ',16'; unset logscale; " \
    . "set xrange [0:1]; set yrange [0:1]; unset xtics; unset ytics; unset mxtics; unset mytics; " \
    . "plot NaN notitle; exit"
