set terminal pngcairo size 620,560 font 'sans,10'
set output 'results/workload_b.png'
set multiplot layout 1,1 title 'Workload B: time vs size (log-log), 8 KiB chunks'
set logscale xy; set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key top left font ',9'
set xlabel 'total size (MiB), 8 KiB chunks'; set ylabel 'median time per op (ms)'
$d0_0 << EOD
1 0.604905
4 0.787868
16 1.94743
64 53.0236
EOD
$d0_1 << EOD
1 0.0254513
4 0.0967759
16 0.929456
64 5.46514
EOD
$d0_2 << EOD
1 8.54328
4 45.8449
EOD
$d0_3 << EOD
1 0.0237276
4 0.0940575
16 0.869829
64 6.01604
EOD
$d0_4 << EOD
1 0.0225313
4 0.0946348
16 0.650468
64 59.5125
EOD
$d0_5 << EOD
1 0.219558
4 0.689776
16 30.5857
64 123.276
EOD
set title 'glibc (glibc-B.json)'
plot $d0_0 with linespoints lw 2 pt 1 title 'bufwriter', $d0_1 with linespoints lw 2 pt 2 title 'bufwriter\_steady', $d0_2 with linespoints lw 2 pt 3 title 'exact\_size', $d0_3 with linespoints lw 2 pt 4 title 'limit\_warm', $d0_4 with linespoints lw 2 pt 5 title 'realloc\_double', $d0_5 with linespoints lw 2 pt 6 title 'std\_string'
unset multiplot
