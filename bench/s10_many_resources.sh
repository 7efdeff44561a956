#!/usr/bin/env bash
# bench/s10_many_resources.sh: scenario 10, one transaction over many
# resources, and what a resource costs in PostgreSQL and in Redis.
#
# A table of BENCH_S10_KEYS rows (default 1M) protected in key mode, one
# resource per row; each variant is one transaction, timed whole (psql's
# \timing of BEGIN ... COMMIT, the registry's size read in between,
# untimed):
#
#   plain   UPDATE of every row of the same table unprotected     baseline
#   new     fence.advance(key, T) for every key (no marks yet: each one
#           inserts its fence row), then the UPDATE of every row
#   moved   the same with the marks there, T moving each one
#
# "new" and "moved" report the registry's memory per resource (its memory
# context, read in the transaction after the advances), and the advances
# and the UPDATE apart.  Then, once, BENCH_S10_BIG resources (default 10M)
# advanced in one transaction without a table, for the registry's memory
# and the backend's peak resident memory at that size (rolled back).
#
# Redis: MEMORY USAGE of the lock and token keys of a resource that `fence
# acquire` took, and used_memory over BENCH_S10_REDIS resources (default
# 1000) acquired by as many `fence acquire` commands.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

keys=${BENCH_S10_KEYS:-1000000}
big=${BENCH_S10_BIG:-10000000}
redis_n=${BENCH_S10_REDIS:-1000}
token=100

log "s10: one transaction over $keys resources"
sql >/dev/null <<SQL
CREATE SCHEMA IF NOT EXISTS bench;
DROP TABLE IF EXISTS bench.keyed, bench.unkeyed;
CREATE TABLE bench.keyed (id int PRIMARY KEY, val int NOT NULL) WITH (autovacuum_enabled = off);
CREATE TABLE bench.unkeyed (id int PRIMARY KEY, val int NOT NULL) WITH (autovacuum_enabled = off);
INSERT INTO bench.keyed SELECT g, 0 FROM generate_series(1, $keys) g;
INSERT INTO bench.unkeyed SELECT g, 0 FROM generate_series(1, $keys) g;
-- the first UPDATE doubles a table, later ones reuse the space
UPDATE bench.keyed SET val = val + 1;
UPDATE bench.unkeyed SET val = val + 1;
SELECT fence.protect('bench.keyed', 'bk', key_column => 'id');
SQL

forget_marks() {
	sql -c "DELETE FROM fence.fences WHERE resource LIKE 'bk:%'" -c "VACUUM fence.fences" >/dev/null
}

settle() {
	sql -c 'VACUUM bench.keyed' -c 'VACUUM bench.unkeyed' -c 'CHECKPOINT' >/dev/null
}

# transaction ADVANCE_SQL UPDATE_SQL: run BEGIN, the advances (if any), the
# registry's size, the UPDATE and COMMIT in one session; print the times
# of the advances and of the UPDATE (ms), the whole transaction's, and the
# registry's bytes.
transaction() {
	printf '\\timing on\nBEGIN;\n%s\n\\timing off\nSELECT '"'"'registry'"'"', coalesce(sum(total_bytes), 0) FROM pg_backend_memory_contexts WHERE name = '"'"'fence registry'"'"';\n\\timing on\n%s\nCOMMIT;\n' "$1" "$2" |
		psql -X -q -A -t -F ' ' -v ON_ERROR_STOP=1 2>&1 |
		awk '/^Time: / { t[++n] = $2 } /^registry / { bytes = $2 } /ERROR/ { err = 1; print > "/dev/stderr" }
			END {
				if (err) exit 1
				# BEGIN, [advances,] UPDATE, COMMIT
				adv = (n == 4) ? t[2] : 0; upd = t[n - 1]
				total = 0; for (i = 1; i <= n; i++) total += t[i]
				print adv, upd, total, bytes + 0
			}'
}

advances="SELECT count(fence.advance(fence.key_resource('bk', g), :token)) FROM generate_series(1, $keys) g;"

run_variant() {
	local out
	case $1 in
	plain)
		out=$(transaction "" "UPDATE bench.unkeyed SET val = val + 1;") ;;
	new)
		forget_marks
		out=$(transaction "${advances/:token/$token}" "UPDATE bench.keyed SET val = val + 1;") ;;
	moved)
		token=$((token + 1))
		out=$(transaction "${advances/:token/$token}" "UPDATE bench.keyed SET val = val + 1;") ;;
	esac || die "s10 $1 failed"
	settle
	set -- "$1" $out
	record s10 "$1" "$4"
	record s10 "$1.advances" "$2"
	record s10 "$1.update" "$3"
	[ "$1" = plain ] || record s10 "$1.bytes" "$(awk -v b="$5" -v n="$keys" 'BEGIN { printf "%.2f", b / n }')"
}

settle
# "moved" needs the marks that "new" makes: new before moved in each round
interleave run_variant plain new moved

plain=$(median s10 plain)
row 10 "transaction: UPDATE of $keys rows, unprotected" "$plain" ms
row 10 "transaction: fence.advance of $keys new resources + UPDATE of their key-mode rows, vs plain" \
	"$(median s10 new)" ms plain "$plain" "<=2.50" "$(pratio s10 new plain)"
row 10 "  of which the advances (each inserts a fence row), vs plain" \
	"$(median s10 new.advances)" ms plain "$plain" "" "$(pratio s10 new.advances plain)"
row 10 "  of which the guarded UPDATE, vs plain" \
	"$(median s10 new.update)" ms plain "$plain" "" "$(pratio s10 new.update plain)"
row 10 "transaction: fence.advance moving $keys marks + UPDATE of their rows, vs plain" \
	"$(median s10 moved)" ms plain "$plain" "<=2.50" "$(pratio s10 moved plain)"
row 10 "  of which the advances (each updates a fence row), vs plain" \
	"$(median s10 moved.advances)" ms plain "$plain" "" "$(pratio s10 moved.advances plain)"
row 10 "registry memory per resource, $keys resources" "$(median s10 new.bytes)" "bytes" \
	"32 bytes" 32 "<=1.00"

# The same work counted in the server's instructions (bench/callgrind.sh),
# which other tenants of the machine do not move: per resource, its
# fence.advance plus its row's guarded UPDATE, against an unprotected row.
cg_rows=${BENCH_S10_CG_ROWS:-50000}
log "s10: instructions under callgrind ($cg_rows resources)"
BENCH_CG_ROWS=$cg_rows callgrind bulk_none advance_new advance_moved bulk_key
cg_none=$(cg_instr bulk_none)
row 10 "UPDATE of an unprotected row: server instructions (callgrind)" "$cg_none" instr
row 10 "fence.advance of a new resource + its key-mode row's UPDATE, instructions, vs unprotected row" \
	"$(($(cg_instr advance_new) + $(cg_instr bulk_key)))" instr none "$cg_none" "<=2.50"
row 10 "fence.advance moving a mark + its key-mode row's UPDATE, instructions, vs unprotected row" \
	"$(($(cg_instr advance_moved) + $(cg_instr bulk_key)))" instr none "$cg_none" "<=2.50"
row 10 "  of which the guarded UPDATE of a row whose token was announced, instructions, vs unprotected row" \
	"$(cg_instr bulk_key)" instr none "$cg_none"

# The big one: the registry's size and the backend's peak memory.
log "s10: $big resources in one transaction (rolled back)"
big_out=$(psql -X -q -A -t -F ' ' -v ON_ERROR_STOP=1 <<SQL 2>&1
SELECT pg_backend_pid() AS pid \gset
\setenv S10_PID :pid
BEGIN;
\timing on
SELECT count(fence.advance('big:' || g, 1)) FROM generate_series(1, $big) g;
\timing off
SELECT 'registry', sum(total_bytes) FROM pg_backend_memory_contexts WHERE name = 'fence registry';
\! awk '/^VmHWM/ { print "hwm", \$2 }' /proc/\$S10_PID/status
ROLLBACK;
SQL
) || die "s10 big: $big_out"
big_ms=$(echo "$big_out" | awk '/^Time: / { print $2 }')
big_bytes=$(echo "$big_out" | awk '/^registry / { print $2 }')
big_hwm=$(echo "$big_out" | awk '/^hwm / { print $2 }')
sql -c "VACUUM fence.fences" >/dev/null
record s10 big.bytes "$(awk -v b="$big_bytes" -v n="$big" 'BEGIN { printf "%.2f", b / n }')"
row 10 "registry memory per resource, $big resources in one transaction" \
	"$(median s10 big.bytes)" bytes "32 bytes" 32 "<=1.00"
row 10 "the same: backend's peak resident memory (VmHWM; shared buffers it touched included)" \
	"$(awk -v k="$big_hwm" 'BEGIN { printf "%.0f", k / 1024 }')" MiB
row 10 "the same: fence.advance per new resource" \
	"$(awk -v t="$big_ms" -v n="$big" 'BEGIN { printf "%.2f", t * 1000 / n }')" µs

# Redis: what the keys of a resource cost.  used_memory is read after
# $redis_n resources and again after $redis_n more, so that what the first
# ones brought once (the scripts, the clients' buffers) is left out.
log "s10: Redis keys of $((2 * redis_n)) resources"
rcli() {
	redis-cli -u "$FENCE_REDIS_URL" "$@"
}
used_memory() {
	rcli INFO memory | awk -F: '/^used_memory:/ { print $2 + 0 }'
}
acquire_range() {
	seq "$1" "$2" | xargs -P "$CORES" -I{} "$BENCH_DIR/../client/fence" acquire "bench:redis:{}" --ttl 10m >/dev/null ||
		die "s10: fence acquire failed"
}
rcli FLUSHALL >/dev/null
acquire_range 1 "$redis_n"
before=$(used_memory)
acquire_range $((redis_n + 1)) $((2 * redis_n))
after=$(used_memory)
[ "$(rcli DBSIZE)" -eq $((4 * redis_n)) ] || die "s10: expected $((4 * redis_n)) keys, found $(rcli DBSIZE)"
lock_bytes=$(rcli MEMORY USAGE 'fence:{bench:redis:1}:lock')
token_bytes=$(rcli MEMORY USAGE 'fence:{bench:redis:1}:token')
rcli FLUSHALL >/dev/null
row 10 "Redis: MEMORY USAGE of a held resource's lock key / token key" "$lock_bytes" "bytes / $token_bytes bytes"
row 10 "Redis: used_memory per resource held (lock and token key), $redis_n more resources" \
	"$(awk -v a="$after" -v b="$before" -v n="$redis_n" 'BEGIN { printf "%.1f", (a - b) / n }')" bytes

note "Scenario 10: one transaction over $keys resources of a table (id int primary key, val int) protected in key mode, one resource per row: BEGIN, SELECT count(fence.advance(fence.key_resource('bk', g), T)) FROM generate_series(1, $keys) g, UPDATE of every row, COMMIT, timed whole by psql's \\timing (new: no marks before, each advance inserts a fence row; moved: the marks there, T moving each); plain: the same UPDATE on an unprotected copy in a transaction of its own; VACUUM and CHECKPOINT between runs, untimed; $ROUNDS rounds; ratio is time / plain time (lower is better). Registry: the memory context 'fence registry' (pg_backend_memory_contexts) after the advances, per resource. Instructions: bench/callgrind.sh's advance_new, advance_moved (fence.advance of $cg_rows resources in one transaction, per resource), bulk_key and bulk_none (one UPDATE per row, of a table protected in key mode with every key announced in the same transaction, and unprotected). The $big-resource transaction is run once, without a table, and rolled back. Redis: \`fence acquire bench:redis:N --ttl 10m\` for N = 1 to $((2 * redis_n)) (a lock and a token key each; the waiting room's keys exist only while someone waits), used_memory after $redis_n and after $((2 * redis_n)); MEMORY USAGE with its default sampling."
