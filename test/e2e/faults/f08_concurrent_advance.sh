#!/usr/bin/env bash
# F8: concurrent check-and-advance, with processes.
#
# The extension's isolation specs (advance.spec, fenced-update.spec) walk
# through tokens 33/34 in every order, commit and abort, at each isolation
# level.  This test adds the crowd: eight psql processes start at once,
# each with its own token (in the shuffled order 5 2 7 1 8 3 6 4) and owner,
# and each in one transaction checks its token, waits a little (longer
# the later it started), increments the counter and logs its commit.  One
# round per isolation level, through fence.advance, fence.fenced_update and,
# once the extension has it, the guard trigger.
#
# Must hold: in commit order the accepted tokens never go down, losers get
# LF001 (or 40001 under REPEATABLE READ and SERIALIZABLE), the counter
# equals the number of accepted writes, and the history passes the checker.
# Negative control: the same crowd without the check commits in start
# order, and the checker must see the token go down.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init f08

ORDER=(5 2 7 1 8 3 6 4)

# writer PREFIX MODE ISOLATION TOKEN DELAY_S
writer() {
	local p=$1 mode=$2 iso=$3 tok=$4 delay=$5 res=$1:stock own=w$4 check out t code seq
	case $mode in
	advance) check="SELECT fence.advance('$res', $tok, '$own');"
		upd="UPDATE ${p}_stock SET qty = qty + 1 WHERE id = 1;" ;;
	fenced) check=
		upd="SELECT fence.fenced_update('$res', $tok, 'UPDATE ${p}_stock SET qty = qty + 1 WHERE id = 1');" ;;
	guard) check="SET LOCAL fence.resource = '$res'; SET LOCAL fence.token = '$tok'; SET LOCAL fence.owner = '$own';"
		upd="UPDATE ${p}_stock SET qty = qty + 1 WHERE id = 1;" ;;
	none) check=
		upd="UPDATE ${p}_stock SET qty = qty + 1 WHERE id = 1;" ;;
	esac
	t=$(now_ms)
	# a script on stdin, not -c: psql before 15 prints only the last
	# result of a -c string, and the RETURNING is not the last
	if out=$(psql -X -qAt -v ON_ERROR_STOP=1 -v VERBOSITY=verbose 2>"$WORK/$own.err" <<<"
		BEGIN ISOLATION LEVEL $iso; $check SELECT pg_sleep($delay); $upd
		INSERT INTO ${p}_log (worker, resource, token, owner)
		VALUES ('$own', '$res', $tok, '$own') RETURNING 'seq:' || seq; COMMIT;"); then
		seq=$(sed -n 's/^seq://p' <<<"$out")
		hist "$own" write "$res" "$tok" "$own" "$t" "$(now_ms)" ok "seq=$seq"
	else
		code=$(grep -o -m1 -E 'ERROR:  [0-9A-Z]{5}' "$WORK/$own.err" | awk '{print $2}')
		hist "$own" write "$res" "$tok" "$own" "$t" "$(now_ms)" "${code:-error}"
	fi
}

# crowd PREFIX MODE ISOLATION: one round
crowd() {
	local p=$1 mode=$2 iso=$3 i pids=()
	new_history "$p"
	make_tables "$p" 0
	protect_if "$mode" "$p" "$p:stock"
	for i in "${!ORDER[@]}"; do
		writer "$p" "$mode" "$iso" "${ORDER[$i]}" "0.0$((i * 4))" &
		pids+=("$!")
	done
	E2E_PIDS+=("${pids[@]}")
	for i in "${pids[@]}"; do wait_exit "$i" 30; done
	dump_commits "$p"
	record_counter "$p" "$p:stock" 0 1
	say "$mode, $iso: $(grep -c '	write	.*	ok	' "$HIST") accepted; refused: $(awk -F'\t' '$2 == "write" && $8 != "ok" {print $8}' "$HIST" | sort | uniq -c | tr -s ' \n' ' ')"
	if grep -P '\twrite\t' "$HIST" | awk -F'\t' '$8 != "ok" && $8 != "LF001" && $8 != "40001"' | grep -q .; then
		fail "a refused write has an unexpected SQLSTATE"
	fi
}

modes=(advance fenced)
have_guard && modes+=(guard)
for mode in "${modes[@]}"; do
	for iso in rc rr sz; do
		case $iso in
		rc) level="READ COMMITTED" ;;
		rr) level="REPEATABLE READ" ;;
		sz) level=SERIALIZABLE ;;
		esac
		crowd "f08_${mode}_$iso" "$mode" "$level"
		check_ok
	done
done

crowd f08_none none "READ COMMITTED"
check_fails token-down
say "pass"
