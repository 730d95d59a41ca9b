set terminal pngcairo size 1860,560 font 'sans,10'
set output 'results/full/workload_b.png'
set multiplot layout 1,3 title 'Workload B: time vs size (log-log), 8 KiB chunks'
set logscale xy; set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key top left font ',9'
set xlabel 'total size (MiB), 8 KiB chunks'; set ylabel 'median time per op (ms)'
$d0_0 << EOD
1 0.152473
4 0.272624
16 1.07887
64 55.2639
256 241.217
EOD
$d0_1 << EOD
1 0.0272357
4 0.0867098
16 0.748425
64 5.57367
256 20.6995
EOD
$d0_2 << EOD
1 3.44202
4 38.436
EOD
$d0_3 << EOD
1 0.024483
4 0.0974242
16 0.760794
64 46.4747
256 228.705
EOD
$d0_4 << EOD
1 0.0240505
4 0.104292
16 0.829797
64 5.16482
256 21.2431
EOD
$d0_5 << EOD
1 0.0519261
4 0.116918
16 0.86271
64 55.9716
256 216.369
EOD
$d0_6 << EOD
1 0.147325
4 0.332861
16 2.59142
64 84.7557
256 361.662
EOD
set title 'glibc (glibc-full.json)'
plot $d0_0 with linespoints lw 2 pt 9 lc rgb '#9467bd' title 'bufwriter', $d0_1 with linespoints lw 2 pt 10 lc rgb '#2ca02c' title 'bufwriter\_steady', $d0_2 with linespoints lw 2 pt 4 lc rgb '#d62728' title 'exact\_size', $d0_3 with linespoints lw 2 pt 2 lc rgb '#888888' title 'limit\_cold', $d0_4 with linespoints lw 2 pt 1 lc rgb '#000000' title 'limit\_warm', $d0_5 with linespoints lw 2 pt 5 lc rgb '#1f77b4' title 'realloc\_double', $d0_6 with linespoints lw 2 pt 8 lc rgb '#ff7f0e' title 'std\_string'
$d1_0 << EOD
1 0.0536225
4 0.166022
16 21.4152
64 101.551
256 439.678
EOD
$d1_1 << EOD
1 0.0228566
4 0.0942947
16 0.706187
64 5.37868
256 19.0825
EOD
$d1_2 << EOD
1 4.25115
4 37.2081
EOD
$d1_3 << EOD
1 0.0253142
4 0.0966586
16 13.7467
64 54.2639
256 206.239
EOD
$d1_4 << EOD
1 0.0204929
4 0.096652
16 0.926568
64 5.19828
256 20.9274
EOD
$d1_5 << EOD
1 0.0292545
4 0.12168
16 22.6294
64 102.813
256 431.404
EOD
$d1_6 << EOD
1 0.0646586
4 0.227305
16 19.3211
64 104.871
256 396.827
EOD
set title 'jemalloc (jemalloc-full.json)'
plot $d1_0 with linespoints lw 2 pt 9 lc rgb '#9467bd' title 'bufwriter', $d1_1 with linespoints lw 2 pt 10 lc rgb '#2ca02c' title 'bufwriter\_steady', $d1_2 with linespoints lw 2 pt 4 lc rgb '#d62728' title 'exact\_size', $d1_3 with linespoints lw 2 pt 2 lc rgb '#888888' title 'limit\_cold', $d1_4 with linespoints lw 2 pt 1 lc rgb '#000000' title 'limit\_warm', $d1_5 with linespoints lw 2 pt 5 lc rgb '#1f77b4' title 'realloc\_double', $d1_6 with linespoints lw 2 pt 8 lc rgb '#ff7f0e' title 'std\_string'
$d2_0 << EOD
1 0.0528502
4 0.235655
16 2.76282
64 76.9973
256 357.98
EOD
$d2_1 << EOD
1 0.0228469
4 0.105818
16 0.91393
64 5.14877
256 21.2759
EOD
$d2_2 << EOD
1 3.63083
4 47.4902
EOD
$d2_3 << EOD
1 0.026298
4 0.101525
16 0.797077
64 47.8037
256 228.614
EOD
$d2_4 << EOD
1 0.0233797
4 0.086054
16 0.627228
64 4.64628
256 21.1457
EOD
$d2_5 << EOD
1 0.0583544
4 0.234964
16 2.41713
64 81.2105
256 391.366
EOD
$d2_6 << EOD
1 0.0569133
4 0.222304
16 12.6933
64 93.4231
256 403.642
EOD
set title 'mimalloc (mimalloc-full.json)'
plot $d2_0 with linespoints lw 2 pt 9 lc rgb '#9467bd' title 'bufwriter', $d2_1 with linespoints lw 2 pt 10 lc rgb '#2ca02c' title 'bufwriter\_steady', $d2_2 with linespoints lw 2 pt 4 lc rgb '#d62728' title 'exact\_size', $d2_3 with linespoints lw 2 pt 2 lc rgb '#888888' title 'limit\_cold', $d2_4 with linespoints lw 2 pt 1 lc rgb '#000000' title 'limit\_warm', $d2_5 with linespoints lw 2 pt 5 lc rgb '#1f77b4' title 'realloc\_double', $d2_6 with linespoints lw 2 pt 8 lc rgb '#ff7f0e' title 'std\_string'
unset multiplot
