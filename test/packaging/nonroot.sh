#!/usr/bin/env bash
# nonroot: "make demo" works for a user other than root, from a clean
# clone, and writes nothing outside it.
#
# Must hold: run as a user who is not root (as root: "nobody", with a home
# of its own in the work dir), "make demo" in a fresh clone installs into
# the clone's build/pgtree, says so, and runs the demo to its end (the
# stale holder refused), with the JIT bitcode in a directory of the
# tree's own.  0.2.0's make demo failed for such a user
# ("cannot remove .../fence.so: Permission denied"), and the first private
# trees failed at the JIT bitcode, which went through a link into the
# system's directory.
. "$(dirname "$0")/lib.sh"
pkg_init nonroot

ref=$(git -C "$TOP" stash create)
[ -n "$ref" ] || ref=$(git -C "$TOP" rev-parse HEAD)
src=$WORK/src
git clone -q --shared --no-checkout "$TOP" "$src"
git -C "$src" checkout -q --detach "$ref"
mkdir "$WORK/home"
if [ "$(id -u)" -eq 0 ]; then
	user=nobody
	chown -R "$user" "$src" "$WORK/home"
	as_user() { runuser -u "$user" -- env -u PGTREE HOME="$WORK/home" PATH=/usr/local/bin:/usr/bin:/bin "$@"; }
else
	user=$(id -un)
	as_user() { env -u PGTREE HOME="$WORK/home" "$@"; }
fi

say "make demo as $user in $src"
as_user make -C "$src" demo >"$WORK/demo.log" 2>&1 || { tail -n 40 "$WORK/demo.log"; fail "make demo failed for $user"; }
grep -q "install: into the private tree $src/build/pgtree" "$WORK/demo.log" ||
	fail "make install did not say it installs into $src/build/pgtree"
grep -q "stale write was refused" "$WORK/demo.log" || fail "the demo did not show the stale write refused"
grep -q "Done: the servers are stopped" "$WORK/demo.log" || fail "the demo did not finish"
[ -f "$src/build/pgtree/.pgtree" ] || fail "no private tree in $src/build/pgtree"

bitcode=$(find "$src/build/pgtree" -path '*/lib/bitcode' ! -type l | head -n 1)
if [ -d "$(pg_config --pkglibdir)/bitcode" ]; then
	[ -n "$bitcode" ] && [ -f "$bitcode/fence.index.bc" ] ||
		fail "the tree's bitcode directory is not its own, or lacks fence.index.bc"
fi
say "pass: make demo ran as $user from its own tree"
