#!/usr/bin/env bash
# client/test/tls.sh: the fence command over TLS, against the servers of
# test/run.sh's "tls" suite (FENCE_TEST_TLS_*, see test_tls.c) and the
# plain Redis in FENCE_REDIS_URL: what each TLS failure prints, and its
# exit status (78 for a configuration the servers or we refuse, 69 for a
# server that does not answer), on every topology.  One "ok - NAME" /
# "not ok - NAME" / "skip - NAME" line per test.
set -u
cd "$(dirname "$0")/.."
. test/clilib.sh

D=${FENCE_TEST_TLS_DIR:-}
read -r GOOD MTLS WRONGHOST EXPIRED ROGUE STOP <<<"${FENCE_TEST_TLS_PORTS:-}"
PLAIN=${FENCE_REDIS_URL##*:}

# url PORT [PARAM...]: a rediss:// URL of PORT that trusts the test CA
url() {
	local u="rediss://127.0.0.1:$1?tls-ca-cert-file=$D/ca.pem" p
	shift
	for p in "$@"; do u+="&$p"; done
	echo "$u"
}
CLIENT_CERT=("tls-cert-file=$D/client.pem" "tls-key-file=$D/client.key")
tcli() { redis-cli --tls --cacert "$D/ca.pem" -p "$@"; }

# refused WANT_RC PATTERN URL: acquire is refused with WANT_RC at once (no
# retries until the command timeout), saying PATTERN.
refused() {
	local t0=$SECONDS
	expect_rc "$1" "$F" acquire "$(rname refused)" --redis "$3"
	# OpenSSL's words in any case (1.1 says "Hostname mismatch")
	grep -qi -- "$2" "$TMP/err" || { echo "no \"$2\" in:"; cat "$TMP/err"; return 1; }
	[ $((SECONDS - t0)) -lt 3 ] || { echo "took $((SECONDS - t0)) s"; return 1; }
}

# OpenSSL is opened at the first TLS URL (client/ssl.c): a run over TLS
# has it mapped (cli.sh's cli_lazy_libpq checks that a plain one does not),
# opened by fence, not by the loader at start.
test_tls_cli_lazy_openssl() {
	local res
	res=$(rname lazyssl)
	LD_DEBUG=files "$F" run "$res" --no-pg --redis "$(url "$GOOD")" -- \
		sh -c 'cat /proc/$PPID/maps >"$0"' "$TMP/maps" 2>"$TMP/ld"
	grep -q '/libssl\.so' "$TMP/maps"
	grep -q 'file=libssl.so.[0-9.]* .*dynamically loaded' "$TMP/ld"
	if grep -q '/libpq\.so' "$TMP/maps"; then return 1; fi
}

# acquire, show and release over TLS land on the TLS server, and run's
# heartbeat renews a 600 ms lease over it.
test_tls_cli_lease() {
	local res
	res=$(rname lease)
	expect_rc 0 "$F" acquire "$res" --redis "$(url "$GOOD")" --ttl 10s
	grep -q '^FENCE_TOKEN=[0-9]' "$TMP/out"
	local owner
	owner=$(sed -n 's/^FENCE_OWNER=//p' "$TMP/out")
	[ "$(tcli "$GOOD" GET "$(fence_key "$res" lock)")" = "$owner" ]
	expect_rc 0 "$F" show "$res" --redis "$(url "$GOOD")"
	grep -q "^FENCE_OWNER=$owner" "$TMP/out"
	expect_rc 0 "$F" release "$res" "$owner" --redis "$(url "$GOOD")"
	[ "$(tcli "$GOOD" EXISTS "$(fence_key "$res" lock)")" = 0 ]
	# fence run: the heartbeat renews a 600 ms lease over TLS for 1.5 s
	expect_rc 0 "$F" run "$res" --ttl 600ms --redis "$(url "$GOOD")" -- sleep 1.5
}

# Each certificate problem: exit 78, and the message says which.
test_tls_cli_refused() {
	refused 78 'certificate not trusted: IP address mismatch' "$(url "$WRONGHOST")"
	refused 78 'certificate not trusted: hostname mismatch' "$(url "$GOOD" tls-server-name=other.test)"
	refused 78 'certificate not trusted: certificate has expired' "$(url "$EXPIRED")"
	refused 78 'certificate not trusted: unable to get local issuer certificate' "$(url "$ROGUE")"
	refused 78 'tls-cert-file, tls-key-file' "$(url "$MTLS")"
	refused 78 'TLS: .*refused' \
		"$(url "$MTLS" "tls-cert-file=$D/rogue-client.pem" "tls-key-file=$D/rogue-client.key")"
	refused 78 "tls-ca-cert-file $D/none.pem: No such file or directory" \
		"rediss://127.0.0.1:$GOOD?tls-ca-cert-file=$D/none.pem"
	refused 78 'is not the key of' "$(url "$MTLS" "tls-cert-file=$D/client.pem" "tls-key-file=$D/server.key")"
	# and what does work
	expect_rc 0 "$F" acquire "$(rname mtls)" --redis "$(url "$MTLS" "${CLIENT_CERT[@]}")"
	expect_rc 0 "$F" acquire "$(rname name)" --redis "$(url "$GOOD" tls-server-name=redis.test)"
	expect_rc 0 "$F" acquire "$(rname dir)" --redis "rediss://localhost:$GOOD?tls-ca-cert-dir=$D/cadir"
}

# Turning verification off works, and says so every time.
test_tls_cli_insecure() {
	expect_rc 0 "$F" acquire "$(rname insecure)" --redis "$(url "$EXPIRED" tls-insecure-skip-verify=yes)"
	grep -q 'warning: tls-insecure-skip-verify=yes' "$TMP/err"
	expect_rc 0 "$F" acquire "$(rname insecure2)" --redis "$(url "$GOOD")"
	refute grep -q 'warning' "$TMP/err"
}

# Malformed TLS settings are usage errors, found before anything is contacted.
test_tls_cli_usage() {
	refused 64 'TLS parameter "tls-ca-cert-file" needs a TLS URL' \
		"redis://127.0.0.1:1?tls-ca-cert-file=$D/ca.pem"
	refused 64 'TLS parameter "tls-cert-file" needs a TLS URL' "unix:///tmp/x.sock?tls-cert-file=x"
	refused 64 'unknown query parameter "tls-ca"' "rediss://127.0.0.1:1?tls-ca=x"
	refused 64 'tls-cert-file and tls-key-file go together' "rediss://127.0.0.1:1?tls-cert-file=x"
	refused 64 'tls-insecure-skip-verify must be yes or no' "rediss://127.0.0.1:1?tls-insecure-skip-verify=1"
	refused 64 'given twice' "rediss://127.0.0.1:1?tls-server-name=a&tls-server-name=b"
	refused 64 'needs a value' "rediss://127.0.0.1:1?tls-server-name"
}

# Servers that do not answer the handshake cost the 5 s connect timeout
# and exit 69: a TLS server frozen after accepting (SIGSTOP), a plain
# server spoken to with rediss://.  A plain client at a TLS port is reset.
test_tls_cli_unreachable() {
	local t0 pid=${FENCE_TEST_TLS_STOP_PID:?}
	kill -STOP "$pid"
	t0=$SECONDS
	expect_rc 69 "$F" acquire "$(rname frozen)" --redis "$(url "$STOP")" || { kill -CONT "$pid"; return 1; }
	kill -CONT "$pid"
	grep -q 'TLS handshake with Redis (127.0.0.1:[0-9]*): timed out' "$TMP/err"
	[ $((SECONDS - t0)) -le 8 ]
	t0=$SECONDS
	expect_rc 69 "$F" acquire "$(rname plain)" --redis "$(url "$PLAIN")"
	grep -q 'TLS handshake with Redis .*: timed out (as with a server that does not speak TLS' "$TMP/err"
	[ $((SECONDS - t0)) -le 8 ]
	expect_rc 69 "$F" acquire "$(rname notls)" --redis "redis://127.0.0.1:$GOOD"
	grep -q 'if that port speaks TLS, use rediss://' "$TMP/err"
}

# The name sent as SNI: the host's, tls-server-name's, none for an IP
# address (a proxy that terminates TLS in front of the plain Redis notes it).
test_tls_cli_sni() {
	local port pid
	: >"$TMP/sni"
	python3 test/sni_proxy.py "$D/server.pem" "$D/server.key" "$PLAIN" "$TMP/sni" \
		>"$TMP/sni.port" 2>"$TMP/sni.err" &
	pid=$!
	wait_for 5 test -s "$TMP/sni.port" || { echo "no proxy"; cat "$TMP/sni.err"; kill "$pid"; return 1; }
	port=$(cat "$TMP/sni.port")
	expect_rc 0 "$F" acquire "$(rname sni1)" --redis "$(url "$port" tls-server-name=redis.test)" &&
		expect_rc 0 "$F" acquire "$(rname sni2)" --redis "rediss://localhost:$port?tls-ca-cert-file=$D/ca.pem" &&
		expect_rc 0 "$F" acquire "$(rname sni3)" --redis "$(url "$port")"
	local rc=$?
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	[ $rc = 0 ] || return 1
	[ "$(cat "$TMP/sni")" = "$(printf 'redis.test\nlocalhost\n-')" ] || { cat "$TMP/sni"; return 1; }
}

# Sentinel, Cluster and a quorum, each over TLS.
test_tls_cli_topologies() {
	local s c q res owner
	read -r s1 s2 s3 <<<"$FENCE_TEST_TLS_SENTINEL"
	read -r c1 c2 c3 <<<"$FENCE_TEST_TLS_CLUSTER"
	read -r q1 q2 q3 <<<"$FENCE_TEST_TLS_QUORUM"
	s="rediss-sentinel://127.0.0.1:$s1,127.0.0.1:$s2,127.0.0.1:$s3/tlss?tls-ca-cert-file=$D/ca.pem"
	c="rediss-cluster://127.0.0.1:$c1,127.0.0.1:$c2?tls-ca-cert-file=$D/ca.pem"
	q="$(url "$q1") $(url "$q2") $(url "$q3")"
	for u in "$s" "$c" "$q"; do
		res=$(rname topo)
		FENCE_REDIS_URL=$u expect_rc 0 "$F" acquire "$res"
		owner=$(sed -n 's/^FENCE_OWNER=//p' "$TMP/out")
		FENCE_REDIS_URL=$u expect_rc 0 "$F" release "$res" "$owner"
		# a command that outlasts the TTL: renewed over TLS (600 ms, as
		# it was, lost the lease to a machine loaded by other suites)
		FENCE_REDIS_URL=$u expect_rc 0 "$F" run "$res" --ttl 2s -- sleep 3
	done
	# the sentinels' own certificate is checked too
	refused 78 'certificate not trusted' \
		"rediss-sentinel://127.0.0.1:$s1/tlss?tls-ca-cert-file=$D/rogue-ca.pem"
	refused 78 'certificate not trusted' \
		"rediss-cluster://127.0.0.1:$c1?tls-ca-cert-file=$D/rogue-ca.pem"
}

# killed_idle PORT... -- URL...: fence run holds a lease for 2 s on URLs
# while the TLS servers on PORTs close its idle connections (CLIENT KILL,
# as their "timeout" would): each says close_notify before its FIN, and
# that counts as closed, so the release at the end goes out on a fresh
# connection, lands, and no warning is printed.
killed_idle() {
	local ports=() urls=() res pid rc=0 p
	while [ "$1" != -- ]; do ports+=("$1"); shift; done
	shift
	for p in "$@"; do urls+=(--redis "$p"); done
	res=$(rname idle$RANDOM)
	# the command runs until its connections are all closed, even on a
	# loaded machine (2 s could end first: the release then met the kill)
	"$F" run "$res" --no-pg --ttl 9s "${urls[@]}" -- sleep 6 >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	for p in "${ports[@]}"; do
		wait_for 5 eval '[ "$(tcli "$p" EXISTS "$(fence_key "$res" lock)")" = 1 ]'
		wait_for 5 kill_conns $pid "$p" --tls --cacert "$D/ca.pem" || echo "# nothing closed on $p"
	done
	wait $pid || rc=$?
	[ $rc = 0 ] || { echo "exit $rc"; cat "$TMP/err"; return 1; }
	if grep -q . "$TMP/err"; then cat "$TMP/err"; return 1; fi
	for p in "${ports[@]}"; do
		[ "$(tcli "$p" EXISTS "$(fence_key "$res" lock)")" = 0 ] || { echo "lock left on $p"; return 1; }
	done
}

# TLS servers closing an idle lease's connections, one node and a quorum:
# the release still lands, without a warning (killed_idle).
test_tls_cli_idle_closed() {
	local q1 q2 q3
	read -r q1 q2 q3 <<<"$FENCE_TEST_TLS_QUORUM"
	killed_idle "$GOOD" -- "$(url "$GOOD")"
	killed_idle "$q1" "$q2" "$q3" -- "$(url "$q1")" "$(url "$q2")" "$(url "$q3")"
}

if [ -z "$D" ] || [ -z "${STOP:-}" ]; then
	echo "skip - tls_cli # no TLS servers (FENCE_TEST_TLS_DIR, FENCE_TEST_TLS_PORTS)"
	exit 0
fi
run_test tls_cli_lease
run_test tls_cli_lazy_openssl
run_test tls_cli_refused
run_test tls_cli_insecure
run_test tls_cli_usage
run_test tls_cli_unreachable
run_test tls_cli_sni
run_test tls_cli_topologies
run_test tls_cli_idle_closed

echo "# TLS CLI tests: $passed passed, $failed failed, $skipped skipped"
[ $failed = 0 ]
