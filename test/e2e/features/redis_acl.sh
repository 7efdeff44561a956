#!/usr/bin/env bash
# redis_acl: the Redis ACL of docs/redis.md is all fence needs, on every topology,
# and a refusal is a configuration error reported at once.
#
# The ACL lines are read from docs/redis.md ("### Redis ACL": the block after
# "<!-- acl -->" and the table of what each topology adds) and applied as
# they stand, with ACL SETUSER, to a user "fence" on one node, the master
# and replica of a Sentinel set (three sentinels), the masters of a
# Cluster and three quorum nodes.  With that user every operation works:
# acquire (also right after SCRIPT FLUSH: EVAL), show, extend, release, a
# waiter that blocks (BLPOP), is shown (show) and listed (list, with the
# "fence list" row's SCAN) and is handed the lease, fence run with its
# heartbeat, a heal when PostgreSQL is ahead of the counter, --min-replicas
# (Sentinel), and on the Cluster a release while its slot migrates (ASK).
#
# Then the same user loses one command (a "-cmd" rule after the documented ones):
# ROLE (Sentinel), CLUSTER SHARDS and SLOTS, ASKING (Cluster), PING
# (quorum), WAIT (--min-replicas), SCAN (list), a command inside the
# scripts (INCR);
# and the sentinels' default user loses SENTINEL get-master-addr-by-name.
# Each refusal must be exit 78 naming what was refused, well within the
# 5 s command timeout (before, most were exit 69 after retrying it all).
. "$(dirname "$0")/../lib/lib.sh"
e2e_init redis_acl
need_client
README=$TOP/docs/redis.md

# the documented lines, PASSWORD as "pw"
base=$(awk '/^<!-- acl -->$/ { on = 1; next } on && /^ACL SETUSER fence / { print; exit }' "$README")
[ -n "$base" ] || fail "docs/redis.md has no ACL SETUSER line after <!-- acl -->"
base=${base#ACL SETUSER fence }
base=${base//>PASSWORD/>pw}
# Redis 6.0 and 6.1 have no channel rules: the documented line says to
# leave resetchannels out there
version=$(redis-server --version | sed -n 's/^Redis server v=\([0-9.]*\) .*/\1/p')
case $version in
6.0.* | 6.1.*)
	grep -q 'Redis 6.0 and 6.1.*`resetchannels`' "$README" ||
		fail "docs/redis.md does not say what Redis $version refuses in the ACL line"
	base=${base/ resetchannels/} ;;
esac
# adds TOPOLOGY: the rules the documented table adds for TOPOLOGY
adds() {
	local row
	row=$(awk -v t="| $1 | " '/^### Redis ACL$/ { on = 1; next } on && /^#/ { exit }
		on && index($0, t) == 1 { print; exit }' "$README")
	[ -n "$row" ] || fail "docs/redis.md's ACL table has no row for $1"
	row=${row#"| $1 | "}
	row=${row%% |*}
	row=${row//\\|/|}
	[ "$row" = nothing ] || { row=${row#\`}; echo "${row%\`}"; }
}
# user PORT ADDS [RULE...]: the user "fence" has exactly the documented base
# rules, then the rules in the string ADDS and those of "fence list", then
# RULE...
user() {
	local port=$1 adds=$2
	shift 2
	adds+=" $(adds "\`fence list\`")"
	# shellcheck disable=SC2086
	redis-cli -p "$port" ACL SETUSER fence reset $base $adds "$@" | grep -qx OK ||
		fail "ACL SETUSER on $port refused: $base $adds $*"
}
say "base: $base"

# refused WHAT CMD...: CMD exits 78 at once, naming WHAT
refused() {
	local what=$1 t0 rc=0
	shift
	t0=$(now_ms)
	"$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	[ "$rc" = 78 ] || fail "$*: exit $rc, expected 78: $(cat "$WORK/err")"
	grep -qF "$what" "$WORK/err" || fail "$*: the message does not name $what: $(cat "$WORK/err")"
	[ $(($(now_ms) - t0)) -lt 4000 ] || fail "$*: took $(($(now_ms) - t0)) ms to refuse"
	say "refused at once: $(cat "$WORK/err")"
}

# works URL RESOURCE PORT: every operation, as the user of URL; PORT is a
# node that holds RESOURCE's keys (for SCRIPT FLUSH and the BLPOP count)
works() {
	local url=$1 res=$2 port=$3 owner w blpops
	export FENCE_REDIS_URL=$url
	redis-cli -p "$port" SCRIPT FLUSH >/dev/null
	eval "$("$FENCE_BIN" acquire "$res" --ttl 10s)" || fail "$url: acquire"
	owner=$FENCE_OWNER
	"$FENCE_BIN" show "$res" | grep -qx "FENCE_OWNER=$owner" || fail "$url: show"
	"$FENCE_BIN" extend "$res" "$owner" --ttl 20s || fail "$url: extend"
	# a waiter blocks, and the release hands the lease to it
	blpops=$(cmd_calls "$port" blpop)
	start_waiter W "$res" --ttl 10s
	w=$LAST_PID
	wait_for 20 in_queue "$port" "$res"
	blocked() { [ "$(cmd_calls "$port" blpop)" -gt "$blpops" ]; }
	wait_for 20 blocked
	"$FENCE_BIN" show "$res" | grep -qx "FENCE_WAITERS=1" || fail "$url: show's waiters"
	"$FENCE_BIN" list "$res" --json | grep -q "^{\"leases\":\[{\"resource\":\"$res\",\"owner\":\"$owner\",.*\"waiters\":1}\]}$" ||
		fail "$url: list"
	"$FENCE_BIN" release "$res" "$owner" || fail "$url: release"
	wait_exit "$w" 20
	[ "$RC" = 0 ] || fail "$url: the waiter exited $RC: $(cat "$WORK/W.err")"
	"$FENCE_BIN" release "$res" "$(sed -n 's/^FENCE_OWNER=//p' "$WORK/W.out")" ||
		fail "$url: the waiter's release"
	"$FENCE_BIN" run "$res" --ttl 600ms -- sleep 1 || fail "$url: run"
	# PostgreSQL ahead of the counter: the announce heals it
	sql -c "SELECT fence.advance($(sqlq "$res"), 1000, 'elsewhere')" >/dev/null
	eval "$("$FENCE_BIN" acquire "$res" --pg "$PGCONN")" || fail "$url: acquire --pg (heal)"
	[ "$FENCE_TOKEN" -gt 1000 ] || fail "$url: the heal gave token $FENCE_TOKEN"
	"$FENCE_BIN" release "$res" "$FENCE_OWNER" || fail "$url: release after the heal"
	say "$url: every operation works"
}

# --- one node
redis_start acl1
p=$REDIS_PORT_acl1
user "$p" "$(adds "one node")"
works "redis://fence:pw@127.0.0.1:$p" acl-single "$p"
user "$p" "$(adds "one node")" -incr
refused "fence's acquire script (EVALSHA)" "$FENCE_BIN" acquire acl-single
user "$p" "$(adds "one node")" -scan
refused "'scan'" "$FENCE_BIN" list

# --- Sentinel
sentinel_set_start aclm aclr acls 10000
surl=$(sentinel_url acls)
surl=redis-sentinel://fence:pw@${surl#redis-sentinel://}
for p in "$REDIS_PORT_aclm" "$REDIS_PORT_aclr"; do
	user "$p" "$(adds Sentinel) $(adds "\`--min-replicas\`")"
done
works "$surl" acl-sentinel "$REDIS_PORT_aclm"
FENCE_REDIS_URL=$surl "$FENCE_BIN" acquire acl-sentinel --min-replicas 1 >/dev/null ||
	fail "Sentinel: acquire --min-replicas 1"
for p in "$REDIS_PORT_aclm" "$REDIS_PORT_aclr"; do
	user "$p" "$(adds Sentinel) $(adds "\`--min-replicas\`")" -wait
done
refused "Redis refused WAIT" "$FENCE_BIN" acquire acl-sentinel-wait --min-replicas 1
lock_gone_on() { [ "$(redis-cli -p "$1" EXISTS "$(fence_key "$2" lock)")" = 0 ]; }
lock_gone_on "$REDIS_PORT_aclm" acl-sentinel-wait || fail "the lease WAIT was refused for is still held"
for p in "$REDIS_PORT_aclm" "$REDIS_PORT_aclr"; do
	user "$p" "$(adds Sentinel)" -role
done
refused "refused ROLE" "$FENCE_BIN" acquire acl-sentinel
# sentinels whose default user may not name masters (Sentinel has ACL
# users from Redis 6.2: before it, it answers ACL with an unknown command)
case $version in
6.0.* | 6.1.*)
	[ "$(redis-cli -p "$REDIS_PORT_acls1" ACL SETUSER default -sentinel\|get-master-addr-by-name 2>&1)" != OK ] ||
		fail "Sentinel of Redis $version took ACL SETUSER: the refusal of SENTINEL get-master-addr-by-name can be tested there"
	say "Sentinel of Redis $version has no ACL: no refusal of SENTINEL get-master-addr-by-name to test" ;;
*)
	for p in "$REDIS_PORT_acls1" "$REDIS_PORT_acls2" "$REDIS_PORT_acls3"; do
		redis-cli -p "$p" ACL SETUSER default -sentinel\|get-master-addr-by-name | grep -qx OK ||
			fail "ACL SETUSER on sentinel $p"
	done
	refused "refused SENTINEL get-master-addr-by-name" "$FENCE_BIN" acquire acl-sentinel ;;
esac

# --- Redis Cluster
cluster_start aclc 3
ports=("$REDIS_PORT_aclc1" "$REDIS_PORT_aclc2" "$REDIS_PORT_aclc3")
curl=$(cluster_url aclc)
curl=redis-cluster://fence:pw@${curl#redis-cluster://}
for p in "${ports[@]}"; do
	user "$p" "$(adds "Redis Cluster")"
done
slot=$(cluster_slot_of "${ports[0]}" acl-cluster)
src=$(cluster_slot_owner "${ports[0]}" "$slot")
for p in "${ports[@]}"; do [ "$p" != "$src" ] && { dst=$p; break; }; done
works "$curl" acl-cluster "$src"
# a release while the slot migrates, the lock moved already: ASK
eval "$("$FENCE_BIN" acquire acl-cluster)"
cluster_migrating "$slot" "$src" "$dst"
"$FENCE_BIN" release acl-cluster "$FENCE_OWNER" || fail "Cluster: release during a migration (ASK)"
for p in "${ports[@]}"; do
	user "$p" "$(adds "Redis Cluster")" -asking
done
refused "refused ASKING" "$FENCE_BIN" release acl-cluster "$FENCE_OWNER"
cluster_moved "$slot" "$dst" "${ports[@]}"
for p in "${ports[@]}"; do
	user "$p" "$(adds "Redis Cluster")" -cluster
done
refused "refused CLUSTER SHARDS and CLUSTER SLOTS" "$FENCE_BIN" acquire acl-cluster

# --- quorum
q=
for i in 1 2 3; do
	redis_start "aclq$i"
	user "$(redis_port "aclq$i")" "$(adds quorum)"
	q+="redis://fence:pw@127.0.0.1:$(redis_port "aclq$i") "
done
works "$q" acl-quorum "$REDIS_PORT_aclq1"
for i in 1 2 3; do
	user "$(redis_port "aclq$i")" "$(adds quorum)" -ping
done
refused "PING: NOPERM" "$FENCE_BIN" acquire acl-quorum
say "pass"
