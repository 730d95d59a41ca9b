set terminal pngcairo size 620,560 font 'sans,10'
set output 'results/workload_b.png'
set multiplot layout 1,1 title 'Workload B: time vs size (log-log), 8 KiB chunks'
set logscale xy; set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key top left font ',9'
set xlabel 'total size (MiB), 8 KiB chunks'; set ylabel 'median time per op (ms)'
$d0_0 << EOD
1 0.430132
4 0.544556
16 1.32322
64 52.4771
EOD
$d0_1 << EOD
1 0.0228527
4 0.0834008
16 0.571062
64 5.03075
EOD
$d0_2 << EOD
1 5.85979
4 40.7509
EOD
$d0_3 << EOD
1 0.0213289
4 0.0852791
16 0.606139
64 5.08693
EOD
$d0_4 << EOD
1 0.0209047
4 0.0861726
16 0.702026
64 48.4859
EOD
$d0_5 << EOD
1 0.255003
4 0.379138
16 24.3095
64 94.1486
EOD
set title 'glibc (glibc-B.json)'
plot $d0_0 with linespoints lw 2 pt 9 lc rgb '#9467bd' title 'bufwriter', $d0_1 with linespoints lw 2 pt 10 lc rgb '#2ca02c' title 'bufwriter\_steady', $d0_2 with linespoints lw 2 pt 4 lc rgb '#d62728' title 'exact\_size', $d0_3 with linespoints lw 2 pt 1 lc rgb '#000000' title 'limit\_warm', $d0_4 with linespoints lw 2 pt 5 lc rgb '#1f77b4' title 'realloc\_double', $d0_5 with linespoints lw 2 pt 8 lc rgb '#ff7f0e' title 'std\_string'
unset multiplot
