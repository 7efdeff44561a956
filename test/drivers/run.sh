#!/usr/bin/env bash
# test/drivers/run.sh: fence.fenced_update from every driver the README
# names, each passing values the way it normally does and no casts in the
# SQL text: asyncpg, psycopg 3, psycopg2 (fenced_python.py), node-postgres
# (fenced_node.js, pg from npm, pinned in node/package-lock.json), pgJDBC
# (FencedUpdate.java) and pgbench -M prepared (fenced.pgbench).
#
# Each driver makes one write with a fresh token, which must update one
# row, and one with the token below it, which the driver must see refused
# with LF001; this script then checks in the database that exactly the
# first write landed and that the mark is the fresh token.
#
# Runs against the PostgreSQL in the PG* variables (test/run.sh starts
# it); prints "ok - driver_NAME" or "not ok - driver_NAME" per driver.
# node-postgres is installed with "npm ci" into $FENCE_NODE_CACHE (default
# ~/.cache/pgfence/node) when that does not hold the pinned version yet.
set -uo pipefail
cd "$(dirname "$0")"
PY=/usr/bin/python3
JDBC_JAR=/usr/share/java/postgresql.jar
NODE_CACHE=${FENCE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pgfence/node}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fence-drivers.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
QUERY='UPDATE drv_stock SET qty = qty - $1 WHERE sku = $2 AND id = $3'

sql() { psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }

sql >/dev/null <<'SQL' || { echo "not ok - driver_setup"; exit 1; }
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS fence;
DROP TABLE IF EXISTS drv_stock;
CREATE TABLE drv_stock (id int PRIMARY KEY, sku text NOT NULL, qty int NOT NULL);
INSERT INTO drv_stock VALUES (7, 'widget', 1000), (8, 'widget', 1000);
SQL

# node_modules: the pinned node-postgres, installed once per lock file.
node_ready() {
	if ! cmp -s node/package-lock.json "$NODE_CACHE/package-lock.json" ||
		[ ! -d "$NODE_CACHE/node_modules/pg" ]; then
		mkdir -p "$NODE_CACHE" &&
			cp node/package.json node/package-lock.json "$NODE_CACHE/" &&
			(cd "$NODE_CACHE" && npm ci --no-audit --no-fund --loglevel=error) ||
			return 1
	fi
}

run_asyncpg() { "$PY" fenced_python.py asyncpg; }
run_psycopg() { "$PY" fenced_python.py psycopg; }
run_psycopg2() { "$PY" fenced_python.py psycopg2; }
run_node() { node_ready && NODE_PATH=$NODE_CACHE/node_modules node fenced_node.js; }
run_jdbc() {
	javac -d "$WORK" -cp "$JDBC_JAR" FencedUpdate.java &&
		java -cp "$WORK:$JDBC_JAR" FencedUpdate \
			"jdbc:postgresql://127.0.0.1:$PGPORT/$PGDATABASE?user=$PGUSER"
}
# pgbench reports an error by its message and exit status 2, not by SQLSTATE
run_pgbench() {
	local rc=0
	pgbench_write "$DRV_TOKEN" || return 1
	pgbench_write "$DRV_STALE" 2>"$WORK/pgbench.err" || rc=$?
	cat "$WORK/pgbench.err"
	[ "$rc" = 2 ] && grep -q 'ERROR:  stale fencing token' "$WORK/pgbench.err"
}
pgbench_write() {
	pgbench -n -M prepared -t 1 -f fenced.pgbench -D "res=$DRV_RESOURCE" \
		-D "token=$1" -D "q=$QUERY" -D delta=1 -D sku=widget -D id=7
}

# check DRIVER: run it, then look at what landed.
check() {
	local name=$1 before after mark
	export DRV_RESOURCE=drv:$name DRV_TOKEN=11 DRV_STALE=10
	sql -c "SELECT fence.advance('$DRV_RESOURCE', 10)" >/dev/null
	before=$(sql -c "SELECT qty FROM drv_stock WHERE id = 7")
	if ! "run_$name" >"$WORK/$name.log" 2>&1; then
		echo "not ok - driver_$name"
		sed 's/^/#   /' "$WORK/$name.log" | tail -n 30
		return
	fi
	after=$(sql -c "SELECT qty FROM drv_stock WHERE id = 7")
	mark=$(sql -c "SELECT token FROM fence.fences WHERE resource = '$DRV_RESOURCE'")
	if [ "$after" != $((before - 1)) ] || [ "$mark" != 11 ] ||
		[ "$(sql -c "SELECT qty FROM drv_stock WHERE id = 8")" != 1000 ]; then
		echo "not ok - driver_$name"
		echo "#   qty $before -> $after (expected one less), mark $mark (expected 11)"
		return
	fi
	echo "ok - driver_$name"
}

for d in ${FENCE_DRIVERS:-asyncpg psycopg psycopg2 node jdbc pgbench}; do
	check "$d"
done
sql -c "DROP TABLE drv_stock" -c "DELETE FROM fence.fences WHERE resource LIKE 'drv:%'" >/dev/null
