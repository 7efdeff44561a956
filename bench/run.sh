#!/usr/bin/env bash
# bench/run.sh: the benchmarks behind `make bench`.
#
#   bench/run.sh [SCENARIO...]     all scenarios (1-21), or only those given
#
# Starts its own PostgreSQL and Redis (test/lib/servers.sh), builds the C
# bench programs and the empty reference trigger, runs each scenario script
# (bench/s<N>_*.sh; each interleaves its variants with its baseline round by
# round), then prints a Markdown table of medians and ratios, writes it to
# bench/results.md, and plots critical sections per second against workers
# (scenario 5) to bench/scaling.png.  See bench/lib.sh for the knobs
# (BENCH_ROUNDS, BENCH_SECS, BENCH_CLIENTS, BENCH_ROWS).
#
# Durability setting: fsync=on with synchronous_commit=off by default, so
# the figures are those of the CPU and of the round trips, which is what
# fencing adds; with synchronous_commit=on every variant would wait about
# the same ~0.2 ms WAL flush per commit and the ratios would look better
# than the code is.  BENCH_SYNC=on measures that setting instead.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD

export BENCH_OUT=$top/bench/out
rm -rf "$BENCH_OUT"
mkdir -p "$BENCH_OUT"
. bench/lib.sh

scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21)
sync=${BENCH_SYNC:-off}
started=$(date +%s)

log "building the bench programs and the reference trigger"
make -s -C bench all >&2
. test/lib/servers.sh
make -s -C bench/noop_trigger install >&2

servers_init
pg_start -c fsync=on -c synchronous_commit="$sync" -c full_page_writes=on \
	-c shared_buffers=512MB -c max_wal_size=8GB -c checkpoint_timeout=30min \
	-c autovacuum=off -c max_connections=100 -c jit=off
redis_start main
export FENCE_REDIS_URL
FENCE_REDIS_URL=$(redis_url main)
sql -c 'CREATE EXTENSION fence' -c 'CREATE EXTENSION bench_noop_trigger'

for n in "${scenarios[@]}"; do
	script=$(ls bench/s"${n}"_*.sh 2>/dev/null | head -1)
	[ -n "$script" ] || die "no scenario $n"
	if ! bash "$script"; then
		log "scenario $n failed"
		row "$n" "$(basename "$script" .sh) failed: see the log above" nan ""
	fi
done

# The table, with the conditions it was measured under.
{
	echo "# pgfence benchmarks"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $CORES cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(free -g | awk '/^Mem:/ { print $2 }') GiB;"
	echo "PostgreSQL $(pg_config --version | awk '{ print $2 }'), fsync=on, synchronous_commit=$sync, shared_buffers=512MB; $(redis-server --version | awk '{ print $1, $2, $3 }' | sed 's/v=//')."
	echo "Medians of $ROUNDS runs per variant (scenario 3: $((ROUNDS + 1)), scenarios 4, 7 and 17 to 20: $((ROUNDS + 2))), the variants of a scenario interleaved round by round in rotating order; ratio = median over rounds of measurement / baseline of the same round."
	echo
	echo "| # | measurement | median | vs (median) | ratio | target | met |"
	echo "|---|---|---|---|---|---|---|"
	cat "$BENCH_OUT/table.md" 2>/dev/null
	echo
	[ -f "$BENCH_OUT/notes.md" ] && cat "$BENCH_OUT/notes.md"
	echo
	echo "Whole run: $(($(date +%s) - started)) s."
} >"$BENCH_OUT/results.md"
cp "$BENCH_OUT/results.md" bench/results.md

if [ -s "$BENCH_OUT/scaling.dat" ]; then
	gnuplot -e "cores=$CORES" bench/scaling.gp >bench/scaling.png 2>"$BENCH_OUT/gnuplot.log" ||
		log "gnuplot failed: $(cat "$BENCH_OUT/gnuplot.log")"
fi

cat bench/results.md
