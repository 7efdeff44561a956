#!/usr/bin/env bash
# test/lib/fetch.sh: fetch, with the network, what the suites would
# otherwise download the first time they run, into the same caches they
# read: the pinned node-postgres of test/drivers (npm ci into
# ~/.cache/pgfence/node), the Node.js package's modules (npm ci in node/,
# when the tree has it) and Debian's postgres_exporter
# (test/e2e/docs/exporter_queries.sh, unpacked into
# ~/.cache/pgfence/postgres_exporter).  test/matrix.sh runs it in each
# chroot before the tests, which run without a network.  Idempotent.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
cache=${XDG_CACHE_HOME:-$HOME/.cache}/pgfence
status=0

# the same test as test/drivers/run.sh's node_ready
node=${FENCE_NODE_CACHE:-$cache/node}
if command -v npm >/dev/null && [ -f test/drivers/node/package-lock.json ] &&
	{ ! cmp -s test/drivers/node/package-lock.json "$node/package-lock.json" ||
		[ ! -d "$node/node_modules/pg" ]; }; then
	mkdir -p "$node" &&
		cp test/drivers/node/package.json test/drivers/node/package-lock.json "$node/" &&
		(cd "$node" && npm ci --no-audit --no-fund --loglevel=error) ||
		{ echo "fetch: npm ci of test/drivers/node failed" >&2; status=1; }
fi

# only where its suite runs (Node.js 18 or later, as test/lib/deps.sh
# decides): bullseye's Node.js 12 cannot install koffi
if command -v npm >/dev/null && [ -f node/package-lock.json ] && [ ! -d node/node_modules ] &&
	[ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -ge 18 ]; then
	(cd node && npm ci --no-audit --no-fund --loglevel=error) ||
		{ echo "fetch: npm ci in node/ failed" >&2; status=1; }
fi

# the same paths as test/e2e/docs/exporter_queries.sh
exporter=${FENCE_EXPORTER_CACHE:-$cache/postgres_exporter}
if [ ! -x "$exporter/usr/bin/prometheus-postgres-exporter" ]; then
	deb=$(mktemp -d "${TMPDIR:-/tmp}/pgfence-fetch.XXXXXX")
	chmod 755 "$deb" # apt-get download writes as the _apt user
	{ (cd "$deb" && apt-get download -qq prometheus-postgres-exporter) &&
		mkdir -p "$exporter" && dpkg-deb -x "$deb"/prometheus-postgres-exporter_*.deb "$exporter"; } ||
		{ echo "fetch: could not fetch prometheus-postgres-exporter into $exporter" >&2; status=1; }
	rm -rf "$deb"
fi
exit $status
