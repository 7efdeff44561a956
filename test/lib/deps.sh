#!/usr/bin/env bash
# test/lib/deps.sh [test|demo|packaging]: install the Debian packages
# pgfence builds and tests with ("make test"), only those the demo needs
# ("make demo"), or those that "make check-packaging" needs on top of the
# test set.
#
# The PostgreSQL is the one the machine has (the newest installed server),
# or else the one the suite ships (the "postgresql" package's version):
# its -dev package, so that pg_config and the server binaries match.
#
# Idempotent: a package already installed is left alone, and apt is not
# touched at all when nothing is missing.  Run as root, or as a user who
# may sudo; any other user gets the list to install, and a failure.
#
# FENCE_LOCK_SERVER=valkey: Valkey's server and tools instead of Redis's
# (test/lib/servers.sh then runs valkey-server in place of redis-server).
set -euo pipefail

mode=${1:-test}
export DEBIAN_FRONTEND=noninteractive

sudo=
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then
	sudo=sudo
fi

# Another apt run (unattended upgrades, a parallel build) may hold the dpkg
# lock: wait for it rather than fail.  "apt-get update" does not wait for
# the lock of the package lists (it exits 100 at once): retry it.
apt=(apt-get -o DPkg::Lock::Timeout=600)
apt_update() {
	local out
	for _ in $(seq 120); do
		out=$($sudo "${apt[@]}" update -qq 2>&1) && return 0
		case $out in
		*"Could not get lock"* | *"Unable to lock"*) sleep 5 ;;
		*) echo "$out" >&2; return 1 ;;
		esac
	done
	echo "$out" >&2
	return 1
}

# pg_major: the PostgreSQL major version to build against.
pg_major() {
	local v
	v=$(dpkg-query -W -f='${db:Status-Status} ${Package}\n' 'postgresql-[0-9]*' 2>/dev/null |
		sed -n 's/^installed postgresql-\([0-9][0-9]*\)$/\1/p' | sort -n | tail -1)
	[ -n "$v" ] || v=$(apt-cache depends postgresql 2>/dev/null |
		sed -n 's/^ *Depends: postgresql-\([0-9][0-9]*\)$/\1/p' | sort -n | tail -1)
	echo "$v"
}

pg=$(pg_major)
if [ -z "$pg" ]; then
	# a fresh machine whose package lists are absent
	[ "$(id -u)" -eq 0 ] || [ -n "$sudo" ] && apt_update
	pg=$(pg_major)
fi
[ -n "$pg" ] || { echo "deps: no PostgreSQL among the packages apt knows" >&2; exit 1; }

if [ "${FENCE_LOCK_SERVER:-redis}" = valkey ]; then
	lock=(valkey-server valkey-tools)
else
	lock=(redis-server redis-tools)
fi
# What the demo needs: a compiler, PostgreSQL with its headers, the lock
# server, hiredis and OpenSSL (test/demo.sh runs psql and the fence command).
demo=(
	build-essential pkg-config
	"postgresql-$pg" "postgresql-server-dev-$pg" libpq-dev
	"${lock[@]}" libhiredis-dev libssl-dev openssl
)
case $mode in
demo) packages=("${demo[@]}") ;;
test)
	packages=(
		"${demo[@]}"
		procps iproute2 faketime python3 python3-psycopg2 python3-yaml python3-redis gnuplot-nox
		python3-psycopg python3-asyncpg python3-pytest python3-setuptools python3-venv python3-pip
		libpostgresql-jdbc-java pgbouncer
		golang-go golang-github-jackc-pgx-v4-dev valgrind
	)
	;;
packaging)
	packages=(
		debhelper dpkg-dev fakeroot lintian postgresql-server-dev-all
		git groff-base binutils
	)
	;;
*) echo "usage: deps.sh [test|demo|packaging]" >&2; exit 2 ;;
esac

# Tools wanted as commands: a machine may bring its own (a newer JDK, or
# Node.js from elsewhere with its npm); Debian's packages only when the
# command is missing.  COMMAND:PACKAGE...
commands=()
[ "$mode" = test ] && commands=(javac:default-jdk-headless node:nodejs npm:npm)

# node/'s modules as its lock file pins them (the node suite, bench 18),
# from the npm registry, when the lock file is newer than what is there.
# Node.js 18 or later only (node --test, koffi); a failure here leaves the
# suite to say what is missing rather than stop the other suites.
node_modules() {
	local dir
	dir=$(cd "$(dirname "$0")/../.." && pwd)/node
	[ "$mode" = test ] && [ -f "$dir/package-lock.json" ] && command -v npm >/dev/null || return 0
	[ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -ge 18 ] || return 0
	[ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ] && return 0
	echo "deps: npm ci in node/"
	(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) ||
		echo "deps: npm ci in node/ failed; the node suite will skip" >&2
}

# PostgreSQL 13's -dev package has no isolation tester (14 and later ship
# it): test/lib/pg_isolation.sh builds it from the Debian source, once
# (apt-get source: dpkg-dev).  A failure leaves the specs to skip, saying
# so (a failure under CI).
isolation() {
	[ "$mode" = test ] && [ "$pg" -lt 14 ] || return 0
	$sudo bash "$(dirname "$0")/pg_isolation.sh" "/usr/lib/postgresql/$pg/bin/pg_config" ||
		echo "deps: building pg_isolation_regress failed; the isolation specs will skip" >&2
}
[ "$mode" != test ] || [ "$pg" -ge 14 ] || packages+=(dpkg-dev)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
for c in "${commands[@]}"; do
	command -v "${c%%:*}" >/dev/null || missing+=("${c#*:}")
done
[ ${#missing[@]} -eq 0 ] && { node_modules; isolation; exit 0; }

if [ "$(id -u)" -ne 0 ] && [ -z "$sudo" ]; then
	echo "deps: missing ${missing[*]}; as root: apt-get install ${missing[*]}" >&2
	exit 1
fi
# known PACKAGE: apt's lists have PACKAGE.
known() { [ -n "$(apt-cache show --no-all-versions "$1" 2>/dev/null | head -n 1)" ]; }
# The package lists may be stale or absent on a fresh machine: refresh
# once; but not when all that is missing is what these lists, present,
# do not have (psycopg 3 and pgx on bullseye: every run updated them).
refresh=
[ -n "$(ls /var/lib/apt/lists/ 2>/dev/null | grep -v -e '^lock$' -e '^partial$' -e '^auxfiles$')" ] || refresh=1
for p in "${missing[@]}"; do
	known "$p" && refresh=1
done
[ -z "$refresh" ] || apt_update
# A package this Debian does not have (psycopg 3 before bookworm) is left
# out, and said so: the tests that need it skip, naming it.
have=()
for p in "${missing[@]}"; do
	if known "$p"; then
		have+=("$p")
	else
		echo "deps: this Debian has no package $p; left out" >&2
	fi
done
missing=("${have[@]}")
[ ${#missing[@]} -eq 0 ] && { node_modules; isolation; exit 0; }
echo "deps: installing ${missing[*]}${sudo:+ (with sudo)}"
$sudo "${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
node_modules
isolation
