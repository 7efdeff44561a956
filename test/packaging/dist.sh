#!/usr/bin/env bash
# dist: "make dist" makes pgfence-VERSION.tar.gz from git, and the tarball
# builds, installs and uninstalls on its own.
#
# Must hold: the tarball holds exactly what git tracks, under
# pgfence-VERSION/, less what .gitattributes marks export-ignore (.ci,
# debian); the LICENSE, META.json, docs/ and the man page are in it; "make" builds
# the extension and the client from it, "make install PGTREE=DIR" puts both
# into a private tree and the top-level "make uninstall PGTREE=DIR" takes
# every file of theirs away again.  A release tag must name the version
# it holds: "make dist DIST_REF=v9.9.9" refuses a tag on a 0.3.0 tree,
# "DIST_REF=vVERSION" builds the same tarball.
#
# The tarball is made from the committed tree plus the changes to tracked
# files (git stash create), so that a check run before a commit tests what
# it would commit; files git does not track yet are not in it.
. "$(dirname "$0")/lib.sh"
pkg_init dist
version=$(version_of_header "$TOP/client/fence.h")
ref=$(git -C "$TOP" stash create)
[ -n "$ref" ] || ref=$(git -C "$TOP" rev-parse HEAD)

make -s -C "$TOP" dist DIST_REF="$ref" DIST_DIR="$WORK" >"$WORK/dist.log" 2>&1 ||
	{ cat "$WORK/dist.log"; fail "make dist failed"; }
tarball=$WORK/pgfence-$version.tar.gz
[ -f "$tarball" ] || fail "make dist made no $tarball: $(cat "$WORK/dist.log")"
say "made ${tarball##*/}, $(stat -c %s "$tarball") bytes"

# exactly the tracked files, less the export-ignored ones
tar -tzf "$tarball" | grep -v '/$' | sort >"$WORK/in-tarball"
git -C "$TOP" ls-tree -r --name-only "$ref" | grep -vE '^(\.ci/|debian/|\.gitattributes$)' |
	sed "s|^|pgfence-$version/|" | sort >"$WORK/tracked"
diff -u "$WORK/tracked" "$WORK/in-tarball" || fail "the tarball does not hold what git tracks (less .ci, debian)"
for f in LICENSE META.json README.md docs/README.md CHANGELOG.md client/cli/fence.1 client/cli/fence.bash sql/fence.sql; do
	grep -qx "pgfence-$version/$f" "$WORK/in-tarball" || fail "$f is not in the tarball"
done
say "holds the $(wc -l <"$WORK/in-tarball") tracked files, without .ci/ and debian/"

# a release tag must hold its version
git clone -q --shared --no-checkout "$TOP" "$WORK/clone"
git -C "$WORK/clone" tag v9.9.9 "$ref"
git -C "$WORK/clone" tag "v$version" "$ref"
git -C "$WORK/clone" checkout -q --detach "$ref"
if make -s -C "$WORK/clone" dist DIST_REF=v9.9.9 DIST_DIR="$WORK/clone" >"$WORK/tag.log" 2>&1; then
	fail "make dist accepted tag v9.9.9 on a $version tree"
fi
grep -q "dist: tag v9.9.9 holds version $version" "$WORK/tag.log" || fail "make dist did not say why: $(cat "$WORK/tag.log")"
make -s -C "$WORK/clone" dist DIST_REF="v$version" DIST_DIR="$WORK/clone" >"$WORK/tag.log" 2>&1 ||
	{ cat "$WORK/tag.log"; fail "make dist DIST_REF=v$version failed"; }
cmp <(tar -tzf "$WORK/clone/pgfence-$version.tar.gz" | sort) <(tar -tzf "$tarball" | sort) ||
	fail "the tarball of tag v$version differs from the other"
say "tag v9.9.9 refused, v$version gives the same tarball"

# build, install into a private tree, uninstall, all from the tarball
tar -xzf "$tarball" -C "$WORK"
src=$WORK/pgfence-$version
make -C "$src" all >"$WORK/build.log" 2>&1 || { tail -n 30 "$WORK/build.log"; fail "the tarball does not build"; }
say "built from the tarball"
tree=$WORK/pgtree
make -C "$src" install PGTREE="$tree" >"$WORK/install.log" 2>&1 ||
	{ tail -n 30 "$WORK/install.log"; fail "make install PGTREE=$tree failed"; }
grep -q "install: into the private tree $tree" "$WORK/install.log" || fail "make install did not say where it installs"
# the files that are the extension's and the client's own (not links to the system's)
ours() { find "$tree" \( -type f -o -type l \) \( -name 'fence*' -o -name 'libfence*' \) ! -lname '/*' | sort; }
ours >"$WORK/installed"
for f in "$(dirname "$("$tree"/usr/lib/postgresql/*/bin/pg_config --sharedir)/x")/extension/fence.control" \
	"$("$tree"/usr/lib/postgresql/*/bin/pg_config --pkglibdir)/fence.so" \
	"$tree/usr/local/bin/fence" "$tree/usr/local/include/fence/fence.h" \
	"$tree/usr/local/lib/pkgconfig/libfence.pc" "$tree/usr/local/share/man/man1/fence.1"; do
	grep -qxF "$f" "$WORK/installed" || fail "make install did not install $f"
done
# the JIT bitcode (where PostgreSQL has it) goes into the tree as well, not
# through a link into the system's bitcode directory
if [ -d "$(pg_config --pkglibdir)/bitcode" ]; then
	f="$("$tree"/usr/lib/postgresql/*/bin/pg_config --pkglibdir)/bitcode/fence.index.bc"
	grep -qxF "$f" "$WORK/installed" || fail "make install did not put $f into the tree"
fi
say "installed $(wc -l <"$WORK/installed") files into $tree"
make -C "$src" uninstall PGTREE="$tree" >"$WORK/uninstall.log" 2>&1 ||
	{ tail -n 30 "$WORK/uninstall.log"; fail "make uninstall PGTREE=$tree failed"; }
left=$(ours)
[ -z "$left" ] || fail "make uninstall left: $left"
say "pass: make uninstall removed them all"
