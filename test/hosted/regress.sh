#!/usr/bin/env bash
# test/hosted/regress.sh: the pg_regress tests and isolation specs listed in
# test/hosted/tests, run against the SQL edition (sql/hosted/fence_hosted.sql)
# installed as a plain script in databases of their own, on a server of
# its own that does not load the C extension's library, as on a hosted
# service (the test suite's main server preloads it, which would reserve
# the prefix "fence." and make fence.max_step a superuser's setting).
# A test is test/sql/NAME.sql, run by both editions, or
# test/hosted/sql/NAME.sql, of the SQL edition alone (its expected output
# in test/hosted/expected).  Expected output is test/expected/NAME.out, unless
# test/hosted/expected/NAME.out overrides it for a difference that the
# table of differences in docs/hosted.md lists.  psql runs through a wrapper that
# drops the CONTEXT lines naming the edition's own PL/pgSQL functions
# (context_filter.awk); nothing else of the output is changed.
#
# Prints pg_regress's lines; test/run.sh turns them into ok/not ok.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
[ -n "${FENCE_TMP:-}" ] || { echo "regress.sh: FENCE_TMP must name a work directory" >&2; exit 1; }
work=$FENCE_TMP/regress_sql
. "$top/test/lib/servers.sh"
servers_init
pg_start || { echo "not ok - sql_server"; exit 1; }
rm -rf "$work"
mkdir -p "$work/sql" "$work/specs" "$work/expected" "$work/bin" "$work/out" "$work/out_iso"

# tokens_refused.sql reads the fence.tokens vectors the client's tests read
export FENCE_TOKENS_VECTORS=$top/test/tokens_vectors.txt

pgxs=$(dirname "$("${PG_CONFIG:-pg_config}" --pgxs)")/..
bindir=$("${PG_CONFIG:-pg_config}" --bindir)
regress=$pgxs/test/regress/pg_regress
isolation=$pgxs/test/isolation/pg_isolation_regress

read -r -a tests <<<"$(sed -n 's/^regress: //p' "$here/tests" | tr '\n' ' ')"
read -r -a specs <<<"$(sed -n 's/^isolation: //p' "$here/tests" | tr '\n' ' ')"
# test/hosted/sql holds the tests of the SQL edition alone
for t in "${tests[@]}"; do
	if [ -e "$here/sql/$t.sql" ]; then
		ln -s "$here/sql/$t.sql" "$work/sql/"
	else
		ln -s "$top/test/sql/$t.sql" "$work/sql/"
	fi
done
for t in "${specs[@]}"; do
	ln -s "$top/test/specs/$t.spec" "$work/specs/"
done
cp "$top"/test/expected/*.out "$work/expected/"
# A test whose output the SQL edition overrides takes none of the C
# extension's alternatives (NAME_1.out... for other PostgreSQL versions):
# only its own.
for f in "$here"/expected/*.out; do
	[ -e "$f" ] || continue
	b=${f##*/}
	b=${b%.out}
	case $b in *_[0-9]) continue ;; esac
	rm -f "$work/expected/${b}"_[0-9].out
done
for f in "$here"/expected/*.out; do
	[ -e "$f" ] && cp "$f" "$work/expected/"
done

cat >"$work/bin/psql" <<WRAP
#!/usr/bin/env bash
set -o pipefail
"$bindir/psql" "\$@" 2>&1 | awk -f "$here/context_filter.awk"
WRAP
chmod +x "$work/bin/psql"

db=fence_sql_regression
# install: fresh database, then the script, as pg_regress's own set-up would
install_db() {
	"$bindir/dropdb" --if-exists "$1" &&
		"$bindir/createdb" -T template0 "$1" &&
		"$bindir/psql" -X -q -v ON_ERROR_STOP=1 -1 -d "$1" -f "$top/sql/hosted/fence_hosted.sql" >/dev/null
}
install_db "$db" || { echo "not ok - regress_sql_install"; exit 1; }
# the tests' names get "sql_", to tell them from the C extension's runs
# (PostgreSQL 15's "test NAME ... ok", and the TAP lines of 16 and later)
sql_names() {
	sed -u -E -e 's/^(test |     )([A-Za-z0-9_-]+ +\.\.\.)/\1sql_\2/' \
		-e 's/^((not )?ok [0-9]+ +[-+] +)([A-Za-z0-9_-]+)/\1sql_\3/'
}
"$regress" --inputdir="$work" --outputdir="$work/out" --bindir="$work/bin" \
	--use-existing --dbname="$db" "${tests[@]}" | sql_names
[ -s "$work/out/regression.diffs" ] && { echo "-- regression.diffs"; head -c 30000 "$work/out/regression.diffs"; }

# Debian's -dev package of PostgreSQL 13 has no pg_isolation_regress
if [ ! -x "$isolation" ]; then
	for t in "${specs[@]}"; do
		echo "skip - sql_$t # no pg_isolation_regress in this PostgreSQL's -dev package"
	done
	exit 0
fi
install_db "${db}_iso" || { echo "not ok - regress_sql_install"; exit 1; }
"$isolation" --inputdir="$work" --outputdir="$work/out_iso" \
	--use-existing --dbname="${db}_iso" "${specs[@]}" | sql_names
[ -s "$work/out_iso/regression.diffs" ] && { echo "-- isolation regression.diffs"; head -c 30000 "$work/out_iso/regression.diffs"; }
exit 0
