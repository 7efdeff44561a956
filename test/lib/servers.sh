# test/lib/servers.sh: throwaway PostgreSQL and Redis servers for tests,
# the demo and the benchmarks.  Source it, then call the functions:
#
#   . test/lib/servers.sh
#   servers_init                 # temp dir, cleanup trap on EXIT/INT/TERM
#   pg_start [-c name=value ...] # PostgreSQL on a spare port; exports
#                                # PGHOST PGPORT PGUSER PGDATABASE
#   redis_start NAME [ARG ...]   # redis-server on a spare port; sets
#                                # REDIS_PORT_<NAME>, REDIS_PID_<NAME>
#   FENCE_REDIS_URL=$(redis_url NAME)
#   cluster_start NAME N         # N masters of a Redis Cluster (nodes NAME1..N);
#                                # CLUSTER_REPLICAS=1: and a replica each
#   FENCE_REDIS_URL=$(cluster_url NAME)
#   sentinel_start NAME MASTER N # N sentinels watching redis NAME's master
#   sentinel_set_start M R NAME DOWN_MS  # master M, replica R, 3 sentinels
#   FENCE_REDIS_URL=$(sentinel_url NAME MASTER)
#
# TLS: while REDIS_TLS_SERVER (redis-server arguments) and REDIS_TLS_CLI
# (redis-cli arguments) are set, as test/lib/tls.sh's tls_on sets them,
# redis_start, cluster_start and sentinel_start start servers that speak
# only TLS on their port, and every redis-cli call here speaks TLS.
#
# Everything lives under $FENCE_TMP and is stopped and removed on exit,
# also on failure or Ctrl-C.  PostgreSQL refuses to run as root, so as
# root the server runs as the "postgres" system user.

# spare_port, port_free, wait_for ...: the helpers every suite shares
# shellcheck source=harness.sh
. "${BASH_SOURCE[0]%/*}/harness.sh"

FENCE_TMP=
FENCE_PGDATA=
FENCE_REDIS_PIDS=()

# With PGTREE set ("make test" as a user other than root, or PGTREE=DIR),
# PostgreSQL runs from that private tree, where "make install" put the
# extension (test/lib/pgtree.sh).
if [ -n "${PGTREE:-}" ]; then
	PG_CONFIG=$(PG_CONFIG_SYSTEM=${PG_CONFIG:-pg_config} "${BASH_SOURCE[0]%/*}/pgtree.sh" "$PGTREE") || exit 1
	export PG_CONFIG
fi
PG_BINDIR=$("${PG_CONFIG:-pg_config}" --bindir)

# FENCE_LOCK_SERVER=valkey: every suite runs on Valkey, with valkey-server,
# valkey-cli and valkey-sentinel in place of redis-server, redis-cli and
# redis-sentinel (under their Redis names, first in PATH, as Debian's
# valkey-redis-compat would put them), for the tests too.
if [ "${FENCE_LOCK_SERVER:-redis}" = valkey ] && ! redis-server --version 2>/dev/null | grep -q '^Valkey'; then
	FENCE_VALKEY_BIN=${FENCE_VALKEY_BIN:-$(mktemp -d "${TMPDIR:-/tmp}/pgfence-valkey.XXXXXX")}
	for _b in server cli sentinel benchmark check-aof check-rdb; do
		command -v "valkey-$_b" >/dev/null || continue
		printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v "valkey-$_b")" >"$FENCE_VALKEY_BIN/redis-$_b"
		chmod 755 "$FENCE_VALKEY_BIN/redis-$_b"
	done
	unset _b
	command -v valkey-server >/dev/null ||
		{ echo "servers: FENCE_LOCK_SERVER=valkey, but no valkey-server" >&2; exit 1; }
	export FENCE_VALKEY_BIN PATH=$FENCE_VALKEY_BIN:$PATH
fi

# as_pg CMD...: run CMD as the user that owns the PostgreSQL data directory.
as_pg() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

servers_init() {
	FENCE_TMP=$(mktemp -d "${TMPDIR:-/tmp}/pgfence.XXXXXX")
	chmod 755 "$FENCE_TMP"
	trap servers_stop EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

servers_stop() {
	local pid
	if [ -n "$FENCE_PGDATA" ] && [ -f "$FENCE_PGDATA/postmaster.pid" ]; then
		as_pg "$PG_BINDIR/pg_ctl" -D "$FENCE_PGDATA" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	for pid in "${FENCE_REDIS_PIDS[@]}"; do
		kill -CONT "$pid" 2>/dev/null || true
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	# stopped once: a second call (the EXIT trap after an explicit one)
	# must not kill whatever has taken those process ids since
	FENCE_REDIS_PIDS=()
	FENCE_PGDATA=
	[ -n "$FENCE_TMP" ] && [ -z "${FENCE_KEEP_TMP:-}" ] && rm -rf "$FENCE_TMP"
	FENCE_TMP=
}

# redis_until PORT SECONDS PATTERN MESSAGE CMD...: ask the redis-server on
# PORT "CMD..." every 0.1 s until the answer matches PATTERN (grep), for
# at most SECONDS; then say MESSAGE and fail.
redis_until() {
	local port=$1 secs=$2 pattern=$3 message=$4 i
	shift 4
	for i in $(seq $((secs * 10))); do
		redis_cli_tls "$port" "$@" 2>/dev/null | grep -q "$pattern" && return 0
		sleep 0.1
	done
	echo "$message" >&2
	return 1
}

# redis_cli_tls PORT CMD...: redis-cli with REDIS_TLS_CLI; with
# REDIS_TLS_UNVERIFIED (a server whose certificate no check passes, and a
# redis-cli before 6.2, which has no --insecure), CMD over Python's ssl
# without a check, its simple or bulk string answer printed.
redis_cli_tls() {
	local port=$1
	shift
	if [ -n "${REDIS_TLS_UNVERIFIED:-}" ]; then
		python3 - "$port" "$@" <<-'PY'
			import socket, ssl, sys
			c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
			c.check_hostname, c.verify_mode = False, ssl.CERT_NONE
			s = c.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2))
			a = [x.encode() for x in sys.argv[2:]]
			s.sendall(b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a))
			r = s.recv(65536).decode(errors="replace").split("\r\n")
			print(r[0][1:] if r[0][:1] in "+-" else r[1] if r[0][:1] == "$" else r[0])
		PY
		return
	fi
	# shellcheck disable=SC2086 # REDIS_TLS_CLI is a list of arguments
	redis-cli ${REDIS_TLS_CLI:-} -p "$port" "$@"
}

pg_start() {
	FENCE_PGDATA=$FENCE_TMP/pgdata
	local port log=$FENCE_TMP/postgres.log
	port=$(spare_port)
	mkdir -p "$FENCE_PGDATA" "$FENCE_TMP/sock"
	touch "$log"
	if [ "$(id -u)" -eq 0 ]; then
		chown postgres: "$FENCE_PGDATA" "$FENCE_TMP/sock" "$log"
	fi
	as_pg "$PG_BINDIR/initdb" -D "$FENCE_PGDATA" -U postgres -A trust \
		--no-sync -E UTF8 --locale=C >"$FENCE_TMP/initdb.log" 2>&1 ||
		{ cat "$FENCE_TMP/initdb.log"; return 1; }
	cat >>"$FENCE_PGDATA/postgresql.conf" <<-CONF
		port = $port
		listen_addresses = '127.0.0.1'
		unix_socket_directories = '$FENCE_TMP/sock'
		max_connections = 100
		fsync = off
		log_min_messages = warning
		log_line_prefix = '%m [%p] '
	CONF
	local opt
	for opt in "$@"; do
		[ "$opt" = -c ] && continue
		echo "${opt%%=*} = '${opt#*=}'" >>"$FENCE_PGDATA/postgresql.conf"
	done
	as_pg "$PG_BINDIR/pg_ctl" -D "$FENCE_PGDATA" -l "$log" -w -t 60 start >/dev/null ||
		{ cat "$log"; return 1; }
	export PGHOST=$FENCE_TMP/sock PGPORT=$port PGUSER=postgres PGDATABASE=postgres
	unset PGOPTIONS PGSERVICE PGPASSWORD
}

# redis_listen PORT: the redis-server arguments that make it listen on
# PORT, plain or (REDIS_TLS_SERVER) TLS only.
redis_listen() {
	if [ -n "${REDIS_TLS_SERVER:-}" ]; then
		# shellcheck disable=SC2086 # a list of arguments
		echo --port 0 --tls-port "$1" $REDIS_TLS_SERVER
	else
		echo --port "$1"
	fi
}

# redis_start NAME [ARG ...]: start a redis-server without persistence.
# Extra arguments go to redis-server (e.g. --replicaof 127.0.0.1 PORT), and
# again to it when redis_restart starts it anew.  REDIS_START_PORT chooses
# the port.
redis_start() {
	local name=$1 port
	shift
	port=${REDIS_START_PORT:-$(spare_port)}
	mkdir -p "$FENCE_TMP/redis-$name"
	printf -v "REDIS_PORT_$name" %s "$port"
	printf -v "REDIS_ARGS_$name" '%q ' "$@"
	[ $# -gt 0 ] || printf -v "REDIS_ARGS_$name" %s ""
	redis_launch "$name" "$port" "$@" || { cat "$FENCE_TMP/redis-$name/redis.log"; return 1; }
}

# redis_launch NAME PORT [ARG ...]: the redis-server of redis NAME on PORT,
# empty and without persistence, its log and files in its own directory;
# records its process id and waits until it answers.
redis_launch() {
	local name=$1 port=$2 dir=$FENCE_TMP/redis-$1
	shift 2
	# shellcheck disable=SC2046 # redis_listen prints a list of arguments
	redis-server $(redis_listen "$port") --bind 127.0.0.1 --dir "$dir" \
		--save '' --appendonly no --daemonize no \
		--logfile "$dir/redis.log" "$@" &
	FENCE_REDIS_PIDS+=("$!")
	printf -v "REDIS_PID_$name" %s "$!"
	redis_wait "$port"
}

# redis_wait PORT: wait until the server on PORT answers PING (10 s).
redis_wait() {
	redis_until "$1" 10 '^PONG$' "redis on port $1 did not start" ping
}

# redis_restart NAME [ARG ...]: kill -9 and start again on the same port,
# empty, with the arguments it was first started with (or those given).
redis_restart() {
	local name=$1 pidvar=REDIS_PID_$1 portvar=REDIS_PORT_$1 argsvar=REDIS_ARGS_$1
	shift
	kill -9 "${!pidvar}" 2>/dev/null || true
	wait "${!pidvar}" 2>/dev/null || true
	[ $# -gt 0 ] || eval "set -- ${!argsvar:-}"
	redis_launch "$name" "${!portvar}" "$@"
}

# redis_wait_replica PORT: wait until the replica on PORT has synced (20 s).
redis_wait_replica() {
	redis_until "$1" 20 '^master_link_status:up' "replica on port $1 did not sync" info replication
}

redis_pid() {
	local pidvar=REDIS_PID_$1
	echo "${!pidvar}"
}

redis_url() {
	local portvar=REDIS_PORT_$1
	echo "redis://127.0.0.1:${!portvar}"
}

# cluster_port: a spare port whose cluster bus port (port + 10000) is spare
# too, both below the ephemeral range.
cluster_port() {
	local port
	while :; do
		port=$((${FENCE_PORT_BASE:-12000} + RANDOM % ${FENCE_PORT_SPAN:-10000}))
		port_free "$port" && port_free "$((port + 10000))" && { echo "$port"; return; }
	done
}

# cluster_start NAME N [ARG ...]: N redis-servers in cluster mode (redis
# names NAME1..NAMEN), joined into one cluster of N masters without
# replicas (slots split evenly), waiting until every node says
# cluster_state:ok.  Extra arguments go to every redis-server.
# CLUSTER_REPLICAS=1 gives each master a replica: NAME1..NAMEN are the
# masters, NAME(N+1)..NAME(2N) the replicas, NAME(N+i) replicating NAMEi;
# it waits until each replica has synced.
cluster_start() {
	local name=$1 n=$2 r=${CLUSTER_REPLICAS:-0} i port addrs=()
	shift 2
	for ((i = 1; i <= n * (r + 1); i++)); do
		port=$(cluster_port)
		REDIS_START_PORT=$port redis_start "$name$i" --cluster-enabled yes \
			--cluster-config-file "$FENCE_TMP/redis-$name$i/nodes.conf" \
			--cluster-node-timeout 2000 "$@" || return 1
		addrs+=("127.0.0.1:$port")
	done
	# shellcheck disable=SC2086 # REDIS_TLS_CLI is a list of arguments
	redis-cli ${REDIS_TLS_CLI:-} --cluster create "${addrs[@]:0:n}" --cluster-replicas 0 --cluster-yes \
		>"$FENCE_TMP/cluster-$name.log" 2>&1 || { cat "$FENCE_TMP/cluster-$name.log"; return 1; }
	for ((i = 1; i <= n; i++)); do
		cluster_wait_ok "$(redis_port "$name$i")" || return 1
	done
	# replicas join one by one, each told its master (redis-cli would pick)
	for ((i = n + 1; i <= n * (r + 1); i++)); do
		redis-cli --cluster add-node "${addrs[i - 1]}" "${addrs[0]}" --cluster-slave \
			--cluster-master-id "$(redis-cli -p "$(redis_port "$name$((i - n))")" cluster myid)" \
			>>"$FENCE_TMP/cluster-$name.log" 2>&1 || { cat "$FENCE_TMP/cluster-$name.log"; return 1; }
	done
	for ((i = n + 1; i <= n * (r + 1); i++)); do
		redis_wait_replica "$(redis_port "$name$i")" &&
			cluster_wait_ok "$(redis_port "$name$i")" || return 1
	done
}

# cluster_wait_ok PORT: wait until the node on PORT says cluster_state:ok (20 s).
cluster_wait_ok() {
	redis_until "$1" 20 '^cluster_state:ok' "cluster node on port $1 is not ok" cluster info
}

cluster_url() {
	local p1 p2
	p1=$(redis_port "${1}1") p2=$(redis_port "${1}2")
	echo "redis-cluster://127.0.0.1:$p1,127.0.0.1:$p2"
}

redis_port() {
	local portvar=REDIS_PORT_$1
	echo "${!portvar}"
}

# sentinel_start NAME MASTER N [DOWN_MS]: N sentinels (NAME1..NAMEN) that
# watch the redis started as MASTER under the name "NAME", with a quorum
# of N/2+1, calling it down after DOWN_MS (default 1000) and trying a
# failover again after 2 s.  Waits until each sentinel sees the master's
# replicas and the other sentinels.
sentinel_start() {
	local name=$1 master=$2 n=$3 down=${4:-1000} i port dir conf mport
	mport=$(redis_port "$master")
	for ((i = 1; i <= n; i++)); do
		port=$(spare_port)
		dir=$FENCE_TMP/sentinel-$name$i
		mkdir -p "$dir"
		conf=$dir/sentinel.conf
		cat >"$conf" <<-CONF
			port $port
			bind 127.0.0.1
			dir $dir
			logfile $dir/sentinel.log
			sentinel monitor $name 127.0.0.1 $mport $((n / 2 + 1))
			sentinel down-after-milliseconds $name $down
			sentinel failover-timeout $name 2000
			sentinel parallel-syncs $name 1
		CONF
		# shellcheck disable=SC2046 # redis_listen prints a list of arguments
		redis-server "$conf" --sentinel $(redis_listen "$port") \
			${REDIS_TLS_SERVER:+--tls-replication yes} &
		FENCE_REDIS_PIDS+=("$!")
		printf -v "REDIS_PORT_$name$i" %s "$port"
		printf -v "REDIS_PID_$name$i" %s "$!"
		redis_wait "$port" || { cat "$dir/sentinel.log"; return 1; }
	done
	for ((i = 1; i <= n; i++)); do
		sentinel_wait_peers "$(redis_port "$name$i")" "$name" $((n - 1)) || return 1
	done
}

# sentinel_set_start MASTER REPLICA NAME DOWN_MS: a master (redis MASTER),
# its replica (REPLICA), in sync, and 3 sentinels (NAME1..NAME3) that watch
# it under the name NAME (sentinel_start).
sentinel_set_start() {
	redis_start "$1" --repl-diskless-sync-delay 0 &&
		redis_start "$2" --replicaof 127.0.0.1 "$(redis_port "$1")" --repl-diskless-sync-delay 0 &&
		redis_wait_replica "$(redis_port "$2")" &&
		sentinel_start "$3" "$1" 3 "$4"
}

# sentinel_wait_peers PORT NAME PEERS: wait until the sentinel on PORT
# knows PEERS other sentinels for NAME (20 s).
sentinel_wait_peers() {
	local i
	for i in $(seq 200); do
		# shellcheck disable=SC2086 # REDIS_TLS_CLI is a list of arguments
		[ "$(redis-cli ${REDIS_TLS_CLI:-} -p "$1" sentinel master "$2" 2>/dev/null |
			awk 'prev == "num-other-sentinels" { print; exit } { prev = $0 }')" = "$3" ] && return 0
		sleep 0.1
	done
	echo "sentinel on port $1 does not see $3 peers" >&2
	return 1
}

# sentinel_master PORT NAME: the port of the master the sentinel on PORT names.
sentinel_master() {
	# shellcheck disable=SC2086 # REDIS_TLS_CLI is a list of arguments
	redis-cli ${REDIS_TLS_CLI:-} -p "$1" sentinel get-master-addr-by-name "$2" 2>/dev/null | sed -n 2p
}

sentinel_url() {
	local i url= sep=
	for i in 1 2 3 4 5; do
		local portvar=REDIS_PORT_$1$i
		[ -n "${!portvar:-}" ] || break
		url+="${sep}127.0.0.1:${!portvar}"
		sep=,
	done
	echo "redis-sentinel://$url/$1"
}
