#!/usr/bin/env bash
# bench/s21_forget.sh: scenario 21, fence.forget() of the idle marks among
# many, against what finding and deleting them costs without fence.
#
# fence.fences holds BENCH_S21_MARKS marks (default 10M) under 100
# prefixes, every tenth of them not moved for two days (1M idle); the
# others moved just now.  Each variant is one statement in a transaction
# of its own, timed by psql's \timing, rolled back, so that every round
# finds the same marks:
#
#   scan     SELECT count(*) of the idle marks: one pass over the table
#            reading updated_at, which is what finding them costs without
#            an index                                             baseline
#   delete   DELETE of the idle marks, nothing returned: the pass plus
#            the deletions, the least any forget without an index does
#   forget   SELECT fence.forget('1 day'): the deletions, and the floors
#            of their prefixes raised
#
# Between two runs, untimed: a pass over the table (which sets the hint
# bits that a rolled-back deletion leaves to the next reader) and a
# CHECKPOINT, so that each run starts with the table's pages clean.
# Parallel query is off: DELETE has none, and the scan is the baseline of
# one backend's pass.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

marks=${BENCH_S21_MARKS:-10000000}

log "s21: fence.forget of $((marks / 10)) idle marks among $marks"
# the names in the primary key's order, so that the index is built by
# appending; every tenth mark idle
sql >/dev/null <<SQL
DELETE FROM fence.fences WHERE resource LIKE 's21-%';
DELETE FROM fence.floors WHERE prefix LIKE 's21-%';
INSERT INTO fence.fences (resource, token, updated_at)
SELECT pg_catalog.format('s21-%s:%s', lpad((g / ($marks / 100))::text, 3, '0'), lpad(g::text, 9, '0')),
       g + 1,
       CASE WHEN g % 10 = 0 THEN now() - interval '2 days' ELSE now() END
  FROM generate_series(0, $marks - 1) g;
VACUUM ANALYZE fence.fences;
CHECKPOINT;
SQL

idle="updated_at < pg_catalog.now() - interval '1 day'"

settle() {
	sql -c 'SET max_parallel_workers_per_gather = 0' -c 'SELECT count(*) FROM fence.fences' -c 'CHECKPOINT' >/dev/null
}

# timed SQL: the time of SQL (ms) in a transaction rolled back
timed() {
	printf 'SET max_parallel_workers_per_gather = 0;\nBEGIN;\n\\timing on\n%s\n\\timing off\nROLLBACK;\n' "$1" |
		psql -X -q -A -t -v ON_ERROR_STOP=1 2>&1 |
		awk '/^Time: / { t = $2 } /ERROR/ { err = 1; print > "/dev/stderr" }
			/^[0-9]+$/ { n = $1 }
			END { if (err || t == "") exit 1; print t, n }'
}

run_variant() {
	local out
	case $1 in
	scan) out=$(timed "SELECT count(*) FROM fence.fences WHERE $idle;") ;;
	delete) out=$(timed "DELETE FROM fence.fences WHERE $idle;") ;;
	forget) out=$(timed "SELECT fence.forget('1 day');") ;;
	esac || die "s21 $1 failed"
	set -- "$1" $out
	[ "$1" = delete ] || [ "${3:-}" = $((marks / 10)) ] || die "s21 $1: ${3:-nothing} marks, expected $((marks / 10))"
	record s21 "$1" "$2"
	settle
}

settle
interleave run_variant scan delete forget

scan=$(median s21 scan)
row 21 "pass over $marks marks counting the $((marks / 10)) idle ones (no index on updated_at)" "$scan" ms
row 21 "DELETE of the idle marks alone, vs the pass" "$(median s21 delete)" ms scan "$scan" "" "$(pratio s21 delete scan)"
row 21 "fence.forget of the idle marks (deletions and floors), vs the pass" "$(median s21 forget)" ms scan "$scan" "<=1.20" "$(pratio s21 forget scan)"
row 21 "fence.forget vs the DELETE alone" "$(median s21 forget)" ms delete "$(median s21 delete)" "" "$(pratio s21 forget delete)"

sql -c "DELETE FROM fence.fences WHERE resource LIKE 's21-%'" -c 'VACUUM fence.fences' >/dev/null

note "Scenario 21: fence.fences with $marks marks (names s21-NNN:NNNNNNNNN, 100 prefixes, inserted in key order), every tenth not moved for two days; each variant one statement in a transaction rolled back, timed by psql's \\timing, max_parallel_workers_per_gather = 0: scan is SELECT count(*) ... WHERE updated_at < now() - '1 day', delete the DELETE with that condition, forget SELECT fence.forget('1 day'); between runs, untimed, a pass over the table (hint bits) and a CHECKPOINT; $ROUNDS rounds; ratio is time / scan time of the same round (lower is better)."
