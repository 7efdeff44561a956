#!/usr/bin/env bash
# bench/s9_ddl_partitions.sh: scenario 9, what fence's event trigger costs
# DDL on tables it does not protect: a partitioned table of
# BENCH_S9_PARTS partitions (default 1000), nothing of it protected, and a
# loop of DDL on it (DETACH and ATTACH PARTITION, RENAME COLUMN there and
# back, CREATE and DROP a trigger on one partition) run in
#
#   nofence   a database without the extension                    baseline
#   fence     a database with the extension and nothing protected
#   guarded   the same, with a protected table elsewhere in the database,
#             so that the event trigger cannot take its quick exit
set -euo pipefail
. "$(dirname "$0")/lib.sh"

parts=${BENCH_S9_PARTS:-1000}
cycles=${BENCH_S9_CYCLES:-20}

log "s9: DDL on a $parts-partition unprotected table, with and without fence"
for db in s9_nofence s9_fence s9_guarded; do
	sql -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
	sql -d "$db" >/dev/null <<SQL
CREATE TABLE parted (id int, v int) PARTITION BY RANGE (id);
DO \$\$ BEGIN
	FOR i IN 1..$parts LOOP
		EXECUTE format('CREATE TABLE parted_%s PARTITION OF parted FOR VALUES FROM (%s) TO (%s)', i, i, i + 1);
	END LOOP;
END \$\$;
CREATE FUNCTION nothing() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END';
SQL
done
sql -d s9_fence -c "CREATE EXTENSION fence" >/dev/null
sql -d s9_guarded -c "CREATE EXTENSION fence" -c "CREATE TABLE elsewhere (id int)" \
	-c "SELECT fence.protect('elsewhere', 'elsewhere')" >/dev/null

ddl="DO \$\$ BEGIN
	FOR i IN 1..$cycles LOOP
		ALTER TABLE parted DETACH PARTITION parted_1;
		ALTER TABLE parted ATTACH PARTITION parted_1 FOR VALUES FROM (1) TO (2);
		ALTER TABLE parted RENAME COLUMN v TO w;
		ALTER TABLE parted RENAME COLUMN w TO v;
		CREATE TRIGGER t BEFORE INSERT ON parted_2 FOR EACH ROW EXECUTE FUNCTION nothing();
		DROP TRIGGER t ON parted_2;
	END LOOP;
END \$\$;"

# Each run is one session that runs the loop twice and measures the
# second, as the CPU time of its backend: the first loads the catalog
# entries of the 1000 partitions into the new backend's caches, which costs
# the same with or without fence, and the elapsed time on shared cores
# varies more than what fence adds.
run_variant() {
	local ms
	ms=$(PGDATABASE=s9_$1 backend_cpu_ms "$ddl" "$ddl") || die "s9 $1 failed"
	record s9 "$1" "$ms"
}

interleave run_variant nofence fence guarded

nofence=$(median s9 nofence)
row 9 "$cycles cycles of DDL on a $parts-partition table, no fence (backend CPU)" "$nofence" ms
row 9 "the same with fence installed, nothing protected, vs no fence" \
	"$(median s9 fence)" ms "no fence" "$nofence" "<=1.10" "$(pratio s9 fence nofence)"
row 9 "the same with a protected table elsewhere in the database, vs no fence" \
	"$(median s9 guarded)" ms "no fence" "$nofence" "<=1.10" "$(pratio s9 guarded nofence)"
note "Scenario 9: one DO block of $cycles cycles of ALTER TABLE ... DETACH PARTITION, ATTACH PARTITION, RENAME COLUMN twice (recursing to the $parts partitions), CREATE TRIGGER and DROP TRIGGER on one partition, run twice in one session, the second time measured as the CPU time of the backend (user + system, from /proc; warm caches); in a database without fence, with fence and nothing protected (the event trigger's quick exit), and with one protected table elsewhere; ratio is CPU time / CPU time without fence (lower is better)."
