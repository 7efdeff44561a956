#!/usr/bin/env bash
# PgBouncer in transaction mode in front of PostgreSQL.
#
# Must hold, with one server connection shared by every client
# (default_pool_size = 1, checked by the backend pid): a write fenced by
# SET LOCAL is accepted, and the next client on the same server connection
# sees no token (SHOW fence.token is empty, its guarded write is LF002); a
# stale SET LOCAL token is LF001; fence.fenced_update and "fence exec"
# through the pooler accept the fresh token and refuse the stale one
# (LF001, exit 77), and nothing refused lands.  PGOPTIONS through the
# pooler: PgBouncer refuses the options startup parameter, and "fence run
# --pg POOLER" then exits 78 with advice before starting the command;
# with ignore_startup_parameters = options it drops them silently, and
# "fence run" warns, runs the command, and the command's guarded write is
# LF002.  Straight to PostgreSQL, "fence run --pg" warns about nothing.
# docs/writing-fenced-code.md's pooler recipe ("fence run --pooler", SET LOCAL from the
# FENCE_* variables in psql) runs word for word through the pooler: its
# write lands, its token is announced, a stale token is LF001.
# Negative control: a session-level SET by one client does leak to the
# next one on the same server connection (what docs/writing-fenced-code.md warns about);
# the leak check above would see it.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init pgbouncer
# Debian installs it in /usr/sbin, which is not on a normal user's PATH
PATH=$PATH:/usr/sbin
command -v pgbouncer >/dev/null || skip "pgbouncer is not installed"
need_client

sql -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS pb_stock" \
	-c "CREATE TABLE pb_stock (id int PRIMARY KEY, qty int NOT NULL)" -c "INSERT INTO pb_stock VALUES (1, 100)"
sql -c "SELECT fence.protect('pb_stock', 'pb')" >/dev/null
sql -c "SELECT fence.advance('pb', 5)" >/dev/null

# pgbouncer_start NAME [SETTING...]: a pooler on a spare port, run as the
# user that runs PostgreSQL; sets PGB_PORT.
pgbouncer_start() {
	local name=$1 dir=$WORK/$1 s
	shift
	mkdir -p "$dir"
	PGB_PORT=$(spare_port)
	echo '"postgres" ""' >"$dir/users.txt"
	{
		echo "[databases]"
		echo "* = host=127.0.0.1 port=$PGPORT"
		echo "[pgbouncer]"
		echo "listen_addr = 127.0.0.1"
		echo "listen_port = $PGB_PORT"
		echo "unix_socket_dir ="
		echo "auth_type = trust"
		echo "auth_file = $dir/users.txt"
		echo "pool_mode = transaction"
		echo "default_pool_size = 1"
		echo "max_client_conn = 20"
		echo "logfile = $dir/pgbouncer.log"
		echo "pidfile = $dir/pgbouncer.pid"
		for s in "$@"; do echo "$s"; done
	} >"$dir/pgbouncer.ini"
	[ "$(id -u)" -ne 0 ] || chown -R postgres: "$dir"
	as_pg pgbouncer -d "$dir/pgbouncer.ini" >"$dir/start.log" 2>&1 ||
		fail "pgbouncer $name did not start: $(cat "$dir/start.log" "$dir/pgbouncer.log" 2>/dev/null)"
	wait_for 10 test -s "$dir/pgbouncer.pid"
	cp "$dir/pgbouncer.pid" "$WORK/pgbouncer-$name.pid"	# e2e_cleanup kills it
	wait_for 10 pooler_up
}
pooler_up() { pooled -c "SELECT 1" >/dev/null; }
# pooled ARGS...: psql through the pooler on PGB_PORT
pooled() { PGHOST=127.0.0.1 PGPORT=$PGB_PORT sql "$@" 2>/dev/null; }
pooled_state() { PGHOST=127.0.0.1 PGPORT=$PGB_PORT sqlstate "$@"; }
POOLER=

# --- transaction mode, PGOPTIONS refused
pgbouncer_start strict
POOLER="host=127.0.0.1 port=$PGB_PORT dbname=$PGDATABASE user=$PGUSER"
pid1=$(pooled -c "SELECT pg_backend_pid()")
pid2=$(pooled -c "SELECT pg_backend_pid()")
[ -n "$pid1" ] && [ "$pid1" = "$pid2" ] || fail "clients do not share one server connection ($pid1, $pid2)"

# SET LOCAL is fenced, and ends with the transaction
pooled -c "BEGIN" -c "SET LOCAL fence.resource = 'pb'" -c "SET LOCAL fence.token = '5'" \
	-c "UPDATE pb_stock SET qty = qty - 1 WHERE id = 1" -c "COMMIT" >/dev/null ||
	fail "SET LOCAL write through the pooler"
[ "$(pooled -c "SELECT pg_backend_pid()")" = "$pid1" ] || fail "the server connection changed"
[ "$(pooled -c "SHOW fence.token")" = "" ] || fail "the next client sees a token: $(pooled -c 'SHOW fence.token')"
[ "$(pooled_state -c "UPDATE pb_stock SET qty = 0")" = LF002 ] || fail "the next client's guarded write was not LF002"
[ "$(pooled_state -c "BEGIN" -c "SET LOCAL fence.resource = 'pb'" -c "SET LOCAL fence.token = '4'" \
	-c "UPDATE pb_stock SET qty = 0" -c "COMMIT")" = LF001 ] || fail "a stale SET LOCAL token was not LF001"
say "SET LOCAL: fenced, and no token left for the next client"

# fenced_update, and libfence's pipeline through the pooler
[ "$(pooled -c "SELECT fence.fenced_update('pb', 6, 'UPDATE pb_stock SET qty = qty - \$1 WHERE id = \$2', '1', '1')")" = 1 ] ||
	fail "fenced_update through the pooler"
[ "$(pooled_state -c "SELECT fence.fenced_update('pb', 5, 'UPDATE pb_stock SET qty = 0')")" = LF001 ] ||
	fail "stale fenced_update through the pooler was not LF001"
rcli SET "$(fence_key pb token)" 6 >/dev/null
"$FENCE_BIN" exec pb --pg "$POOLER" 'UPDATE pb_stock SET qty = qty - $1 WHERE id = 1' 1 >"$WORK/exec.out" 2>&1 ||
	fail "fence exec through the pooler: $(cat "$WORK/exec.out")"
rcli SET "$(fence_key pb token)" 3 >/dev/null	# a counter behind: the announce heals it ...
set +e
"$FENCE_BIN" exec pb --pg "$POOLER" 'SELECT fence.advance($1, 6::bigint)' pb >"$WORK/exec.out" 2>&1
rc=$?
set -e
[ "$rc" = 77 ] || fail "fence exec with a stale token in its statement: exit $rc, expected 77: $(cat "$WORK/exec.out")"
[ "$(qty pb)" = 97 ] || fail "qty $(qty pb), expected 97 after three accepted writes"
say "fenced_update and fence exec through the pooler: fresh accepted, stale refused"

# PGOPTIONS: refused by the pooler; fence run stops before the command
PGOPTIONS="-c fence.token=5" PGHOST=127.0.0.1 PGPORT=$PGB_PORT psql -X -c "SELECT 1" >/dev/null 2>"$WORK/psql.err" &&
	fail "the pooler accepted the options startup parameter"
# PgBouncer 1.18's words, and 1.24's and later's, which name the setting
grep -qE 'unsupported startup parameter: options|unsupported startup parameter in options: fence\.token' "$WORK/psql.err" || fail "unexpected refusal: $(cat "$WORK/psql.err")"
set +e
"$FENCE_BIN" run pb --pg "$POOLER" -- touch "$WORK/ran" >"$WORK/run.out" 2>"$WORK/run.err"
rc=$?
set -e
[ "$rc" = 78 ] || fail "fence run through a pooler refusing PGOPTIONS: exit $rc, expected 78: $(cat "$WORK/run.err")"
[ ! -e "$WORK/ran" ] || fail "fence run started the command although its connections would fail"
grep -q 'SET LOCAL' "$WORK/run.err" && grep -q 'fenced_update' "$WORK/run.err" &&
	grep -q 'directly to PostgreSQL' "$WORK/run.err" || fail "no advice: $(cat "$WORK/run.err")"
lock_gone pb || fail "fence run left its lock behind"
grep -q -- '--pooler' "$WORK/run.err" || fail "the advice does not name --pooler: $(cat "$WORK/run.err")"
say "PGOPTIONS refused: fence run exits 78 with advice: $(head -n1 "$WORK/run.err")"

# docs/writing-fenced-code.md's pooler recipe, word for word: its SQL block is sell-one.sql,
# its sh block runs as shown but for the pooler's address (the export line)
# and with the fence just built first on PATH.  The write lands, fenced by
# the token fence run announced through the pooler; a stale token in the
# same recipe is refused (LF001) and lands nothing.
recipe=$WORK/recipe
mkdir -p "$recipe"
awk -v dir="$recipe" '
	/^<!-- pooler recipe/ { on = 1; next }
	on && /^```sql/ { out = dir "/sell-one.sql"; next }
	on && /^```sh/ { out = dir "/recipe.sh"; next }
	on && /^```/ && out != "" { close(out); n++; out = ""; if (n == 2) exit; next }
	out != "" { print > out }
' "$TOP/docs/writing-fenced-code.md"
[ -s "$recipe/sell-one.sql" ] && [ -s "$recipe/recipe.sh" ] || fail "no pooler recipe in docs/writing-fenced-code.md"
grep -q '^fence run inventory --pooler --pg "\$POOLER"' "$recipe/recipe.sh" || fail "unexpected recipe: $(cat "$recipe/recipe.sh")"
sql -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS pb_recipe" -c "CREATE DATABASE pb_recipe" >/dev/null
PGDATABASE=pb_recipe sql -c "SET client_min_messages = warning" -c "CREATE EXTENSION fence" \
	-c "CREATE TABLE inventory (sku text PRIMARY KEY, qty int NOT NULL)" \
	-c "INSERT INTO inventory VALUES ('widget', 10)" -c "SELECT fence.protect('inventory', 'inventory')" >/dev/null
sed -i "s|^export POOLER=.*|export POOLER=\"host=127.0.0.1 port=$PGB_PORT dbname=pb_recipe user=$PGUSER\"|" "$recipe/recipe.sh"
for i in 1 2; do
	(cd "$recipe" && PATH=$(dirname "$FENCE_BIN"):$PATH sh -e recipe.sh) >"$WORK/recipe.out" 2>"$WORK/recipe.err" ||
		fail "the documented pooler recipe: $(cat "$WORK/recipe.out" "$WORK/recipe.err")"
	[ ! -s "$WORK/recipe.err" ] || fail "the documented pooler recipe said: $(cat "$WORK/recipe.err")"
	grep -q '^UPDATE 1$' "$WORK/recipe.out" || fail "the recipe updated nothing: $(cat "$WORK/recipe.out")"
done
[ "$(PGDATABASE=pb_recipe sql -c "SELECT qty FROM inventory")" = 8 ] || fail "the recipe's writes did not land"
mark=$(PGDATABASE=pb_recipe sql -c "SELECT token FROM fence.fences WHERE resource = 'inventory'")
[ -n "$mark" ] && [ "$mark" -gt 1 ] || fail "the recipe's token was not announced through the pooler"
state=$(cd "$recipe" && PGHOST=127.0.0.1 PGPORT=$PGB_PORT PGDATABASE=pb_recipe sqlstate -1 \
	-v resource=inventory -v token=$((mark - 1)) -f sell-one.sql)
[ "$state" = LF001 ] || fail "a stale token in the recipe was $state, not LF001"
[ "$(PGDATABASE=pb_recipe sql -c "SELECT qty FROM inventory")" = 8 ] || fail "a stale write landed"
lock_gone inventory || fail "the recipe left its lock behind"
say "the documented pooler recipe through PgBouncer $(pgbouncer --version | sed -n '1s/^PgBouncer //p'): fenced, announced, a stale token refused"

# negative control: a session-level SET leaks to the next client
pooled -c "SET fence.resource = 'pb'" -c "SET fence.token = '99'" >/dev/null
[ "$(pooled -c "SHOW fence.token")" = 99 ] || fail "negative control: the session-level SET did not leak"
pooled -c "RESET ALL" >/dev/null
[ "$(pooled -c "SHOW fence.token")" = "" ] || fail "RESET ALL left the token"
say "negative control: a session-level SET leaks across clients in transaction mode"

# --- PGOPTIONS dropped silently
pgbouncer_start lenient "ignore_startup_parameters = options"
POOLER="host=127.0.0.1 port=$PGB_PORT dbname=$PGDATABASE user=$PGUSER"
[ "$(PGOPTIONS="-c fence.resource=pb -c fence.token=7" pooled_state -c "UPDATE pb_stock SET qty = 0")" = LF002 ] ||
	fail "dropped PGOPTIONS: the guarded write was not LF002"
set +e
PGHOST=127.0.0.1 PGPORT=$PGB_PORT "$FENCE_BIN" run pb --pg "$POOLER" -- \
	sh -c 'psql -X -q -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -c "UPDATE pb_stock SET qty = 0" 2>&1' \
	>"$WORK/run.out" 2>"$WORK/run.err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "fence run with dropped PGOPTIONS: exit $rc, expected the command's 1: $(cat "$WORK/run.err")"
grep -q 'ERROR:  LF002' "$WORK/run.out" || fail "the command's write was not LF002: $(cat "$WORK/run.out")"
grep -q 'warning: sessions at --pg do not see the fence settings' "$WORK/run.err" &&
	grep -q 'SET LOCAL' "$WORK/run.err" || fail "no warning: $(cat "$WORK/run.err")"
[ "$(qty pb)" = 97 ] || fail "a refused write landed: qty $(qty pb)"
say "PGOPTIONS dropped: fence run warns, and the command's guarded write is LF002"

# straight to PostgreSQL the options arrive, and nothing is said
"$FENCE_BIN" run pb --pg "$PGCONN" -- psql -X -q -c "UPDATE pb_stock SET qty = qty - 1 WHERE id = 1" \
	>"$WORK/run.out" 2>"$WORK/run.err" || fail "fence run straight to PostgreSQL: $(cat "$WORK/run.err")"
[ ! -s "$WORK/run.err" ] || fail "fence run straight to PostgreSQL said: $(cat "$WORK/run.err")"
[ "$(qty pb)" = 96 ] || fail "qty $(qty pb), expected 96"
say "pass"
