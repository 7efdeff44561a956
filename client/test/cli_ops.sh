#!/usr/bin/env bash
# client/test/cli_ops.sh: what an operator asks the fence command, against
# the real Redis (FENCE_REDIS_URL) and PostgreSQL (PG* variables): who
# holds a lease (owner names, --name), who waits for it (fence show), and
# which leases are held (fence list).  One "ok - NAME" / "not ok - NAME" /
# "skip - NAME" line per test.
#
# The harness (FENCE_BIN, FENCE_CLI_ONLY) is clilib.sh's.
set -u
cd "$(dirname "$0")/.."
. test/clilib.sh


# --- owner names ----------------------------------------------------------

# --name puts a readable name in front of the owner id, which stays unique;
# it travels as it is to Redis, FENCE_OWNER, show and release.
# (the TTL of a minute: seven sanitized fence commands under a loaded
# machine may outlast a shorter one, which is not what this tests)
test_ops_name() {
	local res owner
	res=$(rname name)
	eval "$("$F" acquire "$res" --ttl 60s --name 'ops@db1:nightly+1')"
	[[ $FENCE_OWNER =~ ^ops@db1:nightly\+1/$HEX$ ]]
	owner=$FENCE_OWNER
	[ "$(rcli GET "$(fence_key "$res" lock)")" = "$owner" ]
	expect_rc 0 "$F" show "$res"
	grep -qx "FENCE_OWNER=$owner" "$TMP/out"
	expect_rc 0 "$F" show "$res" --json
	grep -qF "\"owner\":\"$owner\"" "$TMP/out"
	# the same name twice: two owners all the same
	eval "$("$F" acquire "$res-2" --ttl 60s --name 'ops@db1:nightly+1')"
	[[ $FENCE_OWNER =~ ^ops@db1:nightly\+1/$HEX$ ]]
	[ "$FENCE_OWNER" != "$owner" ]
	expect_rc 0 "$F" release "$res-2" "$FENCE_OWNER"
	expect_rc 76 "$F" release "$res" "ops@db1:nightly+1"
	expect_rc 0 "$F" release "$res" "$owner"
	# -n, and 64 bytes is not too long
	eval "$("$F" acquire "$res" -n "$(printf 'x%.0s' $(seq 64))")"
	[[ $FENCE_OWNER =~ ^x{64}/$HEX$ ]]
	expect_rc 0 "$F" release "$res" "$FENCE_OWNER"
}

# Names that could not travel as they are: refused (64) before anything is
# contacted (the Redis named here does not exist).
test_ops_name_refused() {
	local dead=redis://127.0.0.1:1 bad
	for bad in '' 'a b' 'a.b' 'a/b' 'a\b' "a'b" 'a"b' 'a$b' 'a{b}' 'é' "$(printf 'a\tb')" \
		"$(printf 'x%.0s' $(seq 65))"; do
		expect_rc 64 "$F" acquire r --name "$bad" --redis $dead
		grep -q -- '--name: owner name' "$TMP/err"
	done
	grep -q 'too long (65 bytes, at most 64)' "$TMP/err"
	expect_rc 64 "$F" run r --name 'a.b' --redis $dead -- true
	grep -q "may not hold '.'" "$TMP/err"
	expect_rc 64 "$F" exec r --name 'a b' --redis $dead --pg "$PGC" 'SELECT 1'
	expect_rc 69 "$F" acquire r --name 'ok:name_1-2@x+y' --redis $dead
}

# Without --name: HOST:PID:COMMAND, for the process the lease is for.  run:
# fence's own pid (the command's parent) and the command's name; acquire:
# the process that started fence.  What a name may not hold becomes '_'.
test_ops_name_default() {
	local res host
	res=$(rname default)
	host=$(hostname | cut -d. -f1 | cut -c1-32)
	expect_rc 0 "$F" run "$res" -- sh -c 'echo "$FENCE_OWNER $PPID"'
	read -r owner ppid <"$TMP/out"
	[[ $owner =~ ^$host:$ppid:sh/$HEX$ ]]
	expect_rc 0 "$F" acquire "$res" --ttl 5s
	grep -Eqx "FENCE_OWNER=$host:$BASHPID:bash/$HEX" "$TMP/out"
	eval "$(cat "$TMP/out")"
	"$F" release "$res" "$FENCE_OWNER"
	# a command whose name holds a '.', run by its path
	printf '#!/bin/sh\necho "$FENCE_OWNER"\n' >"$TMP/my.job"
	chmod +x "$TMP/my.job"
	expect_rc 0 "$F" run "$res" -- "$TMP/my.job"
	grep -Eqx "$host:[0-9]+:my_job/$HEX" "$TMP/out"
	# a host name with dots gives its first label
	if unshare -u true 2>/dev/null; then
		unshare -u sh -c 'hostname db-7.example.com && exec "$@"' sh \
			"$F" run "$res" -- sh -c 'echo "$FENCE_OWNER"' >"$TMP/out"
		grep -Eqx "db-7:[0-9]+:sh/$HEX" "$TMP/out"
	fi
}

# The named owner travels into PostgreSQL: PGOPTIONS (-c fence.owner=...),
# the session's fence.owner and the mark's owner in fence.fences.
test_ops_name_pg() {
	local res owner
	res=$(rname namepg)
	expect_rc 0 "$F" run "$res" --name 'etl:load@db1' --pg "$PGC" -- sh -c \
		'echo "$FENCE_OWNER"; echo "$PGOPTIONS"; psql -XAtc "SHOW fence.owner"'
	owner=$(sed -n 1p "$TMP/out")
	[[ $owner =~ ^etl:load@db1/$HEX$ ]]
	[[ $(sed -n 2p "$TMP/out") == *"-c fence.owner=$owner" ]]
	[ "$(sed -n 3p "$TMP/out")" = "$owner" ]
	[ "$(psql -XAtc "SELECT owner FROM fence.fences WHERE resource = '$res'")" = "$owner" ]
}

# --- waiters --------------------------------------------------------------

# field NAME: the value of NAME=... in the last output (eval'd, unquoted)
field() { (eval "$(cat "$TMP/out")" && eval "echo \"\${$1}\""); }
waiters_are() {
	"$F" show "$1" >"$TMP/out" 2>"$TMP/err" || return 1
	local want=("${@:2}") i
	[ "$(field FENCE_WAITERS)" = "${#want[@]}" ] || return 1
	for ((i = 0; i < ${#want[@]}; i++)); do
		[[ $(field "FENCE_WAITER_$((i + 1))") =~ ^${want[i]}/$HEX$ ]] || return 1
	done
}

# fence show lists the live waiters, first first, in both forms; a waiter
# killed with -9 leaves the list once its place lapses (2 s without
# asking again), while the one behind it stays, and gets the lease.
test_ops_show_waiters() {
	local res holder a b
	res=$(rname waiters)
	eval "$("$F" acquire "$res" --ttl 30s --name holder)"
	holder=$FENCE_OWNER
	waiters_are "$res"
	"$F" acquire "$res" --wait 30s --name first >"$TMP/a.out" 2>&1 &
	a=$!
	wait_for 5 waiters_are "$res" first
	"$F" acquire "$res" --wait 30s --name second >"$TMP/b.out" 2>&1 &
	b=$!
	wait_for 5 waiters_are "$res" first second
	grep -qx "FENCE_OWNER=$holder" "$TMP/out"
	expect_rc 0 "$F" show "$res" --json
	python3 -c 'import json, re, sys
v = json.loads(sys.stdin.read())
assert [re.sub("/[0-9a-f]{32}$", "", w) for w in v["waiters"]] == ["first", "second"], v' <"$TMP/out"
	kill -9 $a
	wait $a 2>/dev/null || true
	# Redis still holds its place for up to 2 s; show counts live places
	wait_for 5 waiters_are "$res" second
	expect_rc 0 "$F" release "$res" "$holder"
	wait $b
	grep -Eq "^FENCE_OWNER=second/$HEX$" "$TMP/b.out"
	waiters_are "$res"
	eval "$(cat "$TMP/b.out")"
	"$F" release "$res" "$FENCE_OWNER"
}

# Only live places count: a place whose time has passed on Redis's clock
# is not a waiter, although the queue holds it (the scripts drop it only
# when they run); nor is a queue entry without a place.  Made by hand, as
# another language's client would leave them.
test_ops_waiters_lapsed() {
	local res q a now
	res=$(rname lapsed)
	q="$(fence_key "$res" queue)" a="$(fence_key "$res" alive)"
	now=$(rcli TIME | head -1)000
	rcli ZADD "$q" 1 gone/1 2 live/2 3 noplace/3 >/dev/null
	rcli ZADD "$a" $((now - 1000)) gone/1 $((now + 60000)) live/2 >/dev/null
	rcli PEXPIRE "$q" 60000 >/dev/null
	rcli PEXPIRE "$a" 60000 >/dev/null
	expect_rc 0 "$F" show "$res"
	grep -qx 'FENCE_WAITERS=1' "$TMP/out"
	grep -qx 'FENCE_WAITER_1=live/2' "$TMP/out"
	expect_rc 0 "$F" show "$res" --json
	grep -qF '"waiters":["live/2"]' "$TMP/out"
	[ "$(rcli ZCARD "$q")" = 3 ]
	# keys of another type: fence never writes them (65)
	rcli DEL "$q" >/dev/null
	rcli SET "$q" x PX 60000 >/dev/null
	expect_rc 65 "$F" show "$res"
	rcli DEL "$q" "$a" >/dev/null
}

# --- list -----------------------------------------------------------------

# json_leases: "RESOURCE OWNER TTL_MS TOKEN WAITERS", separated by tabs,
# per lease of a "fence list --json" in $TMP/out, names with bytes escaped
# as Python does
json_leases() {
	python3 -c 'import json, sys
for l in json.loads(sys.stdin.buffer.read().decode())["leases"]:
    print(ascii(l["resource"])[1:-1], l["owner"], l["ttl_ms"], l["token"], l["waiters"], sep="\t")' <"$TMP/out"
}
cmdstat() { rcli INFO commandstats | tr -d '\r' | sed -n "s/^cmdstat_$1:calls=\([0-9]*\).*/\1/p" | grep . || echo 0; }

# fence list: the held leases whose names match, sorted, with owner, TTL,
# token and live waiters; a free or expired lease is not there; nothing
# held is an empty list and exit 0.  SCAN, never KEYS.
test_ops_list() {
	local p o1 o2 keys scans w
	p=$(rname list)
	eval "$("$F" acquire "$p-b" --ttl 180s --name bee)"
	o2=$FENCE_OWNER
	eval "$("$F" acquire "$p-a" --ttl 60s --name ay)"
	o1=$FENCE_OWNER
	"$F" acquire "$p-gone" --ttl 10s >/dev/null
	"$F" acquire "$p-short" --ttl 100ms >/dev/null
	eval "$("$F" acquire "$p-freed" --ttl 10s)"
	"$F" release "$p-freed" "$FENCE_OWNER"
	# TTLs of a minute and more: the waiter must still be waiting at the end
	# on a loaded machine, where this test can take tens of seconds
	"$F" acquire "$p-a" --wait 120s --name w >"$TMP/w.out" 2>&1 &
	w=$!
	wait_for 5 sh -c "[ \"\$(\"$F\" show '$p-a' --json | grep -o '\"waiters\":\[\"w/')\" ]"
	rcli DEL "$(fence_key "$p-gone" lock)" >/dev/null
	sleep 0.2
	keys=$(cmdstat keys) scans=$(cmdstat scan)
	expect_rc 0 "$F" list "$p-*"
	[ "$(cmdstat keys)" = "$keys" ]
	[ "$(cmdstat scan)" -gt "$scans" ]
	[ "$(wc -l <"$TMP/out")" = 3 ]
	grep -Eqx 'RESOURCE +OWNER +TTL +TOKEN +WAITERS' <(head -1 "$TMP/out")
	grep -Eqx "$p-a +$o1 +[0-9]+ms +[0-9]+ +1" <(sed -n 2p "$TMP/out")
	grep -Eqx "$p-b +$o2 +[0-9]+ms +[0-9]+ +0" <(sed -n 3p "$TMP/out")
	expect_rc 0 "$F" list "$p-*" --json
	json_leases >"$TMP/leases"
	[ "$(wc -l <"$TMP/leases")" = 2 ]
	read -r r o ttl tok n < <(sed -n 1p "$TMP/leases")
	[ "$r $o $tok $n" = "$p-a $o1 $(rcli GET "$(fence_key "$p-a" token)") 1" ]
	[ "$ttl" -gt 0 ] && [ "$ttl" -le 60000 ]
	read -r r o ttl tok n < <(sed -n 2p "$TMP/leases")
	[ "$r $o $n" = "$p-b $o2 0" ] && [ "$ttl" -gt 60000 ] && [ "$ttl" -le 180000 ]
	# a pattern that matches one, and one that matches none
	expect_rc 0 "$F" list "$p-?"
	[ "$(wc -l <"$TMP/out")" = 3 ]
	expect_rc 0 "$F" list "$p-b"
	[ "$(wc -l <"$TMP/out")" = 2 ]
	expect_rc 0 "$F" list "$p-nothing*"
	[ ! -s "$TMP/out" ]
	expect_rc 0 "$F" list "$p-nothing*" --json
	grep -qx '{"leases":\[\]}' "$TMP/out"
	# without a pattern, every lease: ours among them
	expect_rc 0 "$F" list --json
	json_leases | grep -q "^$p-b	$o2	"
	kill $w
	wait $w 2>/dev/null || true
	"$F" release "$p-a" "$o1"
	"$F" release "$p-b" "$o2"
}

# Names of any bytes come back exact (JSON) or escaped (text); a pattern
# matches names, whatever fence_key() makes of '{', '}' and '%' in keys;
# keys fence never writes as a lock are not leases; bad patterns are usage
# errors found before anything is contacted.
test_ops_list_names() {
	local p r dead=redis://127.0.0.1:1
	p=$(rname names)
	for r in "$p-{x}" "$p-%7D" "$p-a\b" "$p-sp ace" "$(printf '%s-nl\nx' "$p")" "$p-é"; do
		"$F" acquire "$r" --ttl 20s >/dev/null
	done
	# a wake list whose owner ends in "}:lock" matches the lock pattern
	rcli SET "fence:{$p-w}:wake:x}:lock" 1 PX 20000 >/dev/null
	rcli SET "fence:{$p-%zz}:lock" 1 PX 20000 >/dev/null
	expect_rc 0 "$F" list "$p-*" --json
	json_leases | cut -f1 >"$TMP/names"
	diff "$TMP/names" - <<-EOF
		$p-%7D
		$p-a\\\\b
		$p-nl\nx
		$p-sp ace
		$p-{x}
		$p-\xe9
	EOF
	expect_rc 0 "$F" list "$p-*"
	grep -qF "$p-nl\\x0Ax " "$TMP/out"
	grep -qF "$p-a\\\\b " "$TMP/out"
	grep -q "^$p-é " "$TMP/out"
	expect_rc 0 "$F" list "$p-{*"
	[ "$(json_leases 2>/dev/null; wc -l <"$TMP/out")" = 2 ]
	expect_rc 0 "$F" list "$p-\{*" --json
	[ "$(json_leases | cut -f1)" = "$p-{x}" ]
	expect_rc 0 "$F" list "$p-%*" --json
	[ "$(json_leases | cut -f1)" = "$p-%7D" ]
	expect_rc 0 "$F" list "$p-[ab]\\\\*" --json
	[ "$(json_leases | cut -f1)" = "$p-a\\\\b" ]
	expect_rc 64 "$F" list "$p-[{]" --redis $dead
	grep -q "may not hold '{' inside \[...\]" "$TMP/err"
	expect_rc 64 "$F" list '' --redis $dead
	expect_rc 64 "$F" list a b --redis $dead
	expect_rc 64 "$F" list "$(head -c 2049 /dev/zero | tr '\0' x)" --redis $dead
	expect_rc 69 "$F" list --redis $dead
	rcli DEL "fence:{$p-w}:wake:x}:lock" "fence:{$p-%zz}:lock" >/dev/null
}

# More leases and keys than one SCAN call returns: the cursor is followed
# to its end, each lease found once.
test_ops_list_many() {
	local p i
	p=$(rname many)
	for i in $(seq 300); do
		echo "SET fence:{$p-$i}:lock owner-$i PX 60000"
	done | rcli --pipe >/dev/null
	for i in $(seq 3000); do
		echo "SET $p-filler-$i x PX 60000"
	done | rcli --pipe >/dev/null
	expect_rc 0 "$F" list "$p-*" --json
	[ "$(json_leases | wc -l)" = 300 ]
	[ "$(json_leases | cut -f1 | sort -u | wc -l)" = 300 ]
	json_leases | grep -qx "$p-17	owner-17	[0-9]*	0	0"
	for i in $(seq 300); do echo "DEL fence:{$p-$i}:lock"; done | rcli --pipe >/dev/null
	expect_rc 0 "$F" list "$p-*"
	[ ! -s "$TMP/out" ]
}

# A quorum of three databases of the one server: a lease counts when a
# majority has the same owner's lock, for the majority-th longest TTL; a
# lock on a minority is no lease.  One member down: still listed; two: 69.
test_ops_list_quorum() {
	local p q1 q2 q3 down=redis://127.0.0.1:1 n
	p=$(rname qlist)
	q1=$FENCE_REDIS_URL/11 q2=$FENCE_REDIS_URL/12 q3=$FENCE_REDIS_URL/13
	eval "$("$F" acquire "$p-a" --ttl 20s --name qa --redis "$q1" --redis "$q2" --redis "$q3")"
	[[ $FENCE_OWNER =~ ^qa/$HEX\.1$ ]]
	rcli -n 11 SET "$(fence_key "$p-min" lock)" someone PX 20000 >/dev/null
	rcli -n 11 SET "$(fence_key "$p-maj" lock)" other PX 30000 >/dev/null
	rcli -n 12 SET "$(fence_key "$p-maj" lock)" other PX 9000 >/dev/null
	rcli -n 13 SET "$(fence_key "$p-maj" lock)" third PX 40000 >/dev/null
	expect_rc 0 "$F" list "$p-*" --json --redis "$q1" --redis "$q2" --redis "$q3"
	json_leases >"$TMP/leases"
	[ "$(cut -f1,2 "$TMP/leases")" = "$p-a	$FENCE_OWNER
$p-maj	other" ]
	n=$(sed -n 2p "$TMP/leases" | cut -f3)
	[ "$n" -gt 0 ] && [ "$n" -le 9000 ]
	expect_rc 0 "$F" list "$p-*" --json --redis "$q1" --redis "$down" --redis "$q3"
	[ "$(json_leases | cut -f1)" = "$p-a" ]
	expect_rc 69 "$F" list "$p-*" --redis "$q1" --redis "$down" --redis redis://127.0.0.1:2
	grep -q 'a majority needs 2' "$TMP/err"
	expect_rc 0 "$F" release "$p-a" "$FENCE_OWNER" --redis "$q1" --redis "$q2" --redis "$q3"
	for n in 11 12 13; do
		rcli -n $n DEL "$(fence_key "$p-min" lock)" "$(fence_key "$p-maj" lock)" "$(fence_key "$p-a" token)" >/dev/null
	done
}

# --- forgotten marks ------------------------------------------------------

# fence.forget() deletes old marks and leaves a floor per prefix.  The
# holder of a key that was forgotten still has its Redis counter above the
# floor and goes on; a new key under that prefix starts its counter at 1,
# is refused (LF001), lifts its counter above the floor and takes a fresh
# token, once; fence show reports the floor as PostgreSQL's mark; and the
# token an old holder kept is refused for good.
forget_aged() {
	psql -XAtq -c "UPDATE fence.fences SET updated_at = updated_at - interval '2 days'
		WHERE resource LIKE '$1:%'" -c "SELECT fence.forget('1 day')"
}
pg_mark() { psql -XAtc "SELECT token FROM fence.fences WHERE resource = '$1'"; }
# What the banner above says of fence.forget(), played with the command.
test_ops_forget() {
	local base old floor i
	base=$(rname forget)
	for i in 1 2 3 4 5; do
		expect_rc 0 "$F" exec "$base:1" --pg "$PGC" 'SELECT 1'
	done
	expect_rc 0 "$F" exec "$base:2" --pg "$PGC" 'SELECT 1'
	# an old holder of key 1, announced, whose mark is then forgotten
	eval "$("$F" acquire "$base:1" --ttl 10s --pg "$PGC")"
	old=$FENCE_TOKEN
	[ "$old" = 6 ]
	"$F" release "$base:1" "$FENCE_OWNER"
	[ "$(forget_aged "$base")" -ge 2 ]
	[ -z "$(pg_mark "$base:1")" ]
	floor=$(psql -XAtc "SELECT token FROM fence.floors WHERE prefix = '$base'")
	[ "$floor" = 6 ]
	# the old token is refused, as the stale writer would send it
	refute psql -XAtqc "SELECT fence.advance('$base:1', $old)" >/dev/null 2>"$TMP/err"
	grep -q 'stale fencing token' "$TMP/err"
	# fence show: the floor is what PostgreSQL refuses up to
	expect_rc 0 "$F" show "$base:new" --pg "$PGC"
	grep -qx "FENCE_PG_TOKEN=$floor" "$TMP/out"
	grep -qx "FENCE_TOKEN=0" "$TMP/out"
	# a new key: its counter is lifted to the floor once, its token is next
	eval "$("$F" acquire "$base:new" --ttl 10s --pg "$PGC")"
	[ "$FENCE_TOKEN" = $((floor + 1)) ]
	[ "$(rcli GET "$(fence_key "$base:new" token)")" = $((floor + 1)) ]
	[ "$(pg_mark "$base:new")" = $((floor + 1)) ]
	"$F" release "$base:new" "$FENCE_OWNER"
	# the same through fence exec and fence run, for two more new keys
	expect_rc 0 "$F" exec "$base:new2" --pg "$PGC" 'SELECT 1'
	[ "$(pg_mark "$base:new2")" = $((floor + 1)) ]
	expect_rc 0 "$F" run "$base:new3" --pg "$PGC" -- sh -c 'echo "$FENCE_TOKEN"'
	[ "$(cat "$TMP/out")" = $((floor + 1)) ]
	# key 1, forgotten: its counter is above the floor, no lift needed
	expect_rc 0 "$F" exec "$base:1" --pg "$PGC" 'SELECT 1'
	[ "$(pg_mark "$base:1")" = $((old + 1)) ]
	# key 2, forgotten at 1: below the floor, lifted like a new key
	expect_rc 0 "$F" exec "$base:2" --pg "$PGC" 'SELECT 1'
	[ "$(pg_mark "$base:2")" = $((floor + 1)) ]
	psql -XAtq -c "SELECT fence.reset(resource) FROM fence.fences WHERE resource LIKE '$base:%'" \
		-c "DELETE FROM fence.floors WHERE prefix = '$base'"
}

run_test ops_name
run_test ops_name_refused
run_test ops_name_default
run_test ops_name_pg pg
run_test ops_show_waiters
run_test ops_waiters_lapsed
run_test ops_list
run_test ops_list_names
run_test ops_list_many
run_test ops_list_quorum
run_test ops_forget pg

echo "# client operator CLI tests: $passed passed, $failed failed, $skipped skipped"
[ $failed = 0 ]
