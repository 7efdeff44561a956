#!/usr/bin/env bash
# test/matrix.sh [--setup] [PLATFORM...]: the README's test command on every platform
# of the tested matrix ("make test-matrix"), each in a Debian chroot of its
# own, and one line per platform: versions, passed, failed, skipped,
# minutes.
#
# Platforms (default: all of them):
#   bullseye       PostgreSQL 13, hiredis 0.14, Redis 6.0 (the oldest supported)
#   bookworm       PostgreSQL 15, hiredis 0.14, Redis 7.0
#   trixie         PostgreSQL 17, hiredis 1.2,  Redis 8.0
#   trixie-valkey  PostgreSQL 17, hiredis 1.2,  Valkey 8.1 as the lock server
#   sid-valkey     PostgreSQL 18, hiredis 1.2,  Valkey 9.1, gcc 16, glibc 2.43
#
# The chroots are made once (debootstrap --variant=minbase) under
# FENCE_MATRIX_DIR (/var/cache/pgfence-matrix) and reused; the packages a
# platform needs are installed in it by test/lib/deps.sh (with the network).
# The tests then run without it: in a private network namespace with only
# a loopback (no port of the host is used, none of the host's servers is
# reachable), a private PID namespace (nothing outlives the run) and a
# private mount namespace (/proc, /dev and /tmp of its own).  The working
# tree, as it is, is copied into the chroot.
#
# --setup: make the chroots and install their packages, run nothing.
# Each chroot's lock server is also left runnable on the host as
# FENCE_MATRIX_DIR/bin/redis-server-SUITE or valkey-server-SUITE (e.g.
# FENCE_REDIS_SERVER_NEWER=/var/cache/pgfence-matrix/bin/valkey-server-sid).
# FENCE_SUITES and FENCE_E2E pass through (test/run.sh); FENCE_MATRIX_CMD
# replaces the command run in each chroot (default: the README's
# "make test", strict as in CI).  Logs: FENCE_MATRIX_DIR/logs/PLATFORM-TIME-PID.log,
# the last FENCE_MATRIX_LOGS (10) of each platform, and PLATFORM.log a link
# to the newest (the copy in the chroot, /src/pgfence.PID, is removed after
# each platform unless FENCE_MATRIX_KEEP is set).
# With the network, before the tests, test/lib/fetch.sh fetches into the
# chroot what the suites would otherwise download (node-postgres, the
# Node.js package's modules, postgres_exporter).
# Needs root (debootstrap, chroot, unshare).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
dir=${FENCE_MATRIX_DIR:-/var/cache/pgfence-matrix}
mirror=${FENCE_MATRIX_MIRROR:-http://deb.debian.org/debian}
all="bullseye bookworm trixie trixie-valkey sid-valkey"
setup_only=
[ "${1:-}" != --setup ] || { setup_only=1; shift; }
[ $# -gt 0 ] || set -- $all
[ "$(id -u)" -eq 0 ] || { echo "matrix: run as root (debootstrap, chroot, unshare)" >&2; exit 1; }
mkdir -p "$dir/logs"

# chroot_make SUITE: make the chroot of SUITE, once.
chroot_make() {
	local suite=$1 root=$dir/$1
	if [ ! -x "$root/bin/bash" ]; then
		command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null || return 1
		rm -rf "$root.tmp"
		debootstrap --variant=minbase --include=ca-certificates "$suite" "$root.tmp" "$mirror" \
			>"$dir/logs/debootstrap-$suite.log" 2>&1 || { tail -n 20 "$dir/logs/debootstrap-$suite.log"; return 1; }
		mv "$root.tmp" "$root"
	fi
	# sid's Release file may be past its Valid-Until; no recommends (as
	# deps.sh installs); no service starts inside the chroot
	cat >"$root/etc/apt/apt.conf.d/99pgfence" <<-'CONF'
		Acquire::Check-Valid-Until "false";
		APT::Install-Recommends "false";
	CONF
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
}

# in_chroot ROOT NET CMD: run the shell command CMD in ROOT, in mount and
# PID namespaces of its own, and a network namespace with only a loopback
# unless NET is "net" (installing packages).
in_chroot() {
	local root=$1 net=$2 cmd=$3 nsnet=--net
	[ "$net" = net ] && nsnet=
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --mount --pid --fork --kill-child $nsnet /bin/bash -c '
		set -e
		root=$1
		ip link set lo up 2>/dev/null || true
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
		mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
		[ -z "$3" ] || cp /etc/resolv.conf "$root/etc/resolv.conf"
		exec chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			LANG=C.UTF-8 TERM=dumb /bin/bash -c "$2"
	' in_chroot "$root" "$cmd" "$net"
}

# host_cas ROOT: the host's CA certificates, for npm in the chroot: where
# the network passes through a proxy that signs with a CA of its own, the
# host trusts it (NODE_EXTRA_CA_CERTS, or its bundle) and the chroot's own
# bundle does not.
host_cas() {
	local f
	for f in "${NODE_EXTRA_CA_CERTS:-}" /etc/ssl/certs/ca-certificates.crt; do
		[ -n "$f" ] && [ -f "$f" ] && { cp "$f" "$1/etc/ssl/certs/pgfence-host.pem"; return; }
	done
	: >"$1/etc/ssl/certs/pgfence-host.pem"
}

# host_server ROOT LOCK SUITE: FENCE_MATRIX_DIR/bin/LOCK-server-SUITE, the
# chroot's server runnable on the host (through the chroot's own dynamic
# loader and libraries), e.g. for FENCE_REDIS_SERVER_NEWER, the newer-server
# test of a host run.
host_server() {
	local root=$1 lock=$2 suite=$3 ld t
	ld=$root/lib64/ld-linux-x86-64.so.2
	# an absolute link (bullseye's, to /lib/x86_64-linux-gnu/ld-2.31.so)
	# names a file of the chroot, not of the host
	t=$(readlink "$ld") && [ "${t#/}" != "$t" ] && ld=$root$t
	[ -x "$ld" ] && [ -x "$root/usr/bin/$lock-server" ] || return 0
	mkdir -p "$dir/bin"
	printf '#!/bin/sh\n# %s-server of the %s chroot, on the host\nexec %s --library-path %s %s "$@"\n' \
		"$lock" "$suite" "$ld" "$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu" \
		"$root/usr/bin/$lock-server" >"$dir/bin/$lock-server-$suite"
	chmod 755 "$dir/bin/$lock-server-$suite"
}

# versions ROOT LOCK: what the platform runs, for its line.
versions() {
	local root=$1 lock=$2 pg hi ls
	pg=$(chroot "$root" sh -c 'ls /usr/lib/postgresql | sort -n | tail -1' 2>/dev/null)
	pg=$(chroot "$root" "/usr/lib/postgresql/$pg/bin/postgres" --version 2>/dev/null | sed -n 's/.*(PostgreSQL) \([0-9.]*\).*/\1/p')
	hi=$(chroot "$root" dpkg-query -W -f='${Version}' libhiredis-dev 2>/dev/null | sed 's/-.*//')
	ls=$(chroot "$root" "$lock-server" --version 2>/dev/null | sed -n 's/.* v=\([0-9.]*\).*/\1/p')
	echo "PostgreSQL ${pg:-?}, hiredis ${hi:-?}, ${lock^} ${ls:-?}"
}

# As root, into the chroot's own PostgreSQL (nothing else uses it): the
# private tree of PGTREE needs a pg_config that relocates, which Debian's
# PostgreSQL 13 does not.
# the working tree's copy, one per run: two runs may share a chroot
src=pgfence.$$
cmd_default='make test PG_CFLAGS=-Werror FENCE_CFLAGS=-Werror'
status=0
lines=()
for platform in "$@"; do
	case $platform in
	bullseye | bookworm | trixie) suite=$platform lock=redis ;;
	trixie-valkey | sid-valkey) suite=${platform%-valkey} lock=valkey ;;
	sid) suite=sid lock=valkey ;;
	*) echo "matrix: unknown platform $platform ($all)" >&2; exit 2 ;;
	esac
	root=$dir/$suite
	# a log of its own per run (two runs of one platform, at once or one
	# after the other, keep theirs), the newest behind PLATFORM.log
	log=$dir/logs/$platform-$(date +%Y%m%d-%H%M%S)-$$.log
	: >"$log"
	# a log of an older matrix.sh, kept
	[ -L "$dir/logs/$platform.log" ] || [ ! -e "$dir/logs/$platform.log" ] ||
		mv "$dir/logs/$platform.log" "$dir/logs/$platform-$(date -r "$dir/logs/$platform.log" +%Y%m%d-%H%M%S)-0.log"
	ln -sfn "${log##*/}" "$dir/logs/$platform.log"
	ls -t "$dir/logs/$platform"-[0-9]*-[0-9]*.log 2>/dev/null | tail -n +$((${FENCE_MATRIX_LOGS:-10} + 1)) |
		while read -r old; do rm -f "$old"; done
	start=$(date +%s)
	echo "matrix: $platform (log: $log)"
	{
		chroot_make "$suite" &&
			mkdir -p "$root/src" && rm -rf "$root/src/$src" && mkdir "$root/src/$src" &&
			git ls-files -co --exclude-standard -z | tar --null -cf - -T - | tar -xf - -C "$root/src/$src" &&
			chmod -R a+rX "$root/src/$src" &&
			host_cas "$root" &&
			in_chroot "$root" net "cd /src/$src && FENCE_LOCK_SERVER=$lock bash test/lib/deps.sh && NODE_EXTRA_CA_CERTS=/etc/ssl/certs/pgfence-host.pem bash test/lib/fetch.sh" &&
			{ [ "$lock" != valkey ] || in_chroot "$root" net "apt-get -o DPkg::Lock::Timeout=600 install -y -qq valkey-server valkey-tools >/dev/null"; }
	} >"$log" 2>&1 || {
		lines+=("$(printf '%-14s set-up failed (see %s)' "$platform" "$log")")
		status=1
		continue
	}
	host_server "$root" "$lock" "$suite"
	[ -z "$setup_only" ] || { lines+=("$platform set up"); continue; }
	in_chroot "$root" nonet "cd /src/$src && export CI=${CI:-} FENCE_LOCK_SERVER=$lock FENCE_SUITES='${FENCE_SUITES:-}' FENCE_E2E='${FENCE_E2E:-}' && [ -n \"\$FENCE_SUITES\" ] || unset FENCE_SUITES; [ -n \"\$FENCE_E2E\" ] || unset FENCE_E2E; ${FENCE_MATRIX_CMD:-$cmd_default}" >>"$log" 2>&1
	rc=$?
	mins=$(awk -v s="$(($(date +%s) - start))" 'BEGIN { printf "%.1f", s / 60 }')
	closing=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$log" | tail -n 1)
	[ -n "$closing" ] || closing="no closing line (exit $rc)"
	[ $rc -eq 0 ] || status=1
	lines+=("$(printf '%-14s %-44s %s; %s min%s' "$platform" "$(versions "$root" "$lock")" \
		"$closing" "$mins" "$([ $rc -eq 0 ] || echo ' FAILED')")")
	echo "${lines[-1]}"
	[ -n "${FENCE_MATRIX_KEEP:-}" ] || rm -rf "${root:?}/src/$src"
done
echo
echo "== matrix"
printf '%s\n' "${lines[@]}"
exit $status
