#!/usr/bin/env bash
# man_page: client/cli/fence.1 renders without a warning and documents what
# "fence --help" offers (its options table and verbs table,
# client/cli/options.c): every verb, every option (long and short form),
# the options each verb's help says it reads, no option fence does not
# have, every exit status, and the version that "fence --version" prints.
. "$(dirname "$0")/lib.sh"
pkg_init man_page
MAN=$TOP/client/cli/fence.1
[ -x "$FENCE_BIN" ] || fail "no fence command at $FENCE_BIN (make first)"

# groff's own warnings (bad requests, lines it cannot break) are errors
groff -man -Tutf8 -ww -z "$MAN" 2>"$WORK/warnings"
[ ! -s "$WORK/warnings" ] || { cat "$WORK/warnings"; fail "groff warns about fence.1"; }
groff -man -Tascii -P-cbou "$MAN" >"$WORK/page" 2>&1
say "rendered $(wc -l <"$WORK/page") lines"

missing=0
# want WHAT PATTERN: the rendered page has a line matching PATTERN (grep -E)
want() {
	grep -qE -- "$2" "$WORK/page" || { say "not in the man page: $1"; missing=$((missing + 1)); }
}

for verb in $(help_verbs); do
	want "verb $verb" "^ +fence $verb |^       $verb "
done
[ "$(help_verbs | wc -l)" -ge 6 ] || fail "found only $(help_verbs | wc -l) verbs in fence --help"

# Options: each line of --help that starts with an option gives its short
# and long form; the man page must name both, in the same pairing.
"$FENCE_BIN" --help | sed -n 's/^  \(-[^ ,]\), \(--[a-z-]*\).*/\1 \2/p; s/^      \(--[a-z-]*\).*/- \1/p' >"$WORK/options"
[ "$(wc -l <"$WORK/options")" -ge 10 ] || fail "found only $(wc -l <"$WORK/options") options in fence --help"
while read -r short long; do
	if [ "$short" = - ]; then
		want "$long" "^ +$long(=| |$)"
	else
		want "$short, $long" "^ +$(printf '%s' "$short" | sed 's/[?.*+]/\\&/g'), $long(=| |$)"
	fi
done <"$WORK/options"
# and no option is mentioned in --help that the lines above missed
for long in $(help_long_options); do
	want "$long (named in --help)" "$long"
done

# and the other way: every option the page lists at the options' indent is
# one of fence's (client/cli/options.c's table), so that an option removed
# from the command leaves the page too
sed -n 's/^       \(-[A-Za-z?], \)\{0,1\}\(--[a-z][a-z-]*\).*/\2/p' "$WORK/page" | sort -u >"$WORK/man_options"
help_long_options >"$WORK/help_options"
for long in $(comm -23 "$WORK/man_options" "$WORK/help_options"); do
	say "in fence.1 but not an option of fence: $long"
	missing=$((missing + 1))
done
# each verb's --help lists the options it reads (the verbs table): every
# one of them is an option of the table, and the page names it
for verb in $(help_verbs); do
	for long in $("$FENCE_BIN" help "$verb" | sed -n '/^Options it reads:/,/^$/p' | grep -oE -- '--[a-z][a-z-]*'); do
		grep -qxF -- "$long" "$WORK/help_options" ||
			{ say "fence help $verb lists $long, which is no option of fence"; missing=$((missing + 1)); }
		want "$long (read by $verb)" "^ +(-[A-Za-z?], )?$long(=| |$)"
	done
done

# exit statuses: the codes listed under "Exit status:" in --help
codes=$("$FENCE_BIN" --help | sed -n '/^Exit status:/,$s/^  \([0-9][0-9]*\) .*/\1/p')
[ -n "$codes" ] || fail "no exit statuses in fence --help"
sed -n '/^EXIT STATUS/,/^[A-Z]/p' "$WORK/page" >"$WORK/exit"
for code in $codes; do
	grep -qE "^       $code( |$)" "$WORK/exit" || { say "not in EXIT STATUS: $code"; missing=$((missing + 1)); }
done

version=$("$FENCE_BIN" --version | awk '{print $NF}')
grep -q "^\.TH FENCE 1 .*\"pgfence $version\"" "$MAN" || { say "fence.1's .TH does not say pgfence $version"; missing=$((missing + 1)); }

[ "$missing" -eq 0 ] || fail "$missing things of fence --help are missing from fence.1"
say "pass: $(help_verbs | wc -l) verbs, $(wc -l <"$WORK/options") options, $(echo $codes | wc -w) exit statuses, version $version"
