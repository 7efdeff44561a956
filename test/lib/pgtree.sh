#!/usr/bin/env bash
# test/lib/pgtree.sh DIR: make DIR a private PostgreSQL tree that the fence
# extension can be installed into without touching the system's.
#
# PostgreSQL finds its share and library directories relative to the
# binary that runs (a relocatable installation), so a copy of the server's
# binaries under DIR, with the system's absolute paths repeated below it,
# uses DIR's share/.../extension and lib/ directories.  Everything but the
# binaries is a symbolic link to the system's files (headers and libpq
# too, so that DIR's pg_config serves every build), except the fence
# extension's own files, which "make install PG_CONFIG=DIR/.../pg_config"
# puts there.  The binaries are copied, not linked: PostgreSQL resolves a
# symbolic link to its target before it looks for its directories.
#
# Prints the path of DIR's pg_config.  Idempotent: a tree made from the
# same server is left alone, so repeated runs keep what was installed.
set -euo pipefail

dir=${1:?usage: pgtree.sh DIR}
system_config=${PG_CONFIG_SYSTEM:-pg_config}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

bindir=$("$system_config" --bindir)
# Already the tree's own pg_config (a script that sourced the servers twice).
case $bindir in "$dir"/*) echo "$bindir/pg_config"; exit 0 ;; esac
sharedir=$("$system_config" --sharedir)
pkglibdir=$("$system_config" --pkglibdir)
includedir=$("$system_config" --includedir)
libdir=$("$system_config" --libdir)
config=$dir$bindir/pg_config

# link_all FROM TO: link every entry of FROM into TO, except the fence
# extension's own files (bitcode/fence/ too) and the names given after TO.
link_all() {
	local from=$1 to=$2 f name skip
	shift 2
	mkdir -p "$to"
	for f in "$from"/*; do
		name=${f##*/}
		case $name in fence | fence.* | fence--*) continue ;; esac
		for skip in "$@"; do [ "$name" = "$skip" ] && continue 2; done
		[ -e "$to/$name" ] || ln -s "$f" "$to/$name"
	done
}

# The stamp names the layout too ("2": bitcode/ is a directory of the
# tree's own), so that a tree made by an older pgtree.sh is made anew.
stamp=$dir/.pgtree
want="$bindir $("$system_config" --version) layout 2"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
	rm -rf "${dir:?}$bindir"
	mkdir -p "$dir$bindir"
	cp -p "$bindir"/* "$dir$bindir/"
	# PGXS installs the extension's JIT bitcode into bitcode/fence/ and
	# bitcode/fence.index.bc: through a link to the system's directory
	# that would write there (or fail, for a user other than root)
	[ ! -L "$dir$pkglibdir/bitcode" ] || rm "$dir$pkglibdir/bitcode"
	link_all "$pkglibdir" "$dir$pkglibdir" bitcode
	[ ! -d "$pkglibdir/bitcode" ] || link_all "$pkglibdir/bitcode" "$dir$pkglibdir/bitcode"
	link_all "$sharedir" "$dir$sharedir" extension
	link_all "$sharedir/extension" "$dir$sharedir/extension"
	# headers (server ones included) and libpq, for programs built with it
	link_all "$includedir" "$dir$includedir"
	mkdir -p "$dir$libdir"
	for f in "$libdir"/libpq.*; do
		[ -e "$dir$libdir/${f##*/}" ] || ln -s "$f" "$dir$libdir/"
	done
	echo "$want" >"$stamp"
fi

# Debian's PostgreSQL 13 relocates its server binaries, but its pg_config
# prints the paths it was built with wherever it is copied: the tree's
# pg_config is then a script that prints the copy's (the system's
# directories below DIR), as a relocated one would, for "make install",
# PGXS and test/lib/servers.sh alike.  Made once, after the copy.
if [ "$("$config" --sharedir)" = "$sharedir" ] && [ "$dir$sharedir" != "$sharedir" ]; then
	mv "$config" "$config.built"
	cat >"$config" <<-SH
		#!/bin/sh
		# pg_config of the private PostgreSQL tree $dir (test/lib/pgtree.sh):
		# the system's does not relocate, so its directories are given below
		# the tree here, as the tree's server binaries find them.
		real=$config.built
		tree=$dir
	SH
	cat >>"$config" <<-'SH'
		relocate() {
			case $1 in
			--bindir | --docdir | --htmldir | --includedir | --pkgincludedir | --includedir-server | \
				--libdir | --pkglibdir | --localedir | --mandir | --sharedir | --sysconfdir | --pgxs)
				echo "$tree$("$real" "$1")" ;;
			*) "$real" "$1" ;;
			esac
		}
		if [ $# -eq 0 ]; then
			"$real" | sed -E "s#^((BINDIR|DOCDIR|HTMLDIR|INCLUDEDIR|PKGINCLUDEDIR|INCLUDEDIR-SERVER|LIBDIR|PKGLIBDIR|LOCALEDIR|MANDIR|SHAREDIR|SYSCONFDIR|PGXS) = )#\1$tree#"
			exit
		fi
		for a in "$@"; do relocate "$a" || exit; done
	SH
	chmod 755 "$config"
fi

# The copy must find its own directories, or the extension would go to the
# system's after all.
[ "$("$config" --sharedir)" = "$dir$sharedir" ] || {
	echo "pgtree: $config does not relocate to $dir (it says $("$config" --sharedir))" >&2
	exit 1
}
echo "$config"
