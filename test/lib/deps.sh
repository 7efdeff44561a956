#!/usr/bin/env bash
# test/lib/deps.sh [packaging]: install the Debian packages pgfence builds
# and tests with ("make test"), or those that "make check-packaging" needs
# on top of them.
#
# Idempotent: a package already installed is left alone, and apt is not
# touched at all when nothing is missing.  Run as root, or as a user who
# may sudo; any other user gets the list to install, and a failure.
set -euo pipefail

packages=(
	build-essential pkg-config
	postgresql postgresql-contrib postgresql-server-dev-15 libpq-dev
	redis-server redis-tools libhiredis-dev libssl-dev openssl
	faketime python3 python3-psycopg2 python3-yaml python3-redis gnuplot-nox
	python3-psycopg python3-asyncpg python3-pytest python3-setuptools python3-venv
	python3-pip libpostgresql-jdbc-java pgbouncer
	golang-go golang-github-jackc-pgx-v4-dev valgrind
)
if [ "${1:-}" = packaging ]; then
	packages=(
		debhelper dpkg-dev fakeroot lintian postgresql-server-dev-all
		git groff-base binutils
	)
fi

# Tools wanted as commands: a machine may bring its own (a newer JDK, or
# Node.js from elsewhere with its npm); Debian's packages only when the
# command is missing.  COMMAND:PACKAGE...
commands=(
	javac:default-jdk-headless
	node:nodejs npm:npm
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
[ "${1:-}" = packaging ] && commands=()
for c in "${commands[@]}"; do
	command -v "${c%%:*}" >/dev/null || missing+=("${c#*:}")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null; then
		echo "deps: missing ${missing[*]}; as root: apt-get install ${missing[*]}" >&2
		exit 1
	fi
	sudo=sudo
fi
echo "deps: installing ${missing[*]}${sudo:+ (with sudo)}"
export DEBIAN_FRONTEND=noninteractive
# Another apt run (unattended upgrades, a parallel build) may hold the dpkg
# lock: wait for it rather than fail.
apt=(apt-get -o DPkg::Lock::Timeout=600)
# The package lists may be stale or absent on a fresh machine: refresh once.
$sudo "${apt[@]}" update -qq
$sudo "${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
