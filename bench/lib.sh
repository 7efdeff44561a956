# bench/lib.sh: helpers shared by the scenario scripts (sourced, not run).
#
# run.sh starts the servers and exports PGHOST/PGPORT/PGUSER/PGDATABASE,
# FENCE_REDIS_URL and BENCH_OUT; each scenario script then sources this file,
# measures its variants round by round (interleaved with its baseline, in an
# order that rotates each round), records every run in $BENCH_OUT/raw.tsv and
# adds its rows to $BENCH_OUT/table.md from the medians.  A ratio is the
# median over rounds of (measurement / baseline in the same round), which
# keeps a drift of the machine's speed during the run out of the ratios.
#
# Knobs (environment):
#   BENCH_ROUNDS   runs of each variant (default 3)
#   BENCH_SECS     seconds per timed pgbench / client run (default 5)
#   BENCH_CLIENTS  pgbench clients (default 2 x cores)
#   BENCH_ROWS     rows of the bulk UPDATE in scenario 3 (default 1000000)

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_OUT=${BENCH_OUT:-$BENCH_DIR/out}
ROUNDS=${BENCH_ROUNDS:-3}
SECS=${BENCH_SECS:-5}
CORES=$(nproc)
CLIENTS=${BENCH_CLIENTS:-$((2 * CORES))}
mkdir -p "$BENCH_OUT"

log() {
	echo "[$(date +%T)] $*" >&2
}

die() {
	log "error: $*"
	exit 1
}

# sql [psql args...]: psql that stops at the first error and prints bare values.
sql() {
	psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"
}

# record SCENARIO VARIANT VALUE: one measured run (of round BENCH_ROUND).
record() {
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${BENCH_ROUND:-0}" >>"$BENCH_OUT/raw.tsv"
	log "  $1 $2: $3"
}

# median_of: the median of the numbers on stdin, one a line ("nan" if none).
median_of() {
	sort -g |
		awk '{ a[NR] = $1 }
		END {
			if (NR == 0) { print "nan"; exit }
			m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
			printf "%.6g\n", m
		}'
}

# median SCENARIO VARIANT: median of the recorded runs ("nan" if none).
median() {
	awk -F'\t' -v s="$1" -v v="$2" '$1 == s && $2 == v { print $3 }' \
		"$BENCH_OUT/raw.tsv" 2>/dev/null | median_of
}

# pratio SCENARIO VARIANT BASELINE: median over rounds of VARIANT / BASELINE
# measured in the same round.
pratio() {
	awk -F'\t' -v s="$1" -v a="$2" -v b="$3" '
		$1 == s && $2 == a { x[$4] = $3 }
		$1 == s && $2 == b { y[$4] = $3 }
		END {
			for (r in x) if ((r in y) && y[r] != 0) print x[r] / y[r]
		}' "$BENCH_OUT/raw.tsv" 2>/dev/null | median_of
}

# interleave FN VARIANT...: call "FN VARIANT ROUND" for ROUNDS rounds; the
# order of the variants rotates by one each round, so that no variant is
# always the one that runs first (cold caches) or right after another.
interleave() {
	local fn=$1 round i n
	shift
	local variants=("$@")
	n=${#variants[@]}
	for ((round = 1; round <= ROUNDS; round++)); do
		for ((i = 0; i < n; i++)); do
			BENCH_ROUND=$round "$fn" "${variants[$(((i + round - 1) % n))]}" "$round"
		done
	done
}

# fmt NUMBER: a readable figure (three significant digits, no exponent).
fmt() {
	awk -v x="$1" 'BEGIN {
		if (x == "nan" || x == "") { print "n/a"; exit }
		if (x >= 1000) printf "%.0f\n", x
		else if (x >= 100) printf "%.1f\n", x
		else if (x >= 10) printf "%.2f\n", x
		else printf "%.3f\n", x
	}'
}

# row SCENARIO WHAT VALUE UNIT [BASELINE_NAME BASELINE_VALUE [TARGET [RATIO]]]
#   Add a line to the results table.  With a baseline, the ratio is RATIO
#   (from pratio) or else VALUE / BASELINE_VALUE; TARGET is ">=0.80" or
#   "<=1.05".  Its last column is the scenario's run (BENCH_RUN_DATE, which
#   run.sh sets before each scenario).
row() {
	local scen=$1 what=$2 value=$3 unit=$4 bname=${5:-} bvalue=${6:-} target=${7:-}
	local ratio= met= vs=
	if [ -n "$bname" ]; then
		ratio=$(awk -v r="${8:-$value/$bvalue}" 'BEGIN {
			n = split(r, p, "/"); x = p[1]; y = (n > 1) ? p[2] : 1
			if (x == "nan" || y == "nan" || x == "" || y == 0) print "n/a"
			else printf "%.2f\n", x / y }')
		vs="$bname ($(fmt "$bvalue"))"
	fi
	if [ -n "$target" ] && [ "$ratio" != n/a ]; then
		met=$(awk -v r="$ratio" -v t="$target" 'BEGIN {
			op = substr(t, 1, 2); x = substr(t, 3) + 0
			ok = (op == ">=") ? (r >= x) : (r <= x)
			print ok ? "yes" : "**no**" }')
	elif [ -n "$target" ]; then
		met="**no**"
	fi
	printf '| %s | %s | %s %s | %s | %s | %s | %s | %s |\n' "$scen" "$what" \
		"$(fmt "$value")" "$unit" "$vs" "${ratio:+${ratio}$([ "$ratio" = n/a ] || echo x)}" \
		"${target:+${target:0:2} ${target:2}x}" "$met" "${BENCH_RUN_DATE:-}" >>"$BENCH_OUT/table.md"
}

# row_vs SCENARIO WHAT UNIT VARIANT BASELINE BASELINE_NAME [TARGET]: the row
# of VARIANT's median against BASELINE's, their ratio the median of the
# rounds' ratios (pratio): SCENARIO is the number, the variants' scenario
# "sSCENARIO".
row_vs() {
	local s=s$1
	row "$1" "$2" "$(median "$s" "$4")" "$3" "$6" "$(median "$s" "$5")" "${7:-}" "$(pratio "$s" "$4" "$5")"
}

# note TEXT: a line printed under the table (how a scenario was run).
note() {
	echo "- $*" >>"$BENCH_OUT/notes.md"
}

# pgb SCRIPT [pgbench args...]: run one pgbench script for SECS seconds with
# CLIENTS clients and print its tps.  Prepared statements, no vacuum.
pgb() {
	local script=$1 out
	shift
	out=$(pgbench -n -M prepared -c "$CLIENTS" -j "$CORES" -T "$SECS" \
		-f "$BENCH_DIR/$script" "$@" 2>&1) || {
		echo "$out" | tail -20 >&2
		die "pgbench $script failed"
	}
	# a client that failed (a rejected token) must not pass for a fast run
	if echo "$out" | grep -q 'client [0-9]* aborted'; then
		echo "$out" | grep -m3 -i error >&2
		die "pgbench $script: a client aborted"
	fi
	echo "$out" | awk '/^tps = / { print $3; exit }'
}

# exec_round_trips: PostgreSQL round trips of one fence_exec on an idle
# connection: 2 where libpq has pipeline mode (14 and later; client/pg.c
# sends BEGIN + advance + statement + Sync at once, then COMMIT once the
# lease is checked again), else 4 (BEGIN, fence.advance, the statement,
# COMMIT).
exec_round_trips() {
	local v
	v=$(pkg-config --modversion libpq 2>/dev/null || echo 0)
	[ "${v%%.*}" -ge 14 ] 2>/dev/null && echo 2 || echo 4
}

# elapsed_ms PSQL_SCRIPT: run SQL in one psql session with \timing and print
# the time of its last timed statement in milliseconds.
elapsed_ms() {
	printf '\\timing on\n%s\n' "$1" | psql -X -q -v ON_ERROR_STOP=1 2>&1 |
		awk '/^Time: / { t = $2 } /ERROR/ { err = 1; print > "/dev/stderr" }
			END { if (err || t == "") exit 1; print t }'
}

# backend_cpu_ms WARMUP MEASURED: run the SQL WARMUP and then MEASURED (each
# ending with a semicolon) in one
# psql session and print the CPU time (user + system, in milliseconds, to
# the kernel's clock tick) that the session's backend spent on MEASURED.
# Unlike the elapsed time, it does not grow when other processes share the
# cores, which on a shared machine varies more than a small overhead.
backend_cpu_ms() {
	local stat=$BENCH_OUT/backend_cpu.$$
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<-SQL || return 1
		SELECT pg_backend_pid() AS bench_pid \gset
		\setenv BENCH_PID :bench_pid
		$1
		\! awk '{ print \$14 + \$15 }' /proc/\$BENCH_PID/stat >$stat.0
		$2
		\! awk '{ print \$14 + \$15 }' /proc/\$BENCH_PID/stat >$stat.1
	SQL
	awk -v hz="$(getconf CLK_TCK)" 'NR == FNR { a = $1; next } { printf "%.1f\n", ($1 - a) * 1000 / hz }' \
		"$stat.0" "$stat.1"
	rm -f "$stat.0" "$stat.1"
}

# callgrind CASE... : run bench/callgrind.sh for those cases on
# BENCH_CG_ROWS rows (its own throwaway cluster) and keep its table in
# CALLGRIND_TABLE; cg_instr CASE: that case's instructions per row.
callgrind() {
	CALLGRIND_TABLE=$(bash "$BENCH_DIR/callgrind.sh" "$@") || die "callgrind.sh $* failed"
}
cg_instr() {
	echo "$CALLGRIND_TABLE" | awk -F' *[|] *' -v c="$1" '$2 == c { print $3 }'
}

# short_runs SCENARIO: the round-trip scenarios (4, 7, 17 to 19) measure
# one connection ping-ponging, the figure most exposed to scheduling noise:
# more, shorter runs than the others (ROUNDS + 2 by default, or
# BENCH_S<SCENARIO>_ROUNDS; SECS at most 3).  Sets $port, the Redis port.
short_runs() {
	local knob=BENCH_S$1_ROUNDS
	port=${FENCE_REDIS_URL##*:}
	ROUNDS=${!knob:-$((ROUNDS + 2))}
	SECS=$((SECS < 3 ? SECS : 3))
}

# pgbench_accounts: pgbench's tables at 100000 accounts (pgbench -i, no
# vacuum), in PGDATABASE; sets $accounts and the token the scenarios
# announce, $token.
pgbench_accounts() {
	accounts=100000
	# shellcheck disable=SC2034 # the scenario's, which sources this file
	token=7
	pgbench -i -q -s $((accounts / 100000)) -I dtgvp >/dev/null 2>&1 || die "pgbench -i failed"
}

# pin_beside_redis: the language scenarios (17 to 19) run each client on
# the CPU redis-server is pinned to, so that every variant, C included,
# pays the same hand-offs between the two.  Sets $run, the prefix that
# pins a command there (empty without taskset), $cpu and $redis_pid;
# unpin_redis gives redis-server every CPU back.
pin_beside_redis() {
	redis_pid=$(redis-cli -p "$port" info server | tr -d '\r' | awk -F: '$1 == "process_id" { print $2 }')
	cpu=$((CORES - 1))
	run=
	if command -v taskset >/dev/null && [ -n "$redis_pid" ]; then
		taskset -pc "$cpu" "$redis_pid" >/dev/null
		run="taskset -c $cpu"
	fi
}

unpin_redis() {
	[ -z "$run" ] || taskset -pc "0-$cpu" "$redis_pid" >/dev/null
}

# c_cycles SCENARIO: one run of libfence's own acquire + release cycles in
# C (bench/fence_cycles), the language scenarios' reference, recorded as
# SCENARIO's variant "c".
c_cycles() {
	local out
	out=$($run "$BENCH_DIR/fence_cycles" -t 1 -s "$SECS") || die "fence_cycles failed"
	set -- "$1" $out
	record "$1" c "${2#cycles_per_s=}"
}

# pinned_where: how the pinned runs ran, for a note ("pinned to CPU N
# together with redis-server", or "unpinned (no taskset)").
pinned_where() {
	[ -n "$run" ] && echo "pinned to CPU $cpu together with redis-server" || echo "unpinned (no taskset)"
}

# cycles_variant SCENARIO VARIANT NAME CMD...: one run of a language
# scenario's VARIANT: "c" is libfence in C (c_cycles), any other runs CMD
# (pinned: $run), the program NAME, which prints "cycles_per_s=N".
cycles_variant() {
	local scen=$1 variant=$2 name=$3 out
	shift 3
	case $variant in
	c) c_cycles "$scen" ;;
	*)
		out=$($run "$@") || die "$name $variant failed"
		record "$scen" "$variant" "${out#cycles_per_s=}"
		;;
	esac
}
