set terminal pngcairo size 1860,560 font 'sans,10'
set output 'results/full/workload_b.png'
set multiplot layout 1,3 title 'Workload B: time vs size (log-log), 8 KiB chunks'
set logscale xy; set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key top left font ',9'
set xlabel 'total size (MiB), 8 KiB chunks'; set ylabel 'median time per op (ms)'
$d0_0 << EOD
1 0.494812
4 0.581091
16 1.4448
64 56.0454
256 248.511
EOD
$d0_1 << EOD
1 0.0247137
4 0.106584
16 0.801411
64 5.029
256 20.2555
EOD
$d0_2 << EOD
1 3.17449
4 37.6423
EOD
$d0_3 << EOD
1 0.0236918
4 0.099811
16 0.651296
64 52.0308
256 235.325
EOD
$d0_4 << EOD
1 0.0230219
4 0.0968973
16 0.756895
64 5.54343
256 21.9555
EOD
$d0_5 << EOD
1 0.03994
4 0.119612
16 0.906382
64 56.8283
256 236.187
EOD
$d0_6 << EOD
1 0.150596
4 0.365002
16 2.63036
64 85.2623
256 421.814
EOD
set title 'glibc (glibc-full.json)'
plot $d0_0 with linespoints lw 2 pt 1 title 'bufwriter', $d0_1 with linespoints lw 2 pt 2 title 'bufwriter\_steady', $d0_2 with linespoints lw 2 pt 3 title 'exact\_size', $d0_3 with linespoints lw 2 pt 4 title 'limit\_cold', $d0_4 with linespoints lw 2 pt 5 title 'limit\_warm', $d0_5 with linespoints lw 2 pt 6 title 'realloc\_double', $d0_6 with linespoints lw 2 pt 7 title 'std\_string'
$d1_0 << EOD
1 0.0542261
4 0.160041
16 23.5594
64 105.396
256 441.327
EOD
$d1_1 << EOD
1 0.0236955
4 0.0950732
16 0.682272
64 5.00164
256 22.5486
EOD
$d1_2 << EOD
1 3.5448
4 33.3494
EOD
$d1_3 << EOD
1 0.0245666
4 0.0896702
16 12.7626
64 53.7992
256 212.959
EOD
$d1_4 << EOD
1 0.0214623
4 0.0889882
16 1.04215
64 5.39116
256 18.7859
EOD
$d1_5 << EOD
1 0.0353351
4 0.124546
16 19.4477
64 100.766
256 443.772
EOD
$d1_6 << EOD
1 0.0635057
4 0.304562
16 22.579
64 96.5663
256 463.081
EOD
set title 'jemalloc (jemalloc-full.json)'
plot $d1_0 with linespoints lw 2 pt 1 title 'bufwriter', $d1_1 with linespoints lw 2 pt 2 title 'bufwriter\_steady', $d1_2 with linespoints lw 2 pt 3 title 'exact\_size', $d1_3 with linespoints lw 2 pt 4 title 'limit\_cold', $d1_4 with linespoints lw 2 pt 5 title 'limit\_warm', $d1_5 with linespoints lw 2 pt 6 title 'realloc\_double', $d1_6 with linespoints lw 2 pt 7 title 'std\_string'
$d2_0 << EOD
1 0.0544579
4 0.230746
16 2.73054
64 86.5911
256 433.385
EOD
$d2_1 << EOD
1 0.0241886
4 0.0943898
16 0.915366
64 5.18392
256 21.3591
EOD
$d2_2 << EOD
1 3.1803
4 40.1513
EOD
$d2_3 << EOD
1 0.0285507
4 0.105607
16 0.912317
64 54.0906
256 234.358
EOD
$d2_4 << EOD
1 0.0259161
4 0.115979
16 0.889307
64 5.36395
256 20.7164
EOD
$d2_5 << EOD
1 0.0583299
4 0.239673
16 2.39491
64 90.952
256 418.264
EOD
$d2_6 << EOD
1 0.0603827
4 0.266905
16 14.1977
64 102.001
256 418.678
EOD
set title 'mimalloc (mimalloc-full.json)'
plot $d2_0 with linespoints lw 2 pt 1 title 'bufwriter', $d2_1 with linespoints lw 2 pt 2 title 'bufwriter\_steady', $d2_2 with linespoints lw 2 pt 3 title 'exact\_size', $d2_3 with linespoints lw 2 pt 4 title 'limit\_cold', $d2_4 with linespoints lw 2 pt 5 title 'limit\_warm', $d2_5 with linespoints lw 2 pt 6 title 'realloc\_double', $d2_6 with linespoints lw 2 pt 7 title 'std\_string'
unset multiplot
