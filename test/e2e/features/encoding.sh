#!/usr/bin/env bash
# Settings given as startup options are not checked for the database's
# encoding by PostgreSQL: PGOPTIONS=$'-c fence.owner=w\xff' and one write
# to a protected table stored invalid UTF-8 in fence.fences.owner, which
# pg_dump wrote out and "pg_restore --exit-on-error" then refused.
#
# Two servers of the test's own, one with fence preloaded and one that
# loads it on first use.  For fence.owner, fence.resource and fence.tokens
# with a byte \xff: the write to the protected table is refused with
# 22021 (at connection, where the library is preloaded: the check hook
# runs then; at the write, where it is loaded later), and nothing is
# stored.  Setting the value anew in the session ends the refusal.  Then
# pg_dump and pg_restore --exit-on-error of the database succeed.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init encoding

pg_node_init encpre -c shared_preload_libraries=fence -c "log_line_prefix=%e "
pg_node_init enclazy -c "log_line_prefix=%e "
pg_node_up encpre
pg_node_up enclazy

ff=$'\xff'
bad=w$ff
for node in encpre enclazy; do
	node_sql "$node" -c 'CREATE EXTENSION fence' \
		-c 'CREATE TABLE inv (id int PRIMARY KEY, qty int)' \
		-c 'INSERT INTO inv VALUES (1, 10)' \
		-c "SELECT fence.protect('inv', 'inv')" >/dev/null
	for opts in "-c fence.resource=inv -c fence.token=3 -c fence.owner=$bad" \
		"-c fence.resource=inv$ff -c fence.token=3" \
		"-c fence.tokens=inv=3/$bad"; do
		before=$(wc -l <"$WORK/$node.log")
		out=$(PGOPTIONS=$opts node_sql "$node" -v VERBOSITY=verbose \
			-c 'UPDATE inv SET qty = qty + 1' 2>&1) &&
			fail "$node: the write with PGOPTIONS ${opts@Q} was accepted"
		# a refusal at connection has no SQLSTATE in psql's message: the log has it
		logged=$(tail -n +"$((before + 1))" "$WORK/$node.log")
		case "$out$logged" in
		*22021*) say "$node: ${opts@Q} refused with 22021" ;;
		*) fail "$node: ${opts@Q} refused, but not with 22021: $out $logged" ;;
		esac
	done
	rows=$(node_sql "$node" -c "SELECT count(*) FROM fence.fences")
	[ "$rows" = 0 ] || fail "$node: $rows marks were stored"
done

# loaded later: setting the value anew in the session ends the refusal
out=$(PGOPTIONS="-c fence.resource=inv -c fence.token=3 -c fence.owner=$bad" node_sql enclazy \
	-c "SET fence.owner = 'w'" -c 'UPDATE inv SET qty = qty + 1' \
	-c "SELECT owner FROM fence.fences WHERE resource = 'inv'" 2>"$WORK/reset.err") ||
	fail "enclazy: the write after SET fence.owner = 'w' failed: $out $(cat "$WORK/reset.err")"
[ "$out" = w ] || fail "enclazy: the mark's owner is ${out@Q}, not w"

# the arguments of the functions: PostgreSQL checks SQL text arguments on
# arrival, so an invalid owner can reach them only from the settings,
# which are refused above; the dump of what was stored restores
port=PORT_enclazy
pg_dump -Fc -h "$WORK/sock" -p "${!port}" -U postgres -d postgres -f "$WORK/dump" ||
	fail "pg_dump failed"
node_sql enclazy -c 'CREATE DATABASE restored' >/dev/null
pg_restore --exit-on-error -h "$WORK/sock" -p "${!port}" -U postgres -d restored "$WORK/dump" ||
	fail "pg_restore --exit-on-error failed"
say "pass"
