#!/usr/bin/env bash
# client/test/cli_secrets.sh: the Redis password stays where it was put,
# against a redis-server of this file's own with requirepass and ACL
# users: the process title masks it where the URL parser ends the
# credentials, no message, --json field or -v line of any URL error
# carries it from any of its sources, and fence run keeps it from the
# command unless --inherit-password.  One "ok - NAME" / "not ok - NAME" /
# "skip - NAME" line per test.
#
# The harness (FENCE_BIN, FENCE_CLI_ONLY) is clilib.sh's.
set -u
cd "$(dirname "$0")/.."
. test/clilib.sh

# title_of PID: what ps and /proc/PID/cmdline show of it, one line each.
title_of() {
	tr '\0' ' ' <"/proc/$1/cmdline"
	echo
	ps -o args= -p "$1"
}

# run_masked URL PW SHOWN: fence run with URL on its command line logs in,
# and while the command runs its process title shows SHOWN, never PW.
run_masked() {
	local url=$1 pw=$2 shown=$3 res pid title
	res=$(rname masked)
	"$F" run "$res" --ttl 10s --redis "$url" -- sleep 30 >"$TMP/ps.out" 2>&1 &
	pid=$!
	if ! wait_for 5 pgrep -P "$pid" sleep >/dev/null; then
		cat "$TMP/ps.out"
		return 1
	fi
	title=$(title_of "$pid")
	kill -TERM "$pid"
	wait "$pid" || true
	echo "title: $title"
	[[ $title != *"$pw"* ]] && [[ $title == *"--redis $shown -- sleep 30"* ]]
}

# --- one rule for where the credentials end ------------------------------------

# The parser ends the credentials at the last '@' before the host; the
# title's mask ended them at the first, so that "redis://:sec@ret@host"
# showed ":***@ret@host", and with an '@' in an ACL user's name the whole
# password stayed in ps.  Both log in (the parser's rule) and are masked
# by the same rule.
test_secret_title_last_at() {
	auth_redis 'sec@ret'
	redis-cli -p "$PORT" -a 'sec@ret' --no-auth-warning ACL SETUSER 'us@er' on '>hunter2pw' '~*' '+@all' >/dev/null
	run_masked "redis://:sec@ret@127.0.0.1:$PORT" 'ret@' "redis://:***@127.0.0.1:$PORT" &&
		run_masked "redis://us@er:hunter2pw@127.0.0.1:$PORT" hunter2pw "redis://us@er:***@127.0.0.1:$PORT" &&
		run_masked "redis://us@er:hunter2pw@127.0.0.1:$PORT/0" hunter2pw "redis://us@er:***@127.0.0.1:$PORT/0"
}

# --- URL errors, with the password from each source ----------------------------

# Every way a URL can be refused (exit 64), each with the password from the
# URL itself, --password-file, FENCE_REDIS_PASSWORD and REDISCLI_AUTH, with
# and without an ACL user, in plain, --json and -v output: the message
# quotes the URL, never the password, raw or percent-encoded.  Before, the
# password of the file or the environment was put into the URL and the
# "invalid Redis URL" message quoted it in clear.
test_secret_url_errors() {
	local pw='Zq9-Secret@x/y' enc='Zq9-Secret%40x%2Fy' res bad src user cred n=0 leaks=0 form
	local -a forms=(
		'redis://CRED127.0.0.1:99999'
		'redis://CRED127.0.0.1:0'
		'redis://CRED127.0.0.1:x'
		'redis://CRED127.0.0.1/x'
		'redis://CRED127.0.0.1?db=1'
		'redis://CRED127.0.0.1?tls-ca-cert-file=/x'
		'redis://CRED127.0.0.1?'
		'redis://CREDho$t'
		'redis://CRED[::1'
		'redis://CRED'
		'rediss://CRED127.0.0.1?tls-cert-file=/x'
		'rediss://CRED127.0.0.1?tls-insecure-skip-verify=maybe'
		'rediss://CRED127.0.0.1?bogus=1'
		'rediss://CRED127.0.0.1?tls-server-name=a&tls-server-name=b'
		'rediss://CRED127.0.0.1?tls-ca-cert-file=%zz'
		'redis-sentinel://CRED127.0.0.1:26379'
		'redis-sentinel://CRED127.0.0.1:26379/'
		'redis-sentinel://CRED127.0.0.1:26379/m/x'
		'redis-sentinel://CRED127.0.0.1:26379/m%zz'
		'redis-sentinel://CRED127.0.0.1:26379,/m'
		'redis-sentinel://CRED127.0.0.1:26379/m?db=x'
		'redis-cluster://CRED127.0.0.1:7000/1'
		'redis-cluster://CRED127.0.0.1:7000?db=1'
		'redis://CRED127.0.0.1:6379 redis-sentinel://CRED127.0.0.1/m'
		'redis://CRED127.0.0.1:6379 redis://CRED127.0.0.1:99999'
		'redisx://CRED127.0.0.1'
		'CRED127.0.0.1:6379'
	)
	res=$(rname urlerr)
	printf '%s\n' "$pw" >"$TMP/pwfile"
	chmod 600 "$TMP/pwfile"
	for form in "${forms[@]}"; do
		for src in url file env cli_auth; do
			# each mode once per form and source, with and without an ACL
			# user in turn (n's parity): every pair meets both over the forms
			for mode in plain --json -v; do
				user=
				[ $((n % 2)) = 1 ] && user=worker
				local -a pre=(env -u FENCE_REDIS_PASSWORD -u REDISCLI_AUTH) post=()
				case $src in
				url) cred="$user:$enc@" ;;
				file) cred=${user:+$user@}; post=(--password-file "$TMP/pwfile") ;;
				env) cred=${user:+$user@}; pre+=("FENCE_REDIS_PASSWORD=$pw") ;;
				cli_auth) cred=${user:+$user@}; pre+=("REDISCLI_AUTH=$pw") ;;
				esac
				bad=${form//CRED/$cred}
				local -a m=()
				[ "$mode" = plain ] || m=("$mode")
				n=$((n + 1))
				if ! expect_rc 64 "${pre[@]}" "$F" acquire "$res" "${m[@]}" --redis "$bad" "${post[@]}"; then
					leaks=$((leaks + 1))
					continue
				fi
				if grep -q -e 'Zq9-Secret' "$TMP/out" "$TMP/err" ||
					! grep -q 'URL\|quorum member' "$TMP/out" "$TMP/err"; then
					echo "leak ($src, $mode): $bad"
					cat "$TMP/out" "$TMP/err"
					leaks=$((leaks + 1))
				fi
			done
		done
	done
	echo "$n refused URLs, $leaks with the password in their output or the wrong exit"
	[ "$leaks" = 0 ]
}

# The password is masked in the message also when the URL's own password
# holds an unescaped '?' or '/' (which the parser then reads as a query or
# a path), has no ':' before it, or the URL no scheme.
test_secret_url_unescaped() {
	local u
	for u in 'redis://:Zq9?Secret@127.0.0.1:1' 'redis://:Zq9/Secret@127.0.0.1:1' \
		'redis://w:Zq9?Secret@127.0.0.1:1?db=0' 'redis-sentinel://:Zq9/Secret@127.0.0.1/m' \
		'redis://Zq9Secret@127.0.0.1:1' 'Zq9:Secret@127.0.0.1'; do
		expect_rc 64 "$F" acquire r --json --redis "$u" || return 1
		if grep -q 'Zq9\|Secret' "$TMP/out" "$TMP/err"; then
			echo "leak: $u"
			cat "$TMP/out" "$TMP/err"
			return 1
		fi
	done
}

# What fence says about a Redis it reaches, with the password from each
# source: -v's trace, a refused login (wrong password, in JSON), a run.
test_secret_connected() {
	local pw='Zq9-Secret-ok' res
	res=$(rname conn)
	auth_redis "$pw"
	printf '%s\n' "$pw" >"$TMP/pwfile"
	chmod 600 "$TMP/pwfile"
	FENCE_REDIS_PASSWORD=$pw expect_rc 0 "$F" run "$res" -v --redis "redis://127.0.0.1:$PORT" -- true || return 1
	grep -q "connecting to redis://:\*\*\*@127.0.0.1:$PORT" "$TMP/err" || { cat "$TMP/err"; return 1; }
	! grep -q Zq9 "$TMP/out" "$TMP/err" || return 1
	REDISCLI_AUTH=$pw expect_rc 0 "$F" run "$res" -v --redis "redis://default@127.0.0.1:$PORT" -- true || return 1
	! grep -q Zq9 "$TMP/out" "$TMP/err" || return 1
	expect_rc 0 "$F" run "$res" -v --password-file "$TMP/pwfile" --redis "redis://127.0.0.1:$PORT" -- true || return 1
	! grep -q Zq9 "$TMP/out" "$TMP/err" || return 1
	# refused: the server's words, not ours
	FENCE_REDIS_PASSWORD=Zq9-wrong expect_rc 78 "$F" acquire "$res" -v --json --redis "redis://127.0.0.1:$PORT" || return 1
	cat "$TMP/out" "$TMP/err"
	refute grep -q Zq9 "$TMP/out" "$TMP/err"
}

# --- fence run and the command's environment -----------------------------------

# The command gets no password: not FENCE_REDIS_PASSWORD, not
# REDISCLI_AUTH, not the one in FENCE_REDIS_URL (its user stays);
# --inherit-password passes them on, as a nested fence run needs.
test_secret_run_child_env() {
	local pw='Zq9-child' res
	res=$(rname child)
	auth_redis "$pw"
	redis-cli -p "$PORT" -a "$pw" --no-auth-warning ACL SETUSER kid on '>Zq9-kid' '~*' '+@all' >/dev/null
	FENCE_REDIS_PASSWORD=$pw REDISCLI_AUTH=$pw expect_rc 0 "$F" run "$res" --redis "redis://127.0.0.1:$PORT" -- env || return 1
	if grep -q 'Zq9' "$TMP/out" || ! grep -q '^FENCE_TOKEN=' "$TMP/out"; then
		grep 'Zq9\|FENCE' "$TMP/out"
		return 1
	fi
	FENCE_REDIS_URL="redis://kid:Zq9-kid@127.0.0.1:$PORT" expect_rc 0 "$F" run "$res" -- env || return 1
	grep -qx "FENCE_REDIS_URL=redis://kid@127.0.0.1:$PORT" "$TMP/out" || { grep FENCE_REDIS_URL "$TMP/out"; return 1; }
	! grep -q Zq9 "$TMP/out" || return 1
	FENCE_REDIS_URL="redis://:$pw@127.0.0.1:$PORT redis://kid:Zq9-kid@127.0.0.1:$PORT" \
		expect_rc 0 "$F" run "$res" --ttl 5s --redis "redis://:$pw@127.0.0.1:$PORT" -- env || return 1
	grep -qx "FENCE_REDIS_URL=redis://127.0.0.1:$PORT redis://kid@127.0.0.1:$PORT" "$TMP/out" ||
		{ grep FENCE_REDIS_URL "$TMP/out"; return 1; }
	# a nested fence run: refused the login without the password (78), runs with it
	FENCE_REDIS_PASSWORD=$pw FENCE_REDIS_URL=redis://127.0.0.1:$PORT \
		expect_rc 78 "$F" run "$res" -- "$F" run "$res-inner" -- true || return 1
	FENCE_REDIS_PASSWORD=$pw FENCE_REDIS_URL=redis://127.0.0.1:$PORT \
		expect_rc 0 "$F" run "$res" --inherit-password -- "$F" run "$res-inner" -c 'echo "inner $FENCE_TOKEN"' || return 1
	grep -q '^inner [0-9]' "$TMP/out" || return 1
	FENCE_REDIS_PASSWORD=$pw REDISCLI_AUTH=$pw expect_rc 0 "$F" run "$res" --inherit-password \
		--redis "redis://127.0.0.1:$PORT" -- env || return 1
	grep -qx "FENCE_REDIS_PASSWORD=$pw" "$TMP/out" && grep -qx "REDISCLI_AUTH=$pw" "$TMP/out" || return 1
	# for run only
	expect_rc 64 "$F" acquire "$res" --inherit-password --redis "redis://127.0.0.1:$PORT"
}

run_test secret_title_last_at
run_test secret_url_errors
run_test secret_url_unescaped
run_test secret_connected
run_test secret_run_child_env

echo "# client secrets tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
