#!/usr/bin/env bash
# install_pkgconfig: a program builds against an installed libfence with
# exactly the command of docs/libfence.md, and runs.
#
# Must hold: "make -C client install PREFIX=DIR" after a build made with
# the default prefix writes a libfence.pc that points into DIR (the
# directories of the install, not those of the build), with the header in
# DIR/include/fence/ and the shared object named after its soname
# (libfence.so.2.MINOR.PATCH); docs/libfence.md's
# "cc example.c $(pkg-config --cflags --libs libfence)" builds
# client/examples/example.c, which includes <fence.h> as before and calls
# libpq itself (so libpq is in Requires:, not Requires.private:); the
# program loads DIR's libfence.so.2 and runs its whole path against the real
# servers; "make uninstall" with the same PREFIX leaves no file behind.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init install_pkgconfig
need_client

prefix=$WORK/prefix
command=$(grep -o 'cc example.c $(pkg-config --cflags --libs libfence)' "$TOP/docs/libfence.md" | head -n 1)
[ -n "$command" ] || fail "docs/libfence.md no longer shows the pkg-config command this test runs"

# (without the variables of the "make test" this runs under)
unset MAKEFLAGS MFLAGS MAKELEVEL
make -s -C "$TOP/client" install PREFIX="$prefix" >"$WORK/install.log" 2>&1 ||
	{ cat "$WORK/install.log"; fail "make install PREFIX=$prefix failed"; }
pc=$prefix/lib/pkgconfig/libfence.pc
[ -f "$pc" ] || fail "no $pc"
grep -qx "prefix=$prefix" "$pc" || fail "libfence.pc does not name the install's prefix: $(grep ^prefix= "$pc")"
[ -f "$prefix/include/fence/fence.h" ] || fail "no header in $prefix/include/fence/"
soname=$(objdump -p "$prefix/lib/libfence.so.2" | awk '$1 == "SONAME" { print $2 }')
file=$(readlink -f "$prefix/lib/libfence.so.2")
[ "$soname" = libfence.so.2 ] || fail "soname is '$soname'"
[[ ${file##*/} == libfence.so.2.[0-9]*.[0-9]* ]] || fail "the shared object is named ${file##*/}"
say "installed into $prefix: ${file##*/}, soname $soname"

# the command of docs/libfence.md, in a directory of the example alone
mkdir "$WORK/src"
cp "$TOP/client/examples/example.c" "$WORK/src/"
say "running: $command"
(cd "$WORK/src" && export PKG_CONFIG_PATH=$prefix/lib/pkgconfig && eval "$command") >"$WORK/cc.log" 2>&1 ||
	{ cat "$WORK/cc.log"; fail "the command of docs/libfence.md does not build example.c"; }
export LD_LIBRARY_PATH=$prefix/lib
loaded=$(ldd "$WORK/src/a.out" | awk '$1 == "libfence.so.2" { print $3 }')
[ "$loaded" = "$prefix/lib/libfence.so.2" ] || fail "a.out loads libfence.so.2 from '$loaded'"

out=$("$WORK/src/a.out" "$FENCE_REDIS_URL" "$PGCONN" e2e:pkgconfig 2>&1) || { echo "$out"; fail "a.out exited $?"; }
echo "$out" | sed 's/^/    | /'
grep -q '^token [0-9]*, owner ' <<<"$out" || fail "a.out did not take a lease"
grep -q "^PostgreSQL's mark for e2e:pkgconfig: [0-9]" <<<"$out" || fail "a.out did not read the mark"

make -s -C "$TOP/client" uninstall PREFIX="$prefix" >"$WORK/uninstall.log" 2>&1 ||
	{ cat "$WORK/uninstall.log"; fail "make uninstall failed"; }
left=$(find "$prefix" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
sql -c "DELETE FROM fence.fences WHERE resource = 'e2e:pkgconfig'" >/dev/null
say "pass: built with the command of docs/libfence.md, ran against $prefix, uninstalled"
