#!/usr/bin/env bash
# deb: the Debian packages build with "dpkg-buildpackage -us -uc" from the
# make dist tarball and work from what they hold.
#
# Must hold: the commands of docs/install.md (3.0 (quilt):
# pgfence_VERSION.orig.tar.gz from make dist, plus debian/) build
# postgresql-NN-fence for each supported PostgreSQL version, libfence2,
# libfence-dev, fence and python3-pgfence; lintian
# finds no error or warning; each package holds its files (the extension's
# library and scripts, the shared object under its soname in the
# multiarch directory, the header, libfence.pc, the command with its man
# page, completion and docs/ beside the README).  Unpacked (never
# installed: the system's PostgreSQL is not touched), the extension loads
# in a throwaway server and updates from 0.1.0; the example program
# builds against libfence-dev with the pkg-config command of docs/libfence.md and
# runs against real servers on libfence2; the packaged fence takes and
# fences a lease.
. "$(dirname "$0")/lib.sh"
pkg_init deb

version=$(version_of_header "$TOP/client/fence.h")
debversion=$(dpkg-parsechangelog -l "$TOP/debian/changelog" -S Version)
[ "${debversion%-*}" = "$version" ] || fail "debian/changelog is at $debversion, the sources at $version"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
pgversions=$(cd "$TOP" && pg_buildext supported-versions)
[ -n "$pgversions" ] || fail "no PostgreSQL version of debian/pgversions is supported here"

# --- the source package, built with exactly the commands of docs/install.md (the
# release tarball as .orig.tar.gz, plus debian/), in a clone of the tree
# whose parent directory is ours
ref=$(git -C "$TOP" stash create)
[ -n "$ref" ] || ref=$(git -C "$TOP" rev-parse HEAD)
awk '$0 == "<!-- debian build -->" { found = 1; next }
	found == 1 && /^```/ { found = 2; next }
	found == 2 && /^```/ { exit }
	found == 2 { print }' "$TOP/docs/install.md" >"$WORK/build.sh"
[ -s "$WORK/build.sh" ] || fail "docs/install.md has no Debian build block"
mkdir "$WORK/src"
git clone -q --shared --no-checkout "$TOP" "$WORK/src/pgfence"
git -C "$WORK/src/pgfence" checkout -q --detach "$ref"
say "running the block of docs/install.md in $WORK/src/pgfence:"
sed 's/^/    | /' "$WORK/build.sh"
(cd "$WORK/src/pgfence" && sh -e "$WORK/build.sh") >"$WORK/build.log" 2>&1 ||
	{ tail -n 60 "$WORK/build.log"; fail "the commands of docs/install.md do not build the packages"; }
say "dpkg-buildpackage: $(grep -c "^dpkg-deb: building package" "$WORK/build.log") packages"
out=$WORK/src
[ -f "$out/pgfence_$version.orig.tar.gz" ] || fail "no pgfence_$version.orig.tar.gz"

debs=()
for p in $(for v in $pgversions; do echo "postgresql-$v-fence"; done) libfence2 libfence-dev fence; do
	deb=$out/${p}_${debversion}_$arch.deb
	[ -f "$deb" ] || fail "no $p package (${deb##*/})"
	debs+=("$deb")
done
pydeb=$out/python3-pgfence_${debversion}_all.deb
[ -f "$pydeb" ] || fail "no python3-pgfence package (${pydeb##*/})"
debs+=("$pydeb")

# lintian: nothing above info.  initial-upload-closes-no-bugs is about the
# bug that opens a package's way into Debian's archive, which has none.
lintian --fail-on error,warning --suppress-tags initial-upload-closes-no-bugs \
	"$out/pgfence_${debversion}_$arch.changes" >"$WORK/lintian.log" 2>&1 ||
	{ cat "$WORK/lintian.log"; fail "lintian complains"; }
say "lintian: no error or warning"
sed "s/^/    | /" "$WORK/lintian.log"

# --- what each package holds
holds() {
	local deb=$1 path
	shift
	dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$WORK/contents"
	for path in "$@"; do
		grep -qx -- "$path" "$WORK/contents" || fail "${deb##*/} does not hold $path"
	done
}
for v in $pgversions; do
	holds "$out/postgresql-$v-fence_${debversion}_$arch.deb" "/usr/lib/postgresql/$v/lib/fence.so" \
		/usr/share/postgresql/$v/extension/fence.control /usr/share/postgresql/$v/extension/fence--0.1.0--0.2.0.sql
done
holds "$out/libfence2_${debversion}_$arch.deb" "/usr/lib/$multiarch/libfence.so.2.${version#*.}" "/usr/lib/$multiarch/libfence.so.2"
holds "$out/libfence-dev_${debversion}_$arch.deb" /usr/include/fence/fence.h "/usr/lib/$multiarch/libfence.so" \
	"/usr/lib/$multiarch/libfence.a" "/usr/lib/$multiarch/pkgconfig/libfence.pc"
holds "$out/fence_${debversion}_$arch.deb" /usr/bin/fence /usr/share/man/man1/fence.1.gz \
	/usr/share/bash-completion/completions/fence /usr/share/doc/fence/copyright \
	/usr/share/fence/lua/PROTOCOL.md /usr/share/fence/lua/acquire.lua /usr/share/fence/lua/release.lua
# the manual's index, compressed by dh_compress once it is over 4 kB
grep -qxE '/usr/share/doc/fence/docs/README\.md(\.gz)?' "$WORK/contents" ||
	fail "fence_${debversion}_$arch.deb does not hold the manual (/usr/share/doc/fence/docs/README.md)"
cmp "$TOP/client/lua/acquire.lua" <(dpkg-deb --fsys-tarfile "$out/fence_${debversion}_$arch.deb" |
	tar -xOf - ./usr/share/fence/lua/acquire.lua) || fail "the fence package's acquire.lua is not client/lua's"
grep -qF "libfence2 (= $debversion)" <<<"$(dpkg-deb -f "$out/libfence-dev_${debversion}_$arch.deb" Depends)" ||
	fail "libfence-dev does not depend on its libfence2"
holds "$pydeb" /usr/lib/python3/dist-packages/pgfence/__init__.py \
	/usr/lib/python3/dist-packages/pgfence/_lib.py /usr/lib/python3/dist-packages/pgfence/py.typed
grep -qF "libfence2 (>= $debversion)" <<<"$(dpkg-deb -f "$pydeb" Depends)" ||
	fail "python3-pgfence does not depend on libfence2"
say "each package holds its files"

# --- unpacked into a root of its own
root=$WORK/root
for deb in "${debs[@]}"; do dpkg-deb -x "$deb" "$root"; done
[ "$("$root/usr/bin/fence" --version)" = "fence (pgfence) $version" ] || fail "the packaged fence says: $("$root/usr/bin/fence" --version)"
soname=$(objdump -p "$root/usr/lib/$multiarch/libfence.so.2" | awk '$1 == "SONAME" { print $2 }')
[ "$soname" = libfence.so.2 ] || fail "libfence2's soname is '$soname'"
# python3-pgfence loads libfence2's library (named, as it is not installed)
PGFENCE_LIBFENCE=$root/usr/lib/$multiarch/libfence.so.2 PYTHONPATH=$root/usr/lib/python3/dist-packages \
	/usr/bin/python3 -c 'import pgfence, pgfence._lib as l; l.fence(); assert pgfence.__file__.startswith("'"$root"'")' ||
	fail "python3-pgfence does not load libfence2's library"

# the extension, from the package, in a private tree of the server
pgv=$(echo "$pgversions" | tail -n 1)
export PG_CONFIG=/usr/lib/postgresql/$pgv/bin/pg_config
PGTREE=$WORK/pgtree
tree_config=$(PG_CONFIG_SYSTEM=$PG_CONFIG "$TOP/test/lib/pgtree.sh" "$PGTREE")
cp "$root/usr/lib/postgresql/$pgv/lib/fence.so" "$("$tree_config" --pkglibdir)/"
cp "$root/usr/share/postgresql/$pgv/extension/"fence* "$("$tree_config" --sharedir)/extension/"
export PGTREE
# shellcheck source=../lib/servers.sh
. "$TOP/test/lib/servers.sh"
FENCE_TMP=$WORK/servers
mkdir -p "$FENCE_TMP"
chmod 755 "$FENCE_TMP"
PKG_ON_EXIT=servers_stop
pg_start -c shared_preload_libraries=fence >/dev/null
redis_start deb >/dev/null
redis_url=$(redis_url deb)
psql -X -qAt -v ON_ERROR_STOP=1 >"$WORK/sql.log" 2>&1 <<'SQL' || { cat "$WORK/sql.log"; fail "the packaged extension does not work"; }
CREATE EXTENSION fence VERSION '0.1.0';
ALTER EXTENSION fence UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'fence';
SELECT fence.advance('deb', 5);
SQL
want=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$TOP/extension/fence.control")
grep -qx "$want" "$WORK/sql.log" || fail "ALTER EXTENSION fence UPDATE did not reach $want: $(cat "$WORK/sql.log")"
say "postgresql-$pgv-fence: created at 0.1.0, updated to $want, preloaded"

# libfence-dev: the command of docs/libfence.md, with libfence.pc moved to the root
command=$(grep -o 'cc example.c $(pkg-config --cflags --libs libfence)' "$TOP/docs/libfence.md" | head -n 1)
[ -n "$command" ] || fail "docs/libfence.md no longer shows its pkg-config command"
mkdir "$WORK/example"
cp "$root/usr/share/doc/libfence-dev/examples/example.c" "$WORK/example/" ||
	fail "libfence-dev has no examples/example.c"
# the package's libfence.pc, moved under the unpacked root (prefix=/usr there)
mkdir "$WORK/pc"
sed "s|^prefix=/usr$|prefix=$root/usr|" "$root/usr/lib/$multiarch/pkgconfig/libfence.pc" >"$WORK/pc/libfence.pc"
(cd "$WORK/example" && export PKG_CONFIG_PATH=$WORK/pc && eval "$command") >"$WORK/cc.log" 2>&1 ||
	{ cat "$WORK/cc.log"; fail "example.c does not build against libfence-dev"; }
export LD_LIBRARY_PATH=$root/usr/lib/$multiarch
[ "$(ldd "$WORK/example/a.out" | awk '$1 == "libfence.so.2" { print $3 }')" = "$root/usr/lib/$multiarch/libfence.so.2" ] ||
	fail "a.out does not load libfence2's library"
conninfo="host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE"
"$WORK/example/a.out" "$redis_url" "$conninfo" deb:example >"$WORK/example.log" 2>&1 ||
	{ cat "$WORK/example.log"; fail "the example built on libfence-dev failed"; }
grep -q '^token 1, owner ' "$WORK/example.log" || fail "the example took no lease: $(cat "$WORK/example.log")"
say "libfence-dev and libfence2: the example builds with the command of docs/libfence.md and runs"

# fence: the packaged command takes a lease; Redis's counter starts below
# the mark of 5, so the announce is refused and the client heals
"$root/usr/bin/fence" exec deb --redis "$redis_url" --pg "$conninfo" 'SELECT 1' >"$WORK/fence.log" 2>&1 ||
	{ cat "$WORK/fence.log"; fail "the packaged fence exec failed"; }
mark=$(psql -X -qAt -c "SELECT token FROM fence.fences WHERE resource = 'deb'")
[ "$mark" -gt 5 ] || fail "fence exec did not heal above the mark of 5 (it is $mark)"
say "pass: fence exec from the package raised the mark to $mark"
