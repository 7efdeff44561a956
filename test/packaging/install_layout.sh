#!/usr/bin/env bash
# install_layout: the client's make install puts each file where its
# variable says, and make uninstall with the same variables removes them.
#
# Must hold, for a Debian-style install (DESTDIR, PREFIX=/usr, LIBDIR in
# the multiarch directory): exactly these files, the shared object named
# after its soname, libfence.pc with libdir and includedir under ${prefix}
# (so --define-variable=prefix moves them), Requires: libpq (fence.h
# includes libpq-fe.h), hiredis only private (OpenSSL is opened when a
# TLS URL asks, not linked: client/ssl.c); and after make
# uninstall, nothing but empty directories.
. "$(dirname "$0")/lib.sh"
pkg_init install_layout
version=$(version_of_header "$TOP/client/fence.h")
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
dest=$WORK/dest
vars=(DESTDIR="$dest" PREFIX=/usr LIBDIR=/usr/lib/$multiarch)

make -s -C "$TOP/client" install "${vars[@]}" >"$WORK/install.log" 2>&1 ||
	{ cat "$WORK/install.log"; fail "make install failed"; }
(cd "$dest" && find . ! -type d | sed 's|^\.||' | sort) >"$WORK/files"
sort >"$WORK/expected" <<-FILES
	/usr/bin/fence
	/usr/include/fence/fence.h
	/usr/lib/$multiarch/libfence.a
	/usr/lib/$multiarch/libfence.so
	/usr/lib/$multiarch/libfence.so.2
	/usr/lib/$multiarch/libfence.so.2.${version#*.}
	/usr/lib/$multiarch/pkgconfig/libfence.pc
	/usr/share/bash-completion/completions/fence
	/usr/share/man/man1/fence.1
	/usr/share/fence/lua/PROTOCOL.md
	/usr/share/fence/lua/acquire.lua
	/usr/share/fence/lua/extend.lua
	/usr/share/fence/lua/heal.lua
	/usr/share/fence/lua/qclaim.lua
	/usr/share/fence/lua/qlock.lua
	/usr/share/fence/lua/release.lua
	/usr/share/fence/lua/show.lua
FILES
diff -u "$WORK/expected" "$WORK/files" || fail "make install put other files than these"
[ "$(readlink "$dest/usr/lib/$multiarch/libfence.so.2")" = "libfence.so.2.${version#*.}" ] ||
	fail "libfence.so.2 does not point to the shared object"

pc=$dest/usr/lib/$multiarch/pkgconfig/libfence.pc
var() { PKG_CONFIG_PATH=${pc%/*} pkg-config "$@" libfence; }
[ "$(var --variable=prefix)" = /usr ] || fail "prefix is $(var --variable=prefix)"
[ "$(var --variable=libdir --define-variable=prefix=/opt/x)" = "/opt/x/lib/$multiarch" ] ||
	fail "libdir does not follow \${prefix}: $(grep ^libdir= "$pc")"
[ "$(var --variable=includedir --define-variable=prefix=/opt/x)" = /opt/x/include ] ||
	fail "includedir does not follow \${prefix}: $(grep ^includedir= "$pc")"
[ "$(var --modversion)" = "$version" ] || fail "libfence.pc says version $(var --modversion)"
grep -qx 'Requires: libpq' "$pc" || fail "libfence.pc: $(grep '^Requires' "$pc")"
grep -qx 'Requires.private: hiredis' "$pc" || fail "libfence.pc: $(grep '^Requires' "$pc")"
grep -q '^#include <libpq-fe.h>' "$TOP/client/fence.h" || fail "fence.h no longer includes libpq-fe.h: revisit Requires:"
! grep -qE '#include <(hiredis/)?hiredis|\<redis[A-Z][a-zA-Z]*\>' "$TOP/client/fence.h" || fail "fence.h shows hiredis: then it belongs in Requires:"
! grep -qE '#include <openssl/|\<SSL(_CTX)?\>' "$TOP/client/fence.h" || fail "fence.h shows OpenSSL: then it belongs in Requires:"
[[ " $(var --cflags) " == *" -I/usr/include/fence "* ]] || fail "Cflags: $(var --cflags)"
say "installed the $(wc -l <"$WORK/files") files, libfence.pc right"

make -s -C "$TOP/client" uninstall "${vars[@]}" >"$WORK/uninstall.log" 2>&1 ||
	{ cat "$WORK/uninstall.log"; fail "make uninstall failed"; }
left=$(find "$dest" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
say "pass: make uninstall removed them all"
