# test/lib/harness.sh: the helpers every shell suite shares: the
# end-to-end tests (test/e2e/lib/lib.sh), the fence command's tests
# (client/test/clilib.sh) and the throwaway servers (servers.sh) source it.
# Source it; it defines functions only:
#
#   spare_port, port_free PORT     a port nothing listens on
#   wait_for SECS CMD...           poll CMD until it succeeds
#   dead PID                       gone, or a zombie
#   fence_key RESOURCE KIND        the Redis key of RESOURCE's KIND
#   rcli [URL] ARG...              redis-cli against FENCE_REDIS_URL
#   all_channels PORT              ACL rule for every channel (6.0: none)
#
# A suite decides what a timed-out wait does: wait_for calls
# harness_timeout MESSAGE and returns 1.  The default only says why on
# stderr (the client's tests go on, or fail under errexit); the e2e
# library defines it as its fail, which ends the test with a FAIL line.

# spare_port: print a TCP port on 127.0.0.1 that nothing listens on.  The
# range stays below Linux's ephemeral ports (32768 and up), which outgoing
# connections take at random and would otherwise collide with.  Lanes of
# test/run.sh that run at once each take a range of their own
# (FENCE_PORT_BASE, FENCE_PORT_SPAN): a port one lane found free and has
# not bound yet is never another's pick.
spare_port() {
	local port
	while :; do
		port=$((${FENCE_PORT_BASE:-12000} + RANDOM % ${FENCE_PORT_SPAN:-20000}))
		port_free "$port" && { echo "$port"; return; }
	done
}

# port_free PORT: nothing listens on 127.0.0.1:PORT.
port_free() {
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

harness_timeout() { echo "$*" >&2; }

# wait_for SECS CMD...: run CMD every 50 ms until it succeeds, for at most
# SECS seconds.  Nothing sleeps and hopes: a test waits for the condition
# it needs, with a bound, and says what it waited for when the bound runs
# out (harness_timeout).
wait_for() {
	local limit=$1 end
	shift
	# microseconds (bash 5's clock): SECONDS counts whole seconds, and a
	# bound of 5 could end after 4
	end=$((${EPOCHREALTIME/[.,]/} + limit * 1000000))
	until "$@"; do
		if ((${EPOCHREALTIME/[.,]/} >= end)); then
			harness_timeout "timed out after ${limit}s waiting for: $*"
			return 1
		fi
		sleep 0.05
	done
}

# dead PID: gone, or a zombie nobody has reaped yet
dead() {
	! kill -0 "$1" 2>/dev/null || grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null
}

# fence_key RESOURCE KIND: the Redis key of RESOURCE's lock, token, queue,
# alive ... (DESIGN.md: every key of a resource shares its {hash tag}).
fence_key() { printf 'fence:{%s}:%s\n' "$1" "$2"; }

# rcli [URL] ARG...: redis-cli against FENCE_REDIS_URL, or the redis://
# URL given first; replies raw (a nil is an empty line).
rcli() {
	local url=$FENCE_REDIS_URL
	case ${1:-} in redis://* | rediss://*) url=$1; shift ;; esac
	redis-cli -u "$url" --raw "$@"
}

# all_channels PORT [REDIS-CLI-ARG...]: the ACL rule for every Pub/Sub
# channel of the Redis on PORT: "&*" from Redis 6.2 on; 6.0 has no channel
# rules (its users have every channel), so a rule that changes nothing.
all_channels() {
	local port=$1
	shift
	if redis-cli -p "$port" "$@" INFO server | grep -q '^redis_version:6\.[01]\.'; then
		echo on
	else
		echo '&*'
	fi
}
