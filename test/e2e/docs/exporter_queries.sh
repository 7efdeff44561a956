#!/usr/bin/env bash
# exporter_queries: the postgres_exporter queries over fence.stats in
# docs/operating.md, and its alert rules, work against a real server and
# a real exporter.
#
# Must hold: after one refusal of each kind (LF001, LF002, LF003) on a
# resource, each query of docs/operating.md's YAML, run as a role that
# has only pg_monitor, returns exactly the columns its "metrics" name, a text for
# each LABEL and a number (never NULL) for each COUNTER and GAUGE, with
# the counts of those refusals; postgres_exporter (Debian's, unpacked by
# deps.sh), started as docs/operating.md says (--auto-discover-databases,
# --include-databases) and loaded with that YAML, serves them as
# pg_fence_stale{datname=...,resource=...} and pg_fence_total_*, for the
# database of its connection string and for a second database, where a
# stale token was refused twice; and every metric its alert rules name is
# among those it serves.
#
# postgres_exporter is Debian's binary, fetched with "apt-get download"
# and unpacked into $FENCE_EXPORTER_CACHE (default
# ~/.cache/pgfence/postgres_exporter) the first time: installing the
# package would start a system service.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init exporter_queries
cache=${FENCE_EXPORTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pgfence/postgres_exporter}
EXPORTER=$cache/usr/bin/prometheus-postgres-exporter
if [ ! -x "$EXPORTER" ]; then
	mkdir -p "$WORK/deb" "$cache"
	chmod 755 "$WORK/deb"
	(cd "$WORK/deb" && apt-get download -qq prometheus-postgres-exporter) >"$WORK/download.log" 2>&1 &&
		dpkg-deb -x "$WORK"/deb/prometheus-postgres-exporter_*.deb "$cache" ||
		{ cat "$WORK/download.log"; fail "could not fetch prometheus-postgres-exporter into $cache"; }
	say "unpacked $(dpkg-deb -f "$WORK"/deb/*.deb Package Version | xargs) into $cache"
fi

# the blocks that follow docs/operating.md's markers
doc_block() {
	awk -v marker="<!-- $1 -->" '
		$0 == marker { found = 1; next }
		found == 1 && /^```/ { found = 2; next }
		found == 2 && /^```/ { exit }
		found == 2 { print }' "$TOP/docs/operating.md"
}
doc_block "postgres_exporter queries" >"$WORK/queries.yaml"
doc_block "alert rules" >"$WORK/alerts.yaml"
[ -s "$WORK/queries.yaml" ] || fail "docs/operating.md has no postgres_exporter queries block"
[ -s "$WORK/alerts.yaml" ] || fail "docs/operating.md has no alert rules block"

# fence.stats needs the library preloaded: the shared server does, a
# server of our own (the test run by itself) must too
if [ "$(sql -c "SHOW shared_preload_libraries")" != fence ]; then
	pg_start -c shared_preload_libraries=fence
	sql -c "CREATE EXTENSION fence"
fi

# one refusal of each kind for resource e2e:exp
r=e2e:exp
db2=fence_exp2_$$
drop_all() {
	dropdb --if-exists "$db2"
	sql -c "DROP TABLE IF EXISTS exp_stock" -c "DROP ROLE IF EXISTS fence_exporter" \
		-c "DELETE FROM fence.fences WHERE resource = '$r'"
}
E2E_ON_EXIT=drop_all
sql >/dev/null <<-SQL
	SET client_min_messages = warning;
	DROP TABLE IF EXISTS exp_stock;
	DROP ROLE IF EXISTS fence_exporter;
	CREATE ROLE fence_exporter LOGIN IN ROLE pg_monitor;
	CREATE TABLE exp_stock (id int PRIMARY KEY, qty int NOT NULL);
	INSERT INTO exp_stock VALUES (1, 10);
	SELECT fence.protect('exp_stock', '$r');
	SELECT fence.advance('$r', 5);
SQL
[ "$(sqlstate -c "SELECT fence.advance('$r', 4)")" = LF001 ] || fail "stale advance not refused"
[ "$(sqlstate -c "UPDATE exp_stock SET qty = 9")" = LF002 ] || fail "write without a token not refused"
[ "$(sqlstate -c "SELECT fence.advance('$r', 0)")" = LF003 ] || fail "token 0 not refused"
say "refused a stale, a missing and an invalid token for $r"
# a second database: two stale tokens for the same resource name
createdb -T template0 "$db2"
sql -d "$db2" -c "CREATE EXTENSION fence" -c "SELECT fence.advance('$r', 5)" >/dev/null
for t in 3 4; do
	[ "$(sqlstate -d "$db2" -c "SELECT fence.advance('$r', $t)")" = LF001 ] || fail "stale advance not refused in $db2"
done

# each query, as the exporter's role, against what the YAML declares
PGUSER=fence_exporter "$E2E_PY" - "$WORK/queries.yaml" "$r" <<'PY' || fail "a query does not give what its metrics declare"
import sys, yaml, psycopg2
from decimal import Decimal

queries = yaml.safe_load(open(sys.argv[1]))
resource = sys.argv[2]
conn = psycopg2.connect("")
conn.autocommit = True
want = {"stale": 1, "missing": 1, "invalid": 1}
bad = 0
for name, q in queries.items():
    metrics = [(col, spec["usage"]) for m in q["metrics"] for col, spec in m.items()]
    cur = conn.cursor()
    cur.execute(q["query"])
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    if cols != [c for c, _ in metrics]:
        print("%s: columns %s, metrics %s" % (name, cols, [c for c, _ in metrics])); bad += 1
    if not rows:
        print("%s: no rows" % name); bad += 1
    for row in rows:
        for (col, usage), value in zip(metrics, row):
            if usage == "LABEL":
                ok = isinstance(value, str)
            elif usage in ("COUNTER", "GAUGE"):
                ok = isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)
            else:
                ok = False
            if not ok:
                print("%s: %s (%s) is %r" % (name, col, usage, value)); bad += 1
    labelled = "resource" in cols
    for row in rows:
        d = dict(zip(cols, row))
        if labelled and d["resource"] != resource:
            continue
        for col, n in want.items():
            if (d[col] != n) if labelled else (d[col] < n):
                print("%s: %s is %s, expected %s%s" % (name, col, d[col], "" if labelled else ">= ", n)); bad += 1
        if d["accepted"] < 1:
            print("%s: accepted is %s" % (name, d["accepted"])); bad += 1
    if labelled and not any(r[cols.index("resource")] == resource for r in rows):
        print("%s: no row for %s" % (name, resource)); bad += 1
    print("%s: %d rows, columns %s" % (name, len(rows), ", ".join(cols)))
sys.exit(1 if bad else 0)
PY

# the exporter itself, on a spare port, with only these queries; an
# exporter before 0.9 (bullseye's 0.8) has no --include-databases, and
# docs/operating.md says to name every other database with
# --exclude-databases there
port=$(spare_port)
databases=--include-databases="$PGDATABASE,$db2"
dsn="host=$PGHOST port=$PGPORT user=fence_exporter dbname=$PGDATABASE sslmode=disable"
if ! "$EXPORTER" --help 2>&1 | grep -q -- --include-databases; then
	grep -q -- '--exclude-databases' "$TOP/docs/operating.md" ||
		fail "docs/operating.md does not say what to do with an exporter that has no --include-databases"
	databases=--exclude-databases=$(sql -c "SELECT string_agg(datname, ',') FROM pg_database
		WHERE datname NOT IN ('$PGDATABASE', '$db2')")
	# and it discovers databases only from a URL with a host name (a
	# socket directory in its query it takes for the host)
	dsn="postgresql://fence_exporter@127.0.0.1:$PGPORT/$PGDATABASE?sslmode=disable"
	say "$("$EXPORTER" --version 2>&1 | head -n 1): no --include-databases, so $databases and $dsn"
fi
DATA_SOURCE_NAME=$dsn \
	"$EXPORTER" --disable-default-metrics --disable-settings-metrics \
	--auto-discover-databases "$databases" \
	--extend.query-path="$WORK/queries.yaml" --web.listen-address="127.0.0.1:$port" \
	>"$WORK/exporter.log" 2>&1 &
E2E_PIDS+=("$!")
scrape() {
	"$E2E_PY" -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
		"http://127.0.0.1:$port/metrics" >"$WORK/metrics" 2>/dev/null &&
		grep -q "^pg_fence_total_stale{datname=\"$db2\"" "$WORK/metrics"
}
t0=$SECONDS
until scrape; do
	((SECONDS - t0 < 30)) || fail "the exporter served no pg_fence_total_stale for $db2 in 30 s; its log: $(tail -n 20 "$WORK/exporter.log"); its pg_fence metrics: $(grep '^pg_fence' "$WORK/metrics" 2>/dev/null | head -n 10)"
	sleep 0.05
done
grep '^pg_fence' "$WORK/metrics" | grep -F -e "resource=\"$r\"" -e total | sed 's/^/    | /'
# served: NAME DATABASE VALUE
served() {
	grep -qE "^pg_fence_$1\{datname=\"$2\",resource=\"$r\"(,server=\"[^\"]*\")?\} $3\$" "$WORK/metrics" ||
		fail "the exporter does not serve pg_fence_$1{datname=\"$2\",resource=\"$r\"} $3"
}
for m in stale missing invalid; do
	served "$m" "$PGDATABASE" 1
done
served stale "$db2" 2
served missing "$db2" 0
grep -qE "^pg_fence_total_stale\{datname=\"$db2\"(,server=\"[^\"]*\")?\} 2\$" "$WORK/metrics" ||
	fail "the exporter does not serve pg_fence_total_stale{datname=\"$db2\"} 2"
grep -q '^# TYPE pg_fence_total_stale counter$' "$WORK/metrics" || fail "pg_fence_total_stale is not a counter"

# every metric an alert rule names is served
names=$(grep -oE 'pg_fence_[a-z_]+' "$WORK/alerts.yaml" | sort -u)
[ -n "$names" ] || fail "the alert rules name no pg_fence metric"
for n in $names; do
	grep -q "^$n[{ ]" "$WORK/metrics" || fail "alert rule metric $n is not served"
done
say "pass: the queries give what they declare; the exporter serves them and the $(echo $names | wc -w) metrics of the alert rules"
