#!/usr/bin/env bash
# readme_blocks: every README.md code block marked runnable works as shown.
#
# A block is runnable when the line before its opening fence is
# "<!-- runnable -->", or when its info string says so ("```sh runnable",
# "```sql runnable").  sh blocks run with "sh -e" from the top directory,
# with client/ first on PATH (so "fence" is the one just built); sql blocks
# run with psql and ON_ERROR_STOP.  All of them run in order, against a
# database and a Redis of their own (fresh: no earlier token counters), so
# that a block may use what an earlier one created, as a reader would.
# Each block gets 60 s.  Exit 77 (skip) when the README marks no block.
. "$(dirname "$0")/lib/lib.sh"
e2e_init readme
README=$TOP/README.md
[ -f "$README" ] || skip "no README.md"

# Split the runnable blocks into $WORK/block-NNN-LINE.{sh,sql}.
awk -v dir="$WORK" '
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
			out = sprintf("%s/block-%03d-%d.%s", dir, n, NR + 1, ext)
			inblock = 1
		} else if (run) {
			printf "readme: line %d: runnable block of unknown language \"%s\"\n", NR, lang > "/dev/stderr"
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
' "$README" || fail "README.md marks a block of a language this runner does not know"

blocks=("$WORK"/block-*)
[ -e "${blocks[0]}" ] || skip "README.md marks no block as runnable"

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
	line=${b##*-}
	line=${line%.*}
	case $b in
	*.sql) cmd=(psql -X -v ON_ERROR_STOP=1 -f "$b") ;;
	*.sh) cmd=(sh -e "$b") ;;
	esac
	say "block $n (README.md line $line, ${b##*.})"
	set +e
	(cd "$TOP" && timeout 60 "${cmd[@]}") >"$b.out" 2>&1
	rc=$?
	set -e
	sed 's/^/    | /' "$b.out"
	hist readme block - - - "$(now_ms)" - "exit=$rc" "line=$line"
	if [ $rc != 0 ]; then
		echo "--- the block:"
		sed 's/^/    /' "$b"
		fail "README.md block at line $line exited $rc"
	fi
done
say "pass: ${#blocks[@]} runnable blocks"
