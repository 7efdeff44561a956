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

run_variant() {
	GOMAXPROCS=$CORES cycles_variant s19 "$1" go_cycles "$BENCH_OUT/go_cycles" "$1" "$SECS"
}

interleave run_variant c pgfence resp pgfence-heartbeat pgfence-wait
unpin_redis

row_vs 19 "Go acquire+release cycles (pgfence, 1 connection) vs libfence in C" cycles/s pgfence c "C" ">=0.70"
row_vs 19 "Go acquire+release cycles (pgfence) vs hand-written SET NX + compare-and-delete in Go" cycles/s pgfence resp "SET NX loop" ">=1.00"
row_vs 19 "Go cycles with the heartbeat thread (the default) vs without" cycles/s pgfence-heartbeat pgfence "no heartbeat"
row_vs 19 "Go cycles with a context deadline and a Wait (lease free) vs a background context" cycles/s pgfence-wait pgfence "background"
note "Scenario 19: a Go cycle is \`client.Acquire(ctx, r, Options{NoHeartbeat: true})\` and \`Release()\` (bench/go_cycles, $(go version | awk '{ print $3 }')), a C cycle fence_acquire + fence_release (bench/fence_cycles -t 1), a hand-written cycle SET key RANDOM NX PX 10000 and an EVALSHA of a compare-and-delete script over a minimal RESP client in Go on one TCP connection (TCP_NODELAY, buffered, crypto/rand values as redsync makes them); ${SECS}s per run, each $(pinned_where), the Go ones with GOMAXPROCS=$CORES. A pgfence acquire is one EVALSHA that also counts the token (SET NX PX + INCR + GET), where the hand-written SET gives no token. With the heartbeat, each lease also starts a thread with a Redis connection of its own and stops it. With a deadline and a Wait: each Acquire with \`context.WithTimeout\` (5 s) and \`Options{Wait: time.Second}\` on the free lease."
