#!/usr/bin/env bash
# bench/s19_go.sh: scenario 19, acquire + release cycles per second from Go
# through the pgfence package (go/, libfence through cgo) against libfence
# in C (bench/fence_cycles -t 1) and against a hand-written SET NX PX plus
# Lua compare-and-delete loop in Go over a minimal RESP client (what a Go
# program writes without a lock library; no module can be fetched here),
# one connection each, in the same run on the same Redis:
#
#   pgfence (no heartbeat)  vs  fence_cycles -t 1     target >= 0.7x
#   pgfence (no heartbeat)  vs  SET NX + CAS-delete   target ahead (>= 1.0x)
#   pgfence with its heartbeat thread (the default), for reference
#   pgfence with a context of a deadline and a Wait (a service's call on a
#   free lease), for reference: watching a context that no wait needs
#   should cost nothing
#
# A cycle is two round trips for each.  As in scenarios 4 and 17, every
# variant runs pinned to one CPU together with redis-server.  Go sizes its
# scheduler (GOMAXPROCS) from the CPUs a process may run on, so pinned it
# would run with one P, which no Go program on this machine has: there a
# cgo call or a read that blocks past sysmon's 20 us tick has its P taken
# and handed to a spinning thread, every time (several context switches per
# round trip).  Both Go variants run with GOMAXPROCS at the machine's
# cores, as they would unpinned.
# bench/go_cycles is a module of its own that requires pgfence by a
# replace directive (as docs/go.md tells a user to), built offline.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

short_runs 19

log "s19: Go (pgfence) cycles vs libfence in C vs SET NX + compare-and-delete in Go"
command -v go >/dev/null || die "s19 needs Go (golang-go)"
"$BENCH_DIR/../go/tree-pkgconfig.sh" "$BENCH_OUT/go-pkgconfig"
(cd "$BENCH_DIR/go_cycles" && PKG_CONFIG_PATH=$BENCH_OUT/go-pkgconfig GOPROXY=off GOFLAGS= \
	go build -o "$BENCH_OUT/go_cycles" .) || die "s19: go build failed"

pin_beside_redis

# redis_cpu_s: redis-server's CPU seconds so far (user + system)
redis_cpu_s() {
	redis-cli -p "$port" info cpu | tr -d '\r' |
		awk -F: '$1 == "used_cpu_sys" || $1 == "used_cpu_user" { s += $2 } END { printf "%.6f\n", s }'
}

# run_variant VARIANT: one run; records its cycles per second, and as
# VARIANT-cpu the CPU microseconds a cycle cost the client process (every
# thread, /usr/bin/time's over the process: its start and connect are well
# under a microsecond per cycle) and redis-server together, which waiting
# for a CPU that other work holds does not inflate (as in scenario 18).
run_variant() {
	local v=$1 out rate n cpu r0 r1
	r0=$(redis_cpu_s)
	case $v in
	c) out=$(/usr/bin/time -f 'cpu_s=%U+%S' -o "$BENCH_OUT/s19.time" \
		$run "$BENCH_DIR/fence_cycles" -t 1 -s "$SECS") || die "fence_cycles failed" ;;
	*) out=$(GOMAXPROCS=$CORES /usr/bin/time -f 'cpu_s=%U+%S' -o "$BENCH_OUT/s19.time" \
		$run "$BENCH_OUT/go_cycles" "$v" "$SECS") || die "go_cycles $v failed" ;;
	esac
	r1=$(redis_cpu_s)
	rate=${out%% *}
	rate=${rate#cycles_per_s=}
	n=$(awk -v r="$rate" -v s="$SECS" 'BEGIN { printf "%d\n", r * s }')
	cpu=$(awk -F'[=+]' -v n="$n" '/^cpu_s=/ { printf "%.1f\n", ($2 + $3) * 1e6 / n }' "$BENCH_OUT/s19.time")
	record s19 "$v" "$rate"
	record s19 "$v-cpu" "$(awk -v c="$cpu" -v a="$r0" -v b="$r1" -v n="$n" 'BEGIN { printf "%.1f\n", c + (b - a) * 1e6 / n }')"
}

interleave run_variant c pgfence resp pgfence-heartbeat pgfence-wait
unpin_redis

row_vs 19 "Go acquire+release cycles (pgfence, 1 connection) vs libfence in C" cycles/s pgfence c "C" ">=0.70"
row_vs 19 "Go acquire+release cycles (pgfence) vs hand-written SET NX + compare-and-delete in Go" cycles/s pgfence resp "SET NX loop" ">=1.00"
row_vs 19 "Go cycles with the heartbeat thread (the default) vs without" cycles/s pgfence-heartbeat pgfence "no heartbeat"
row_vs 19 "Go cycles with a context deadline and a Wait (lease free) vs a background context" cycles/s pgfence-wait pgfence "background"
row 19 "Go CPU per cycle (client + redis-server), pgfence vs libfence in C" \
	"$(median s19 pgfence-cpu)" "us/cycle" "C" "$(median s19 c-cpu)" "" "$(pratio s19 c-cpu pgfence-cpu)"
row 19 "Go CPU per cycle, pgfence vs hand-written SET NX + compare-and-delete in Go" \
	"$(median s19 pgfence-cpu)" "us/cycle" "SET NX loop" "$(median s19 resp-cpu)" "" "$(pratio s19 resp-cpu pgfence-cpu)"
note "Scenario 19: a Go cycle is \`client.Acquire(ctx, r, Options{NoHeartbeat: true})\` and \`Release()\` (bench/go_cycles, $(go version | awk '{ print $3 }')), a C cycle fence_acquire + fence_release (bench/fence_cycles -t 1), a hand-written cycle SET key RANDOM NX PX 10000 and an EVALSHA of a compare-and-delete script over a minimal RESP client in Go on one TCP connection (TCP_NODELAY, buffered, crypto/rand values as redsync makes them); ${SECS}s per run, each $(pinned_where), the Go ones with GOMAXPROCS=$CORES. A pgfence acquire is one EVALSHA that also counts the token (SET NX PX + INCR + GET), where the hand-written SET gives no token. With the heartbeat, each lease also starts a thread with a Redis connection of its own and stops it. With a deadline and a Wait: each Acquire with \`context.WithTimeout\` (5 s) and \`Options{Wait: time.Second}\` on the free lease. CPU per cycle: the client process's user + system time (every thread, /usr/bin/time) and redis-server's (INFO cpu) over the run, per cycle; its ratio is the baseline's CPU per cycle over the variant's, the rate ratio on a CPU that does nothing else, which the load of other work on the machine does not move as it moves rates."
