#!/usr/bin/env bash
# test/lib/pg_isolation.sh PG_CONFIG: give a PostgreSQL whose -dev package
# ships no isolation tester (Debian's postgresql-server-dev-13; 14 and
# later ship it) its pg_isolation_regress and isolationtester, built from
# the Debian source of the installed server, where PGXS looks for them
# (lib/pgxs/src/test/isolation/).  test/lib/deps.sh runs it; without it the
# isolation specs skip ("no pg_isolation_regress").
#
# Only src/test/isolation is built (with what it links: libpq, libpgport,
# libpgcommon), from the source package of the very version installed,
# so that the tester's expected output is the server's own.  The source
# comes through apt ("apt-get source") from the deb-src twin of the
# machine's own "deb" lines, with a list directory of its own: the
# machine's apt lists and sources are left as they are.  A few minutes,
# once: nothing is done when the tester is there.
set -euo pipefail
trap 'echo "pg_isolation: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
pg_config=$1
pkglib=$("$pg_config" --pkglibdir)
dest=$pkglib/pgxs/src/test/isolation
[ -x "$dest/pg_isolation_regress" ] && [ -x "$dest/isolationtester" ] && exit 0
major=$("$pg_config" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
version=$(dpkg-query -W -f='${Version}' "postgresql-$major")
[ -n "$version" ] || { echo "pg_isolation: postgresql-$major is not installed" >&2; exit 1; }

work=${FENCE_ISOLATION_WORK:-/var/cache/pgfence-isolation}/$major
mkdir -p "$work/lists/partial" "$work/parts"
# the deb-src twin of every "deb" line (one-line format: bullseye's)
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
	[ ! -f "$f" ] || sed -n 's/^deb \(.*\)$/deb-src \1/p' "$f"
done >"$work/sources.list"
[ -s "$work/sources.list" ] || { echo "pg_isolation: no deb line in /etc/apt/sources.list" >&2; exit 1; }
apt=(apt-get -o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=$work/parts"
	-o "Dir::State::Lists=$work/lists" -o DPkg::Lock::Timeout=600
	# (root's own directory: apt's _apt user may not write there)
	-o APT::Sandbox::User=root)
echo "pg_isolation: building pg_isolation_regress of PostgreSQL $version (Debian's -dev package has none)"
"${apt[@]}" update -qq
rm -rf "$work/src"
mkdir "$work/src"
(cd "$work/src" && "${apt[@]}" source -qq "postgresql-$major=$version" >/dev/null)
src=$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name "postgresql-$major-*" | head -n 1)
[ -n "$src" ] || { echo "pg_isolation: no source tree after apt-get source" >&2; exit 1; }
cd "$src"
# nothing the tester needs: no readline, zlib or ICU; the libpq it loads
# is the machine's (no rpath into this tree)
# (its words, Bison's and Flex's absence among them, in a log shown on a
# failure: a release's parsers are pre-generated)
./configure -q --without-readline --without-zlib --without-icu --disable-rpath \
	--prefix="$("$pg_config" --bindir)/.." >"$work/build.log" 2>&1 &&
	make -s -j"$(nproc)" -C src/test/isolation >>"$work/build.log" 2>&1 ||
	{ tail -n 30 "$work/build.log" >&2; exit 1; }
install -d "$dest"
install -m 755 src/test/isolation/pg_isolation_regress src/test/isolation/isolationtester "$dest/"
rm -rf "$work/src"
echo "pg_isolation: installed into $dest"
