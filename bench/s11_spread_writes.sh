#!/usr/bin/env bash
# bench/s11_spread_writes.sh: scenario 11, fenced writes spread over
# BENCH_S11_RESOURCES resources (default 1M), whose fence rows no longer
# sit in a few hot pages, and what churn leaves in fence.fences:
#
#   plain    UPDATE pgbench_accounts ... (autocommit)           baseline
#   one      fence.fenced_update under one resource per client, as in
#            scenario 1
#   spread   fence.fenced_update under a resource drawn at random from
#            all of them, every mark announced at the same token before
#            the runs (the check locks the row and leaves it)
#   churn    the same over another set of as many resources, each write
#            presenting a new, higher token: every write moves its
#            resource's mark (updates its fence row)
#
# After the runs: fence.fences' primary key, in bytes per row, against a
# fresh copy of it (a new index over the same rows), after VACUUM.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

resources=${BENCH_S11_RESOURCES:-1000000}

log "s11: fenced writes spread over $resources resources"
pgbench_accounts
sql >/dev/null <<SQL
DELETE FROM fence.fences WHERE resource LIKE 'spread:%' OR resource LIKE 'churn:%';
VACUUM fence.fences;
SELECT fence.advance('bench:' || c, $token) FROM generate_series(0, $CLIENTS - 1) c;
SELECT count(fence.advance('spread:' || r, $token)) FROM generate_series(1, $resources) r;
SELECT count(fence.advance('churn:' || r, 1)) FROM generate_series(1, $resources) r;
VACUUM ANALYZE fence.fences;
CHECKPOINT;
SQL

run_variant() {
	case $1 in
	plain) record s11 plain "$(pgb update_plain.pgbench -D accounts=$accounts)" ;;
	one) record s11 one "$(pgb update_fenced.pgbench -D accounts=$accounts -D token=$token)" ;;
	spread) record s11 spread "$(pgb update_spread.pgbench -D accounts=$accounts -D resources="$resources" -D token=$token)" ;;
	churn) record s11 churn "$(pgb update_churn.pgbench -D accounts=$accounts -D resources="$resources" -D clients="$CLIENTS")" ;;
	esac
}

interleave run_variant plain one spread churn

# what the churn left: the index per row, against a new index over the same rows
sql -c "VACUUM fence.fences" >/dev/null
read -r rows heap idx fresh < <(sql -F ' ' <<SQL
CREATE TEMP TABLE fences_copy AS SELECT * FROM fence.fences;
CREATE INDEX ON fences_copy (resource);
SELECT (SELECT count(*) FROM fence.fences),
       pg_relation_size('fence.fences'),
       pg_relation_size('fence.fences_pkey'),
       pg_relation_size(pg_catalog.regclass((SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = 'fences_copy'::regclass)));
SQL
)

plain=$(median s11 plain)
row 11 "plain autocommit UPDATE (pgbench)" "$plain" tx/s
row 11 "fence.fenced_update, one resource per client, vs plain" "$(median s11 one)" tx/s plain "$plain" "" "$(pratio s11 one plain)"
row 11 "fence.fenced_update spread over $resources resources, vs plain" "$(median s11 spread)" tx/s plain "$plain" ">=0.80" "$(pratio s11 spread plain)"
row 11 "the same, every write moving its resource's mark, vs plain" "$(median s11 churn)" tx/s plain "$plain" "" "$(pratio s11 churn plain)"
row 11 "fence.fences primary key after the runs, bytes per row, vs a fresh index" \
	"$(awk -v i="$idx" -v n="$rows" 'BEGIN { printf "%.1f", i / n }')" bytes "fresh" \
	"$(awk -v i="$fresh" -v n="$rows" 'BEGIN { printf "%.1f", i / n }')"
row 11 "fence.fences after the runs, table bytes per row (fillfactor 70)" \
	"$(awk -v h="$heap" -v n="$rows" 'BEGIN { printf "%.1f", h / n }')" bytes
note "Scenario 11: pgbench -M prepared, $CLIENTS clients, ${SECS}s per run, $ROUNDS runs each; one: as scenario 1; spread: fence.fenced_update('spread:' || random(1, $resources), T, 'UPDATE pgbench_accounts ...'), every mark announced before the runs (the check takes the row lock and moves nothing); churn: another $resources resources, announced at token 1; each client draws from its own share of them and presents the clock in microseconds as its token, so every write moves a mark; fence.fences as the extension makes it (fillfactor 70); the index figure after the runs and a VACUUM, against CREATE INDEX over a copy of the rows; $rows rows."
