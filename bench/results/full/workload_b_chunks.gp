set terminal pngcairo size 1860,560 font 'sans,10'
set output 'results/full/workload_b_chunks.png'
set multiplot layout 1,3 title 'Workload B: time vs chunk size (log-log), 10 MiB'
set logscale xy; set grid xtics ytics mxtics mytics lc rgb '#dddddd'
set key top left font ',9'
set xlabel 'chunk size (bytes), 10 MiB total'; set ylabel 'median time per op (ms)'
$d0_0 << EOD
64 1.0232
256 0.656814
1024 0.973344
4096 0.561914
16384 0.496506
65536 0.688133
EOD
$d0_1 << EOD
64 0.61963
256 0.283924
1024 0.328211
4096 0.246291
16384 0.269484
65536 0.295896
EOD
$d0_2 << EOD
16384 197.924
65536 59.7127
EOD
$d0_3 << EOD
64 0.690515
256 0.333458
1024 0.361268
4096 0.251867
16384 0.257612
65536 0.337937
EOD
$d0_4 << EOD
64 0.636798
256 0.303126
1024 0.398734
4096 0.266542
16384 0.267302
65536 0.322007
EOD
$d0_5 << EOD
64 0.727838
256 0.305167
1024 0.422892
4096 0.355389
16384 0.280951
65536 0.395629
EOD
$d0_6 << EOD
64 3.18884
256 2.47519
1024 2.25613
4096 1.83218
16384 2.08653
65536 2.05278
EOD
set title 'glibc (glibc-full.json)'
plot $d0_0 with linespoints lw 2 pt 9 lc rgb '#9467bd' title 'bufwriter', $d0_1 with linespoints lw 2 pt 10 lc rgb '#2ca02c' title 'bufwriter\_steady', $d0_2 with linespoints lw 2 pt 4 lc rgb '#d62728' title 'exact\_size', $d0_3 with linespoints lw 2 pt 2 lc rgb '#888888' title 'limit\_cold', $d0_4 with linespoints lw 2 pt 1 lc rgb '#000000' title 'limit\_warm', $d0_5 with linespoints lw 2 pt 5 lc rgb '#1f77b4' title 'realloc\_double', $d0_6 with linespoints lw 2 pt 8 lc rgb '#ff7f0e' title 'std\_string'
$d1_0 << EOD
64 13.8283
256 13.9472
1024 13.9824
4096 15.3998
16384 16.4535
65536 14.2763
EOD
$d1_1 << EOD
64 0.663094
256 0.272623
1024 0.249862
4096 0.265338
16384 0.246267
65536 0.300811
EOD
$d1_2 << EOD
16384 1479.02
65536 374.862
EOD
$d1_3 << EOD
64 7.5542
256 8.45985
1024 6.52416
4096 9.06309
16384 8.2439
65536 7.15145
EOD
$d1_4 << EOD
64 0.709375
256 0.277816
1024 0.28779
4096 0.240447
16384 0.247588
65536 0.313109
EOD
$d1_5 << EOD
64 15.3672
256 14.922
1024 13.4238
4096 15.8912
16384 14.6087
65536 15.9075
EOD
$d1_6 << EOD
64 16.5534
256 14.3283
1024 14.5352
4096 14.5755
16384 15.1715
65536 16.5862
EOD
set title 'jemalloc (jemalloc-full.json)'
plot $d1_0 with linespoints lw 2 pt 9 lc rgb '#9467bd' title 'bufwriter', $d1_1 with linespoints lw 2 pt 10 lc rgb '#2ca02c' title 'bufwriter\_steady', $d1_2 with linespoints lw 2 pt 4 lc rgb '#d62728' title 'exact\_size', $d1_3 with linespoints lw 2 pt 2 lc rgb '#888888' title 'limit\_cold', $d1_4 with linespoints lw 2 pt 1 lc rgb '#000000' title 'limit\_warm', $d1_5 with linespoints lw 2 pt 5 lc rgb '#1f77b4' title 'realloc\_double', $d1_6 with linespoints lw 2 pt 8 lc rgb '#ff7f0e' title 'std\_string'
$d2_0 << EOD
64 2.2329
256 1.95175
1024 2.28909
4096 1.8931
16384 1.67073
65536 1.83621
EOD
$d2_1 << EOD
64 0.689494
256 0.25225
1024 0.253579
4096 0.324771
16384 0.303696
65536 0.287656
EOD
$d2_2 << EOD
16384 154.484
65536 43.3867
EOD
$d2_3 << EOD
64 0.576343
256 0.254097
1024 0.271855
4096 0.282836
16384 0.253047
65536 0.311601
EOD
$d2_4 << EOD
64 0.740331
256 0.272132
1024 0.23678
4096 0.261644
16384 0.277096
65536 0.296359
EOD
$d2_5 << EOD
64 2.35913
256 1.93427
1024 1.58805
4096 1.99278
16384 1.89235
65536 1.79677
EOD
$d2_6 << EOD
64 10.506
256 8.55706
1024 10.3288
4096 9.82252
16384 9.71618
65536 9.01052
EOD
set title 'mimalloc (mimalloc-full.json)'
plot $d2_0 with linespoints lw 2 pt 9 lc rgb '#9467bd' title 'bufwriter', $d2_1 with linespoints lw 2 pt 10 lc rgb '#2ca02c' title 'bufwriter\_steady', $d2_2 with linespoints lw 2 pt 4 lc rgb '#d62728' title 'exact\_size', $d2_3 with linespoints lw 2 pt 2 lc rgb '#888888' title 'limit\_cold', $d2_4 with linespoints lw 2 pt 1 lc rgb '#000000' title 'limit\_warm', $d2_5 with linespoints lw 2 pt 5 lc rgb '#1f77b4' title 'realloc\_double', $d2_6 with linespoints lw 2 pt 8 lc rgb '#ff7f0e' title 'std\_string'
unset multiplot
