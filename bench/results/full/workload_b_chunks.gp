set terminal pngcairo size 1860,560 font 'sans,10'
set output 'results/full/workload_b_chunks.png'
set multiplot layout 1,3 title 'Workload B: time vs chunk size (log-log), 10 MiB'
set logscale xy; set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key top left font ',9'
set xlabel 'chunk size (bytes), 10 MiB total'; set ylabel 'median time per op (ms)'
$d0_0 << EOD
64 1.1841
256 1.00179
1024 0.955054
4096 0.987499
16384 1.04112
65536 0.972459
EOD
$d0_1 << EOD
64 0.673625
256 0.385055
1024 0.301465
4096 0.318968
16384 0.318576
65536 0.30746
EOD
$d0_2 << EOD
16384 203.881
65536 55.7853
EOD
$d0_3 << EOD
64 0.769107
256 0.27459
1024 0.255213
4096 0.270738
16384 0.289234
65536 0.304495
EOD
$d0_4 << EOD
64 0.765615
256 0.283488
1024 0.230583
4096 0.291627
16384 0.275879
65536 0.308004
EOD
$d0_5 << EOD
64 0.829788
256 0.333414
1024 0.336218
4096 0.358084
16384 0.352683
65536 0.327384
EOD
$d0_6 << EOD
64 2.75989
256 2.17921
1024 1.97904
4096 1.99388
16384 2.07752
65536 2.05449
EOD
set title 'glibc (glibc-full.json)'
plot $d0_0 with linespoints lw 2 pt 1 title 'bufwriter', $d0_1 with linespoints lw 2 pt 2 title 'bufwriter\_steady', $d0_2 with linespoints lw 2 pt 3 title 'exact\_size', $d0_3 with linespoints lw 2 pt 4 title 'limit\_cold', $d0_4 with linespoints lw 2 pt 5 title 'limit\_warm', $d0_5 with linespoints lw 2 pt 6 title 'realloc\_double', $d0_6 with linespoints lw 2 pt 7 title 'std\_string'
$d1_0 << EOD
64 17.5391
256 17.6797
1024 16.0684
4096 15.4604
16384 16.371
65536 17.3867
EOD
$d1_1 << EOD
64 0.640631
256 0.315206
1024 0.312635
4096 0.307713
16384 0.276041
65536 0.311947
EOD
$d1_2 << EOD
16384 1425.03
65536 379.997
EOD
$d1_3 << EOD
64 7.93481
256 7.3122
1024 8.2124
4096 9.36528
16384 9.21587
65536 8.29259
EOD
$d1_4 << EOD
64 0.683075
256 0.347524
1024 0.287857
4096 0.289557
16384 0.253117
65536 0.305575
EOD
$d1_5 << EOD
64 20.0915
256 15.7965
1024 14.4678
4096 17.0034
16384 15.7153
65536 17.882
EOD
$d1_6 << EOD
64 16.0995
256 17.9915
1024 18.3014
4096 17.575
16384 18.4209
65536 19.1913
EOD
set title 'jemalloc (jemalloc-full.json)'
plot $d1_0 with linespoints lw 2 pt 1 title 'bufwriter', $d1_1 with linespoints lw 2 pt 2 title 'bufwriter\_steady', $d1_2 with linespoints lw 2 pt 3 title 'exact\_size', $d1_3 with linespoints lw 2 pt 4 title 'limit\_cold', $d1_4 with linespoints lw 2 pt 5 title 'limit\_warm', $d1_5 with linespoints lw 2 pt 6 title 'realloc\_double', $d1_6 with linespoints lw 2 pt 7 title 'std\_string'
$d2_0 << EOD
64 2.15361
256 1.99714
1024 2.01617
4096 2.00874
16384 2.26026
65536 2.17053
EOD
$d2_1 << EOD
64 0.671803
256 0.283818
1024 0.285901
4096 0.332949
16384 0.297298
65536 0.307005
EOD
$d2_2 << EOD
16384 190.476
65536 64.6157
EOD
$d2_3 << EOD
64 0.750532
256 0.261444
1024 0.270547
4096 0.343208
16384 0.331005
65536 0.307908
EOD
$d2_4 << EOD
64 0.675572
256 0.266282
1024 0.280648
4096 0.316938
16384 0.313837
65536 0.300635
EOD
$d2_5 << EOD
64 1.97681
256 1.71893
1024 1.85646
4096 2.03918
16384 1.89737
65536 2.19151
EOD
$d2_6 << EOD
64 9.96267
256 8.67527
1024 10.4581
4096 9.91232
16384 10.5762
65536 9.82478
EOD
set title 'mimalloc (mimalloc-full.json)'
plot $d2_0 with linespoints lw 2 pt 1 title 'bufwriter', $d2_1 with linespoints lw 2 pt 2 title 'bufwriter\_steady', $d2_2 with linespoints lw 2 pt 3 title 'exact\_size', $d2_3 with linespoints lw 2 pt 4 title 'limit\_cold', $d2_4 with linespoints lw 2 pt 5 title 'limit\_warm', $d2_5 with linespoints lw 2 pt 6 title 'realloc\_double', $d2_6 with linespoints lw 2 pt 7 title 'std\_string'
unset multiplot
