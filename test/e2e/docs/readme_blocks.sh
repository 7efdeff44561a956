#!/usr/bin/env bash
# readme_blocks: every code block marked runnable in README.md, then in
# docs/*.md (in the C locale's order of their names), works as shown.
#
# A block is runnable when the line before its opening fence is
# "<!-- runnable -->", or when its info string says so ("```sh runnable",
# "```sql runnable").  sh blocks run with "sh -e" from the top directory,
# with client/ first on PATH (so "fence" is the one just built); sql blocks
# run with psql and ON_ERROR_STOP.  All of them run in that order, against
# a database and a Redis of their own (fresh: no earlier token counters),
# so that a block may use what an earlier one created, as a reader would,
# and a block of docs/ what the README's made.  The files of docs/ run in
# the C locale's order of their names, which is not the order of their
# index (docs/README.md): so a block of docs/ may use what the README's
# Getting started made and what an earlier block of its own file made,
# never what another file of docs/ made.  The server has the library
# preloaded (fence.stats needs it).  Each block gets 60 s.  Exit 77 (skip)
# when no file marks a block.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init readme
[ -f "$TOP/README.md" ] || skip "no README.md"
docs=(README.md)
for f in $(cd "$TOP" && LC_ALL=C ls docs/*.md 2>/dev/null); do docs+=("$f"); done

# Split the runnable blocks into $WORK/block-FF-NNN-LINE.{sh,sql}: FF is
# the file's place in $docs, NNN the block's in the file.
for i in "${!docs[@]}"; do
	awk -v dir="$WORK" -v file="$(printf %02d "$i")" -v name="${docs[$i]}" '
	function flush() { close(out); inblock = 0 }
	/^```/ && inblock { flush(); next }
	inblock { print > out; next }
	skipping { if (/^```/) skipping = 0; next }
	/^```/ {
		info = substr($0, 4)
		split(info, w, /[ \t]+/)
		lang = w[1]
		run = marked || info ~ /(^|[ \t])runnable([ \t]|$)/
		marked = 0
		if (run && (lang == "sh" || lang == "bash" || lang == "shell" || lang == "sql")) {
			n++
			ext = (lang == "sql") ? "sql" : "sh"
			out = sprintf("%s/block-%s-%03d-%d.%s", dir, file, n, NR + 1, ext)
			inblock = 1
		} else if (run) {
			printf "%s: line %d: runnable block of unknown language \"%s\"\n", name, NR, lang > "/dev/stderr"
			bad = 1
		} else {
			skipping = 1
		}
		next
	}
	/^<!--[ \t]*runnable[ \t]*-->[ \t]*$/ { marked = 1; next }
	/^[ \t]*$/ { next }
	{ marked = 0 }
	END { exit bad }
	' "$TOP/${docs[$i]}" || fail "${docs[$i]} marks a block of a language this runner does not know"
done

blocks=("$WORK"/block-*)
[ -e "${blocks[0]}" ] || skip "README.md and docs/ mark no block as runnable"

# fence.stats needs the library preloaded: the shared server does, a
# server of our own (the test run by itself) must too
if [ "$(sql -c "SHOW shared_preload_libraries")" != fence ]; then
	pg_start -c shared_preload_libraries=fence
fi

# a database and a Redis of their own
db=readme_$$
sql -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
drop_db() { psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; }
E2E_ON_EXIT=drop_db
redis_start readme
export FENCE_REDIS_URL PGDATABASE=$db
FENCE_REDIS_URL=$(redis_url readme)
export PATH="$(dirname "$FENCE_BIN"):$PATH"

n=0
for b in "${blocks[@]}"; do
	n=$((n + 1))
	base=${b##*/}
	line=${base##*-}
	line=${line%.*}
	file=${base#block-}
	doc=${docs[10#${file%%-*}]}
	case $b in
	*.sql) cmd=(psql -X -v ON_ERROR_STOP=1 -f "$b") ;;
	*.sh) cmd=(sh -e "$b") ;;
	esac
	say "block $n ($doc line $line, ${b##*.})"
	set +e
	(cd "$TOP" && timeout 60 "${cmd[@]}") >"$b.out" 2>&1
	rc=$?
	set -e
	sed 's/^/    | /' "$b.out"
	hist readme block - - - "$(now_ms)" - "exit=$rc" "file=$doc" "line=$line"
	if [ $rc != 0 ]; then
		echo "--- the block:"
		sed 's/^/    /' "$b"
		fail "$doc block at line $line exited $rc"
	fi
done
say "pass: ${#blocks[@]} runnable blocks of ${docs[*]}"
