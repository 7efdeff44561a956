# bench/scaling.gp: critical sections per second against workers (scenario
# 5), from bench/out/scaling.dat ("workers one_resource n_resources");
# run.sh passes the core count as "cores".
set terminal pngcairo size 800,480 font "sans,11"
set title sprintf("pgfence: critical sections (acquire, announce, fenced write, release), %d cores", cores)
set xlabel "workers"
set ylabel "critical sections / s"
set logscale x 2
set xtics (1, 2, 4, 8)
set xrange [0.85:9.5]
set yrange [0:*]
set grid
set key left top
plot "bench/out/scaling.dat" using 1:3 with linespoints lw 2 pt 7 title "one resource per worker", \
     "bench/out/scaling.dat" using 1:2 with linespoints lw 2 pt 5 title "all workers on one resource"
