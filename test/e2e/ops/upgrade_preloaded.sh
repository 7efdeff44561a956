#!/usr/bin/env bash
# Upgrading 0.2.0 to 0.3.0 with fence in shared_preload_libraries, the way
# packages do it: the 0.3.0 files are installed while the server still
# runs 0.2.0's library, and ALTER EXTENSION fence UPDATE comes before the
# restart.  It failed with 'could not find function "fence_reprotect_all"'.
#
# A private PostgreSQL tree of the test's own (test/lib/pgtree.sh), where
# 0.2.0 (built from git: the commit before 0.3.0 began) is installed, and a
# server with it preloaded; a mark made under 0.2.0.  Then this tree's
# extension is installed over it.
#
# Must hold: the update before the restart is refused with 55000 and a
# message that says to restart first, and changes nothing (the extension
# is still 0.2.0 and its mark is there); after the restart, the update
# succeeds, and the mark and fence.reprotect_all() are there.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init upgrade_preloaded

# the last commit of the 0.2.0 extension
old_commit=3329387^
git -C "$TOP" rev-parse -q --verify "$old_commit^{commit}" >/dev/null 2>&1 ||
	skip "no git history with fence 0.2.0 in $TOP (a release tarball)"
system_config=${PG_CONFIG_SYSTEM:-pg_config}
[ -z "${PGTREE:-}" ] || system_config=$(sed -n 's|^\(/[^ ]*\) .*|\1|p' "$PGTREE/.pgtree")/pg_config
tree_config=$(PG_CONFIG_SYSTEM=$system_config "$TOP/test/lib/pgtree.sh" "$WORK/tree") ||
	fail "could not make a private PostgreSQL tree"
[ "$(id -u)" -ne 0 ] || chmod -R a+rX "$WORK/tree"
mkdir -p "$WORK/old"
git -C "$TOP" archive "$old_commit" extension sql | tar -x -C "$WORK/old"
make -s -C "$WORK/old/extension" PG_CONFIG="$tree_config" install >"$WORK/old.build.log" 2>&1 ||
	{ tail -n 20 "$WORK/old.build.log"; fail "could not build fence 0.2.0"; }
grep -q "default_version = '0.2.0'" "$WORK/old/extension/fence.control" ||
	fail "$old_commit is not fence 0.2.0"

PG_BINDIR=$("$tree_config" --bindir)
pg_node_init up -c shared_preload_libraries=fence
pg_node_up up
node_sql up -c "CREATE EXTENSION fence VERSION '0.2.0'" \
	-c "SELECT fence.advance('up:r', 7, 'A')" >/dev/null
say "0.2.0 preloaded, mark up:r at 7"

make -s -C "$TOP/extension" PG_CONFIG="$tree_config" install >"$WORK/new.build.log" 2>&1 ||
	{ tail -n 20 "$WORK/new.build.log"; fail "could not install this tree's extension"; }
err=$(node_sql up -v VERBOSITY=verbose -c 'ALTER EXTENSION fence UPDATE' 2>&1) &&
	fail "ALTER EXTENSION fence UPDATE with 0.2.0's library loaded succeeded"
say "before the restart: $(echo $err)"
case $err in
*55000*restart*) ;;
*) fail "the update before the restart was not refused with 55000 and a word about the restart: $err" ;;
esac
[ "$(node_sql up -c "SELECT extversion FROM pg_extension WHERE extname = 'fence'")" = 0.2.0 ] ||
	fail "the refused update changed the extension's version"

as_pg "$PG_BINDIR/pg_ctl" -D "$WORK/up" -m fast -w restart -l "$WORK/up.log" >/dev/null ||
	fail "the restart failed"
node_sql up -c 'ALTER EXTENSION fence UPDATE' >/dev/null || fail "the update after the restart failed"
[ "$(node_sql up -c "SELECT extversion FROM pg_extension WHERE extname = 'fence'")" = 0.3.0 ] ||
	fail "the extension is not at 0.3.0 after the update"
[ "$(node_sql up -c "SELECT token FROM fence.fences WHERE resource = 'up:r'")" = 7 ] ||
	fail "the mark of up:r was lost"
node_sql up -c 'SELECT fence.reprotect_all()' >/dev/null || fail "fence.reprotect_all() does not run"
say "pass"
