set terminal pngcairo size 620,560 font 'sans,10'
set output 'results/workload_b.png'
set multiplot layout 1,1 title 'Workload B: time vs size (log-log), 8 KiB chunks'
set logscale xy; set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key top left font ',9'
set xlabel 'total size (MiB), 8 KiB chunks'; set ylabel 'median time per op (ms)'
$d0_0 << EOD
1 0.447429
4 0.682541
16 1.9046
64 56.3133
EOD
$d0_1 << EOD
1 8.27369
4 41.9097
EOD
$d0_2 << EOD
1 0.024121
4 0.0929515
16 0.97942
64 5.33162
EOD
$d0_3 << EOD
1 0.0222408
4 0.0951372
16 1.02661
64 57.5366
EOD
$d0_4 << EOD
1 0.329953
4 0.540253
16 25.4749
64 113.125
EOD
set title 'glibc (glibc-B.json)'
plot $d0_0 with linespoints lw 2 pt 1 title 'bufwriter', $d0_1 with linespoints lw 2 pt 2 title 'exact\_size', $d0_2 with linespoints lw 2 pt 3 title 'limit\_warm', $d0_3 with linespoints lw 2 pt 4 title 'realloc\_double', $d0_4 with linespoints lw 2 pt 5 title 'std\_string'
unset multiplot
