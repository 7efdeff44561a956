#!/usr/bin/env bash
# test/drivers/run.sh: fence.fenced_update from every driver that
# docs/writing-fenced-code.md names, each passing values the way it
# normally does and no casts in the SQL text: asyncpg, psycopg 3,
# psycopg2 (fenced_python.py), node-postgres (fenced_node.js, pg from npm,
# pinned in node/package-lock.json), pgJDBC (FencedUpdate.java), pgbench
# -M prepared (fenced.pgbench) and pgx v4 (fenced_go.go, Debian's
# golang-github-jackc-pgx-v4-dev).
#
# Each driver makes one write with a fresh token, which must update one
# row, and one with the token below it, which the driver must see refused
# with LF001; this script then checks in the database that exactly the
# first write landed and that the mark is the fresh token.
#
# Then each driver, and psql, runs under "fence run"
# (driver_NAME_fence_run): its program, unchanged, makes a guarded write,
# and this script sees whether
# the token arrived through PGOPTIONS (the write landed and recorded the
# lease's token) or not (refused with LF002, nothing written), and checks
# that against the table of drivers in docs/writing-fenced-code.md.  For
# a driver that does not read PGOPTIONS, its two alternatives must work:
# passing PGOPTIONS on in the one line it shows (driver_NAME_options), and the
# token set per transaction (driver_NAME_local).
#
# Runs against the PostgreSQL in the PG* variables and the Redis in
# FENCE_REDIS_URL (test/run.sh starts them); prints "ok - driver_..." or
# "not ok - driver_..." per check.  node-postgres is installed with "npm
# ci" into $FENCE_NODE_CACHE (default ~/.cache/pgfence/node) when that
# does not hold the pinned version yet; Go keeps its build cache in
# ~/.cache/go-build.
set -uo pipefail
cd "$(dirname "$0")"
. ../lib/platform.sh
PY=/usr/bin/python3
JDBC_JAR=/usr/share/java/postgresql.jar
NODE_CACHE=${FENCE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pgfence/node}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fence-drivers.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
QUERY='UPDATE drv_stock SET qty = qty - $1 WHERE sku = $2 AND id = $3'

FENCE_BIN=${FENCE_BIN:-$(cd ../.. && pwd)/client/fence}

# FENCE_EDITION=sql: the same checks against the SQL edition of hosted
# PostgreSQL (sql/hosted/), installed in a database of its own
if [ "${FENCE_EDITION:-c}" = sql ]; then
	export PGDATABASE=fence_drivers_sql
	dropdb --if-exists "$PGDATABASE" >/dev/null 2>&1
	createdb -T template0 "$PGDATABASE" &&
		psql -X -q -v ON_ERROR_STOP=1 -1 -f ../../sql/hosted/fence_hosted.sql >/dev/null ||
		{ echo "not ok - driver_setup"; exit 1; }
fi
CONNINFO="host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE"
DRIVERS="asyncpg psycopg psycopg2 node jdbc pgbench pgx"

sql() { psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }

sql >/dev/null <<'SQL' || { echo "not ok - driver_setup"; exit 1; }
SET client_min_messages = warning;
DO $$ BEGIN
    IF pg_catalog.to_regprocedure('fence.edition()') IS NULL THEN
        CREATE EXTENSION IF NOT EXISTS fence;
    END IF;
END $$;
DROP TABLE IF EXISTS drv_stock;
CREATE TABLE drv_stock (id int PRIMARY KEY, sku text NOT NULL, qty int NOT NULL);
INSERT INTO drv_stock VALUES (7, 'widget', 1000), (8, 'widget', 1000);
DROP TABLE IF EXISTS drv_guard;
CREATE TABLE drv_guard (driver text PRIMARY KEY, n int NOT NULL DEFAULT 0, token_seen text);
INSERT INTO drv_guard (driver)
    VALUES ('psql'), ('asyncpg'), ('psycopg'), ('psycopg2'), ('node'), ('jdbc'), ('pgbench'), ('pgx');
SELECT fence.protect('drv_guard', 'drvopt', key_column => 'driver');
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

# jdbc_ready, go_ready: the compiled programs, in $WORK
jdbc_ready() {
	[ -f "$WORK/FencedUpdate.class" ] || javac -d "$WORK" -cp "$JDBC_JAR" FencedUpdate.java
}
go_ready() {
	[ -x "$WORK/fenced_go" ] ||
		GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= go build -o "$WORK/fenced_go" fenced_go.go
}
JDBC_URL="jdbc:postgresql://127.0.0.1:$PGPORT/$PGDATABASE?user=$PGUSER"

run_asyncpg() { "$PY" fenced_python.py asyncpg; }
run_psycopg() { "$PY" fenced_python.py psycopg; }
run_psycopg2() { "$PY" fenced_python.py psycopg2; }
run_node() { node_ready && NODE_PATH=$NODE_CACHE/node_modules node fenced_node.js; }
run_jdbc() { jdbc_ready && java -cp "$WORK:$JDBC_JAR" FencedUpdate "$JDBC_URL"; }
run_pgx() { go_ready && "$WORK/fenced_go" fenced; }
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

# The drivers that send the statement's values typed as integer and text
# in one call (psycopg 3, pgJDBC) or as literals of both (psycopg2): the
# SQL edition has no VARIADIC "any" for them, and the table of differences
# of docs/hosted.md says they are refused (42883, or 22P02 where the literals'
# common type is integer) with nothing written.
SQL_EDITION_MIXED="psycopg psycopg2 jdbc"

# check_mixed DRIVER BEFORE: DRIVER's call is refused by the SQL edition as
# docs/hosted.md says, before the mark moves or a row changes.
check_mixed() {
	local name=$1 before=$2
	if "run_$name" >"$WORK/$name.log" 2>&1; then
		echo "not ok - driver_$name (the SQL edition accepted parameters of several types)"
	elif ! grep -q -E 'fence\.fenced_update\(.*\) does not exist|invalid input syntax for type integer' "$WORK/$name.log"; then
		echo "not ok - driver_$name"
		sed 's/^/#   /' "$WORK/$name.log" | tail -n 30
	elif [ "$(sql -c "SELECT qty FROM drv_stock WHERE id = 7")" != "$before" ] ||
		[ "$(sql -c "SELECT token FROM fence.fences WHERE resource = '$DRV_RESOURCE'")" != 10 ]; then
		echo "not ok - driver_$name (refused, but something was written)"
	else
		echo "ok - driver_$name (refused: parameters of several types, docs/hosted.md)"
	fi
}

# check DRIVER: run it, then look at what landed.
check() {
	local name=$1 before after mark
	export DRV_RESOURCE=drv:$name DRV_TOKEN=11 DRV_STALE=10
	sql -c "SELECT fence.advance('$DRV_RESOURCE', 10)" >/dev/null
	before=$(sql -c "SELECT qty FROM drv_stock WHERE id = 7")
	if [ "${FENCE_EDITION:-c}" = sql ] && [[ " $SQL_EDITION_MIXED " == *" $name "* ]]; then
		check_mixed "$name" "$before"
		return
	fi
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

# --- under "fence run"

# probe_cmd DRIVER: the command that makes DRIVER's guarded write (its
# mode, plain, options or local, follows), into the array "cmd"
probe_cmd() {
	case $1 in
	asyncpg | psycopg | psycopg2) cmd=("$PY" fenced_python.py "$1" probe) ;;
	node) node_ready && cmd=(env NODE_PATH="$NODE_CACHE/node_modules" node fenced_node.js probe) ;;
	jdbc) jdbc_ready && cmd=(java -cp "$WORK:$JDBC_JAR" FencedUpdate "$JDBC_URL" probe) ;;
	pgx) go_ready && cmd=("$WORK/fenced_go" probe) ;;
	psql) cmd=(sh -c 'if out=$(psql -X -qAt -v VERBOSITY=verbose -c "UPDATE drv_guard SET n = n + 1,
			token_seen = current_setting('"'fence.token'"', true) WHERE driver = '"'psql'"'" 2>&1)
		then echo write=ok; else echo "write=$(echo "$out" | sed -n "s/^ERROR:  \([0-9A-Z]\{5\}\):.*/\1/p")"; fi') ;;
	# pgbench names no SQLSTATE, only the message
	pgbench) cmd=(sh -c 'if pgbench -n -t 1 -f probe.pgbench >/dev/null 2>"$0"; then echo write=ok
		elif grep -q "missing fencing token" "$0"; then echo write=LF002; else cat "$0"; fi' "$WORK/pgbench.err") ;;
	esac
}

# probe DRIVER MODE: run DRIVER's guarded write under "fence run" and say
# what happened: "read" (the write landed with the lease's token), "ignored"
# (refused with LF002, nothing written) or what else went wrong.
probe() {
	local name=$1 mode=$2 before after token seen out
	local -a cmd
	probe_cmd "$name" >"$WORK/probe.log" 2>&1 || { echo "cannot run: $(tail -n 5 "$WORK/probe.log")"; return; }
	before=$(sql -c "SELECT n FROM drv_guard WHERE driver = '$name'")
	rm -f "$WORK/token"
	out=$(PROBE_DRIVER=$name "$FENCE_BIN" run "drvopt:$name" --ttl 30s --pg "$CONNINFO" -- \
		sh -c 'echo "$FENCE_TOKEN" >"$0" && exec "$@"' "$WORK/token" "${cmd[@]}" "$mode" 2>&1)
	after=$(sql -c "SELECT n FROM drv_guard WHERE driver = '$name'")
	seen=$(sql -c "SELECT token_seen FROM drv_guard WHERE driver = '$name'")
	token=$(cat "$WORK/token" 2>/dev/null)
	if [ "$out" = write=ok ] && [ "$after" = $((before + 1)) ] && [ -n "$token" ] && [ "$seen" = "$token" ]; then
		echo read
	elif [ "$out" = write=LF002 ] && [ "$after" = "$before" ]; then
		echo ignored
	else
		echo "neither: output '$out', n $before -> $after, token $token, seen '$seen'"
	fi
}

# readme_reads DRIVER: what the table of docs/writing-fenced-code.md
# ("Drivers under fence run") says of DRIVER: "yes" (it
# reads PGOPTIONS) or "no"
readme_reads() {
	local label
	case $1 in
	psql) label=psql ;;
	asyncpg) label=asyncpg ;; psycopg) label="psycopg 3" ;; psycopg2) label=psycopg2 ;;
	node) label=node-postgres ;; jdbc) label=pgJDBC ;; pgbench) label=pgbench ;; pgx) label="pgx v4 (Go)" ;;
	esac
	awk -F'|' -v label="$label" '
		{ for (i = 2; i <= 3; i++) { gsub(/^ +| +$/, "", $i); gsub(/`/, "", $i) } }
		$2 == label && ($3 == "yes" || $3 == "no") { print $3; exit }' ../../docs/writing-fenced-code.md
}

# check_fence_run DRIVER: the docs say right whether DRIVER's program,
# unchanged, gets the token under "fence run"; if it does not, both
# alternatives the docs show give it the token.
check_fence_run() {
	local name=$1 says got mode
	says=$(readme_reads "$name")
	got=$(probe "$name" plain)
	case $says:$got in
	yes:read | no:ignored)
		echo "ok - driver_${name}_fence_run (reads PGOPTIONS: $says)" ;;
	*)
		echo "not ok - driver_${name}_fence_run"
		echo "#   docs/writing-fenced-code.md says it reads PGOPTIONS: '${says:-(no row)}'; under fence run: $got" ;;
	esac
	[ "$says" = no ] || return 0
	for mode in options local; do
		got=$(probe "$name" "$mode")
		if [ "$got" = read ]; then
			echo "ok - driver_${name}_$mode"
		else
			echo "not ok - driver_${name}_$mode"
			echo "#   $got"
		fi
	done
}

# lacking DRIVER: why DRIVER cannot run on this platform, if its Debian
# has no package of it (psycopg 3 and pgx before bookworm); nothing where
# it is only not installed: it then fails, as a missing dependency.
lacking() {
	case $1 in
	psycopg)
		"$PY" -c 'import psycopg' 2>/dev/null || ! platform_lacks python3-psycopg ||
			platform_skip_reason python3-psycopg "psycopg 3" ;;
	pgx)
		[ -d /usr/share/gocode/src/github.com/jackc/pgx/v4 ] ||
			! platform_lacks golang-github-jackc-pgx-v4-dev ||
			platform_skip_reason golang-github-jackc-pgx-v4-dev "pgx v4" ;;
	esac
}

for d in ${FENCE_DRIVERS:-$DRIVERS}; do
	[ "$d" = psql ] && continue
	if why=$(lacking "$d") && [ -n "$why" ]; then
		echo "skip - driver_$d # $why"
		continue
	fi
	check "$d"
done
# psql, too, for the table (it has no fenced_update check of its own here)
for d in ${FENCE_DRIVERS:-psql $DRIVERS}; do
	if why=$(lacking "$d") && [ -n "$why" ]; then
		echo "skip - driver_${d}_fence_run # $why"
		continue
	fi
	check_fence_run "$d"
done
sql -c "DROP TABLE drv_stock, drv_guard" \
	-c "DELETE FROM fence.fences WHERE resource LIKE 'drv:%' OR resource LIKE 'drvopt:%'" >/dev/null
