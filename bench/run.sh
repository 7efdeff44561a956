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
# What a run measured is kept per scenario in bench/raw/ (committed):
# s<N>.tsv, every measurement of each round, and s<N>.md, the rows and
# notes it printed, each row dated with the scenario's run, and a line
# saying how it ran (command, commit, knobs, load average, servers).  A run
# rewrites those two files for the scenarios it ran, and only for them,
# and makes bench/results.md anew from all of bench/raw/*.md: so the table
# holds every scenario's latest run, and nothing in it is typed in.
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

raw=$top/bench/raw
mkdir -p "$raw"
commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$top" diff --quiet HEAD -- client extension sql bench ':!bench/raw' ':!bench/results.md' ':!bench/scaling.png' 2>/dev/null ||
	commit="$commit + uncommitted changes"
machine="$CORES cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(free -g | awk '/^Mem:/ { print $2 }') GiB; PostgreSQL $(pg_config --version | awk '{ print $2 }'), fsync=on, synchronous_commit=$sync, shared_buffers=512MB; $(redis-server --version | awk '{ print $1, $2, $3 }' | sed 's/v=//')"
command="bench/run.sh${*:+ $*}"
# the knobs set (bench/lib.sh, bench/README.md), as the command's prefix
for knob in $(env | sed -n 's/^\(BENCH_[A-Z0-9_]*\)=.*/\1/p' | grep -vx 'BENCH_OUT' | sort -r); do
	command="$knob=${!knob} $command"
done

# lines FILE: how many lines FILE has (0 when there is none)
lines() {
	[ -f "$1" ] && wc -l <"$1" || echo 0
}

for n in "${scenarios[@]}"; do
	script=$(ls bench/s"${n}"_*.sh 2>/dev/null | head -1)
	[ -n "$script" ] || die "no scenario $n"
	# what this scenario adds to the run's files, from here on
	rows0=$(lines "$BENCH_OUT/table.md") notes0=$(lines "$BENCH_OUT/notes.md") raw0=$(lines "$BENCH_OUT/raw.tsv")
	BENCH_RUN_DATE=$(date -u '+%Y-%m-%d %H:%M')
	export BENCH_RUN_DATE
	load0=$(cut -d' ' -f1 /proc/loadavg) t0=$(date +%s)
	if ! bash "$script"; then
		log "scenario $n failed"
		row "$n" "$(basename "$script" .sh) failed: see the log above" nan ""
	fi
	runline="Scenario $n: run $BENCH_RUN_DATE UTC, \`$command\` at commit $commit, $ROUNDS rounds (BENCH_ROUNDS; scenario 3: one more, scenarios 4, 7 and 17 to 20: two more), $SECS s runs, $CLIENTS pgbench clients, $(($(date +%s) - t0)) s; load average $load0 before, $(cut -d' ' -f1 /proc/loadavg) after; $machine; per-round data: [raw/s$n.tsv](raw/s$n.tsv)."
	{
		echo "# $runline"
		printf 'scenario\tvariant\tvalue\tround\n'
		tail -n +$((raw0 + 1)) "$BENCH_OUT/raw.tsv" 2>/dev/null
	} >"$BENCH_OUT/s$n.tsv"
	{
		echo "<!-- bench/run.sh writes this file; bench/results.md is made from bench/raw/*.md -->"
		echo "run: $runline"
		tail -n +$((rows0 + 1)) "$BENCH_OUT/table.md" 2>/dev/null
		tail -n +$((notes0 + 1)) "$BENCH_OUT/notes.md" 2>/dev/null
	} >"$BENCH_OUT/s$n.md"
	cp "$BENCH_OUT/s$n.tsv" "$BENCH_OUT/s$n.md" "$raw/"
done

# The table: every scenario's latest run (bench/raw/s<N>.md), in order.
kept=$(for f in "$raw"/s*.md; do [ -e "$f" ] && basename "$f" .md | cut -c2-; done | sort -n)
{
	echo "# pgfence benchmarks"
	echo
	echo "Written by bench/run.sh from [raw/](raw/): the rows and notes of each scenario's latest run (\`bench/run.sh N ...\` rewrites only the scenarios it runs), each row dated with its run (last column); how each run went, and the file with its per-round measurements, under \"Runs\"."
	echo "Medians of the rounds per variant, the variants of a scenario interleaved round by round in rotating order; ratio = median over rounds of measurement / baseline of the same round. Compare ratios within one run, not figures of different runs."
	echo
	echo "| # | measurement | median | vs (median) | ratio | target | met | run (UTC) |"
	echo "|---|---|---|---|---|---|---|---|"
	for n in $kept; do grep '^|' "$raw/s$n.md"; done
	echo
	echo "## Runs"
	echo
	for n in $kept; do sed -n 's/^run: /- /p' "$raw/s$n.md"; done
	echo
	echo "## How each scenario measures"
	echo
	for n in $kept; do grep '^- ' "$raw/s$n.md"; done
} >"$BENCH_OUT/results.md"
cp "$BENCH_OUT/results.md" bench/results.md

if [ -s "$BENCH_OUT/scaling.dat" ]; then
	gnuplot -e "cores=$CORES" bench/scaling.gp >bench/scaling.png 2>"$BENCH_OUT/gnuplot.log" ||
		log "gnuplot failed: $(cat "$BENCH_OUT/gnuplot.log")"
fi

cat bench/results.md
