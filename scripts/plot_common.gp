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
