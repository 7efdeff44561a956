#!/usr/bin/env bash
# bench/s2_guarded_options.sh: scenario 2, a table guarded by
# fence.protect() (table-level mode: one statement trigger) written with
# ordinary SQL, the token coming from the connection's options as `fence run`
# passes it:
#
#   PGOPTIONS='-c fence.resource=R -c fence.token=T -c fence.owner=O'
#
# against the same pgbench load on the same table unprotected.  The guard is
# installed before each guarded run and removed after it, so that both
# variants write the very same table.  All clients carry the one lease of
# the table's resource (a pool of connections under one `fence run`).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

resource=bench:guarded
owner=bench-owner

log "s2: guarded table, token from the connection options, vs plain"
pgbench_accounts
sql -c "SELECT fence.advance('$resource', $token, '$owner')"

run_variant() {
	case $1 in
	plain)
		record s2 plain "$(pgb update_plain.pgbench -D accounts=$accounts)"
		;;
	guarded)
		sql -c "SELECT fence.protect('pgbench_accounts', '$resource')" >/dev/null
		record s2 guarded "$(PGOPTIONS="-c fence.resource=$resource -c fence.token=$token -c fence.owner=$owner" \
			pgb update_plain.pgbench -D accounts=$accounts)"
		sql -c "SELECT fence.unprotect('pgbench_accounts')" >/dev/null
		;;
	esac
}

interleave run_variant plain guarded

row 2 "guarded table, token from PGOPTIONS, vs plain ($CLIENTS clients)" \
	"$(median s2 guarded)" tx/s plain "$(median s2 plain)" ">=0.80" "$(pratio s2 guarded plain)"
note "Scenario 2: pgbench -M prepared, the plain UPDATE script of scenario 1; fence.protect('pgbench_accounts', '$resource') in table-level mode; all clients carry the same resource and token; round trips per write: 1 in both variants."
