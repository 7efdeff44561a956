#!/usr/bin/env bash
# client/test/cli_servers.sh: the fence command against servers that are
# not the Redis it usually meets: a hostile one whose reply headers
# announce more than fence ever reads (a small python3 socket server; the
# memory fence takes is measured), and the ACL of Redis 7.0 and of newer
# servers (Redis 7.2+, 8, Valkey) refusing a command inside a lease
# script, each in its own words.  The newer server is the binary in
# FENCE_REDIS_SERVER_NEWER (a redis-server or valkey-server; skipped with
# the reason when unset).  One "ok - NAME" / "not ok - NAME" /
# "skip - NAME" line per test.
#
# The harness (FENCE_BIN, FENCE_CLI_ONLY) is clilib.sh's.
set -u
cd "$(dirname "$0")/.."
. test/clilib.sh

# hostile_server REPLY: a server on a spare port (in PORT) that answers the
# first bytes of every connection with REPLY (a Python string literal's
# escapes) and then says nothing until the client goes.
hostile_server() {
	: >"$TMP/hostile.port"
	python3 -c '
import socket, sys, threading
reply = sys.argv[1].encode().decode("unicode_escape").encode("latin1")
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
open(sys.argv[2], "w").write("%d\n" % s.getsockname()[1])
def serve(c):
    try:
        if c.recv(65536):
            c.sendall(reply)
        while c.recv(65536):
            pass
    except OSError:
        pass
    c.close()
while True:
    threading.Thread(target=serve, args=(s.accept()[0],), daemon=True).start()
' "$1" "$TMP/hostile.port" &
	own_pid $!
	wait_for 30 test -s "$TMP/hostile.port"
	PORT=$(cat "$TMP/hostile.port")
}

# measured CMD...: run CMD; its exit status in RC, its peak resident set
# in MAXRSS_KB and its time in MS; stdout and stderr in $TMP/out, $TMP/err.
measured() {
	local line
	line=$(python3 -c '
import resource, subprocess, sys, time
t = time.monotonic()
with open(sys.argv[1], "w") as out, open(sys.argv[2], "w") as err:
    rc = subprocess.call(sys.argv[3:], stdout=out, stderr=err)
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, int((time.monotonic() - t) * 1000))
' "$TMP/out" "$TMP/err" "$@")
	read -r RC MAXRSS_KB MS <<<"$line"
	echo "exit $RC, peak RSS $MAXRSS_KB kB, $MS ms: $*"
	cat "$TMP/err"
}

# --- hostile reply headers ------------------------------------------------------

# A header announcing 299,999,994 elements made hiredis's reader allocate
# 2.4 GB before any element came (about a minute of page faults, then exit
# 69 on the timeout).  Now every header is checked before the reader sees
# it: an array or a bulk string over the cap, or arrays whose elements add
# up to more, end the connection at once, exit 69, in a few MB.  The first
# reply fence reads (the script's, or AUTH's with a password), and the
# replies of list.
test_servers_hostile_headers() {
	local reply cmd
	for reply in '*299999994\r\n' '$2000000000\r\n' '*1\r\n*1\r\n*1\r\n*1048574\r\n' \
		'*3\r\n$1\r\na\r\n*2\r\n*1048576\r\n'; do
		hostile_server "$reply"
		for cmd in "acquire $(rname hostile) --redis redis://127.0.0.1:$PORT" \
			"acquire $(rname hostile) --redis redis://:pw@127.0.0.1:$PORT" \
			"list --redis redis://127.0.0.1:$PORT"; do
			# shellcheck disable=SC2086 # cmd is a list of words
			measured "$F" $cmd --timeout 20s
			[ "$RC" = 69 ] && [ "$MAXRSS_KB" -lt 65536 ] && [ "$MS" -lt 10000 ] || return 1
			grep -q 'reply refused: the server announced' "$TMP/err" || return 1
		done
	done
}

# Replies at and just under the caps' edges still pass: a reply of 500000
# elements (a waiting room would need as many waiters) is read whole, and
# the framer keeps its place across pipelined replies split anywhere.
test_servers_large_reply() {
	local res
	res=$(rname large)
	# 100000 waiters' worth of queue entries: ZRANGE reads them all
	python3 -c '
import sys
key = sys.argv[1]
for i in range(0, 100000, 1000):
    args = []
    for j in range(i, i + 1000):
        args += [str(j), "w%06d/0123456789abcdef0123456789abcdef" % j]
    print(" ".join(["ZADD", key] + args))
' "$(fence_key "$res" queue)" | rcli >/dev/null
	[ "$(rcli ZCARD "$(fence_key "$res" queue)")" = 100000 ]
	measured "$F" show "$res" --json
	rcli DEL "$(fence_key "$res" queue)" >/dev/null
	[ "$RC" = 0 ] || return 1
	refute grep -q 'reply refused' "$TMP/err"
}

# --- ACL refusals inside a script -------------------------------------------------

# acl_script_refusal SERVER...: start SERVER... on a spare port with a user
# that may run scripts but not SET, take a lease as that user: exit 78,
# and the server's own words in the message.
acl_script_refusal() {
	local res
	PORT=$(spare_port)
	"$@" --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no >"$TMP/server-$PORT.log" 2>&1 &
	own_pid $!
	wait_for 5 redis-cli -p "$PORT" PING >/dev/null || { cat "$TMP/server-$PORT.log"; return 1; }
	redis-cli -p "$PORT" INFO server | grep -E '^(redis|valkey)_version'
	redis-cli -p "$PORT" ACL SETUSER scripter on '>pw' '~*' "$(all_channels "$PORT")" '+@all' '-set' >/dev/null
	res=$(rname acl)
	expect_rc 78 "$F" acquire "$res" --redis "redis://scripter:pw@127.0.0.1:$PORT" || return 1
	cat "$TMP/err"
}

# Redis 7.0 says "The user executing the script can't run this command or
# subcommand"; fence knew these words only.
test_servers_acl_in_script() {
	acl_script_refusal redis-server || return 1
	grep -q "user executing the script can't run this command\|ACL failure in script: User scripter has no permissions to run the 'set' command" "$TMP/err"
}

# Redis 7.2 and later, Redis 8 and Valkey say "ACL failure in script: User
# scripter has no permissions to run the 'set' command"; fence exited 1.
test_servers_acl_in_script_newer() {
	acl_script_refusal "$FENCE_REDIS_SERVER_NEWER" || return 1
	grep -q "ACL failure in script: User scripter has no permissions to run the 'set' command" "$TMP/err"
}

run_test servers_hostile_headers
run_test servers_large_reply
run_test servers_acl_in_script
if [ -n "${FENCE_REDIS_SERVER_NEWER:-}" ]; then
	run_test servers_acl_in_script_newer
elif [ -z "${FENCE_CLI_ONLY:-}" ] || [[ " $FENCE_CLI_ONLY " == *" servers_acl_in_script_newer "* ]]; then
	echo "skip - servers_acl_in_script_newer # FENCE_REDIS_SERVER_NEWER is not set (a redis-server or valkey-server of 7.2 or later)"
	skipped=$((skipped + 1))
fi

echo "# client server tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
