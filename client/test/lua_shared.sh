#!/usr/bin/env bash
# client/test/lua_shared.sh: the Lua scripts' deliberate copies stay the
# same bytes.  Redis runs each script alone (EVALSHA of one file's text,
# lua/PROTOCOL.md), so a script cannot call another's functions: the
# waiting queue's functions (block "queue": acquire.lua, release.lua,
# qlock.lua) and the token counter's read and check (block "counter":
# heal.lua, qclaim.lua, qlock.lua) are written into each script that needs
# them, between the comment lines
#	-- shared block "NAME" begins: ...
#	-- shared block "NAME" ends
# A fix made in one copy only would leave the scripts disagreeing about
# the same keys; these tests fail then.  No servers: the files alone.
# One "ok - NAME" / "not ok - NAME" line per test (clilib.sh's run_test).
set -u
cd "$(dirname "$0")/.."
. test/clilib.sh

# The blocks and the scripts that must carry each: a block left out of a
# script, or its markers lost, fails as a copy that differs would.
BLOCKS='queue:acquire.lua,release.lua,qlock.lua counter:heal.lua,qclaim.lua,qlock.lua'

# block_of DIR FILE NAME: the lines between the block's markers in
# DIR/FILE (markers excluded); fails when the file has no such block, or
# has it twice, or begins it without ending it.
block_of() {
	awk -v name="$3" '
		$0 ~ "^-- shared block \"" name "\" begins" { n++; inside = 1; next }
		$0 ~ "^-- shared block \"" name "\" ends" { if (inside) ended++; inside = 0; next }
		inside { print }
		/^-- shared block "[a-z]+" begins/ && inside { bad = 1 }
		END { exit !(n == 1 && ended == 1 && !bad) }
	' "$1/$2"
}

# check_blocks DIR: every block of BLOCKS is in each of its scripts in
# DIR, byte for byte the same; says which differs.
check_blocks() {
	local dir=$1 entry name files f first rc=0
	for entry in $BLOCKS; do
		name=${entry%%:*}
		files=${entry#*:}
		first=
		for f in ${files//,/ }; do
			if ! block_of "$dir" "$f" "$name" >"$TMP/$name.$f"; then
				echo "$f: no single, closed shared block \"$name\"" >&2
				rc=1
				continue
			fi
			[ -s "$TMP/$name.$f" ] || { echo "$f: shared block \"$name\" is empty" >&2; rc=1; }
			if [ -z "$first" ]; then
				first=$f
			elif ! cmp -s "$TMP/$name.$first" "$TMP/$name.$f"; then
				echo "shared block \"$name\" differs between $first and $f:" >&2
				diff "$TMP/$name.$first" "$TMP/$name.$f" >&2
				rc=1
			fi
		done
	done
	return $rc
}

# The shipped scripts carry each shared block once, the same in every
# script named for it.
test_lua_shared_blocks_same() {
	check_blocks lua
}

# Every marked block is one BLOCKS names: a block marked in a new script
# must be named there too, or this check would not look at it.
test_lua_shared_blocks_all_named() {
	local f name
	for f in lua/*.lua; do
		for name in $(sed -n 's/^-- shared block "\([a-z]*\)" begins.*/\1/p' "$f"); do
			[[ " $BLOCKS " == *" $name:"*"${f#lua/}"* ]] ||
				{ echo "$f: block \"$name\" is not in BLOCKS for this script" >&2; return 1; }
		done
	done
}

# The check can fail: one changed byte in one copy of each block (in a
# copy of the scripts), or a copy's markers gone, is refused.
test_lua_shared_check_fails_on_a_difference() {
	local entry name files f
	for entry in $BLOCKS; do
		name=${entry%%:*}
		files=${entry#*:}
		f=${files##*,}
		rm -rf "$TMP/lua" && cp -r lua "$TMP/lua"
		# a changed byte inside the block of the last script named
		awk -v name="$name" '
			$0 ~ "^-- shared block \"" name "\" begins" { inside = 1; print; next }
			inside && !done && /redis.call/ { sub(/redis.call/, "redis.pcall"); done = 1 }
			$0 ~ "^-- shared block \"" name "\" ends" { inside = 0 }
			{ print }
		' "lua/$f" >"$TMP/lua/$f"
		refute cmp -s "lua/$f" "$TMP/lua/$f"
		refute check_blocks "$TMP/lua" 2>/dev/null
		# the markers gone from that script
		grep -v "^-- shared block \"$name\"" "lua/$f" >"$TMP/lua/$f"
		refute check_blocks "$TMP/lua" 2>/dev/null
	done
}

run_test lua_shared_blocks_same
run_test lua_shared_blocks_all_named
run_test lua_shared_check_fails_on_a_difference

echo "# client Lua shared-block tests: $passed passed, $failed failed, $skipped skipped"
[ $failed = 0 ]
