set terminal pngcairo size 620,560 font 'sans,10'
set output 'results/workload_b.png'
set multiplot layout 1,1 title 'Workload B: time vs size (log-log), 8 KiB chunks'
set logscale xy; set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key top left font ',9'
set xlabel 'total size (MiB), 8 KiB chunks'; set ylabel 'median time per op (ms)'
$d0_0 << EOD
1 0.583417
4 0.751581
16 1.83108
64 63.1681
EOD
$d0_1 << EOD
1 0.0251722
4 0.104614
16 0.959144
64 5.34673
EOD
$d0_2 << EOD
1 8.67329
4 57.35
EOD
$d0_3 << EOD
1 0.0279764
4 0.110817
16 1.0459
64 5.82654
EOD
$d0_4 << EOD
1 0.0267418
4 0.0912037
16 1.24042
64 55.0147
EOD
$d0_5 << EOD
1 0.33164
4 0.538668
16 28.6865
64 110.943
EOD
set title 'glibc (glibc-B.json)'
plot $d0_0 with linespoints lw 2 pt 9 lc rgb '#9467bd' title 'bufwriter', $d0_1 with linespoints lw 2 pt 10 lc rgb '#2ca02c' title 'bufwriter\_steady', $d0_2 with linespoints lw 2 pt 4 lc rgb '#d62728' title 'exact\_size', $d0_3 with linespoints lw 2 pt 1 lc rgb '#000000' title 'limit\_warm', $d0_4 with linespoints lw 2 pt 5 lc rgb '#1f77b4' title 'realloc\_double', $d0_5 with linespoints lw 2 pt 8 lc rgb '#ff7f0e' title 'std\_string'
unset multiplot
