#!/usr/bin/env bash
# completion: client/cli/fence.bash, loaded into a plain bash as
# bash-completion would, completes what "fence --help" offers: the verbs,
# every long option, signal names after --death-signal, URL schemes after
# --redis, and the command of "fence run" (after "--" or after RESOURCE).
. "$(dirname "$0")/lib.sh"
pkg_init completion
COMPLETION=$TOP/client/cli/fence.bash
[ -x "$FENCE_BIN" ] || fail "no fence command at $FENCE_BIN (make first)"

# complete LINE: the candidates, one a line, that the completion offers
# for the last word of LINE (a line ending in a space completes a new,
# empty word), in a fresh bash that loaded only the completion file.
complete_line() {
	bash --norc --noprofile -c '
		. "$1"
		read -r -a COMP_WORDS <<<"$2"
		case $2 in *" ") COMP_WORDS+=("") ;; esac
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE=$2 COMP_POINT=${#2}
		_fence fence "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"
	' complete "$COMPLETION" "$1" | sed '/^$/d' | sort -u
}

bad=0
# expect LINE WORD...: every WORD is among the candidates for LINE
expect() {
	local line=$1 w got
	shift
	got=$(complete_line "$line")
	for w in "$@"; do
		grep -qxF -- "$w" <<<"$got" || { say "\"$line\" does not offer $w (offers: $(echo $got))"; bad=$((bad + 1)); }
	done
}
# expect_none LINE: no candidate at all
expect_none() {
	local got
	got=$(complete_line "$1")
	[ -z "$got" ] || { say "\"$1\" offers $(echo $got), expected nothing"; bad=$((bad + 1)); }
}

verbs=$(help_verbs | sort)
[ "$(complete_line "fence ")" = "$verbs" ] ||
	{ say "\"fence \" offers $(complete_line "fence " | xargs), --help has $(echo $verbs)"; bad=$((bad + 1)); }
expect "fence ac" acquire
mapfile -t longs < <(help_long_options)
[ "${#longs[@]}" -ge 10 ] || fail "found only ${#longs[@]} long options in fence --help"
for verb in $verbs; do
	expect "fence $verb R --" "${longs[@]}"
done
expect "fence --" "${longs[@]}"
expect "fence run R --death-signal " TERM KILL
expect "fence acquire R --redis redis-s" redis-sentinel://
expect "fence run R --ttl 10s -- " sh
expect "fence run R --ttl 10s sle" sleep
expect "fence run R --wait 1s -- sle" sleep
# after the command starts, its own options are not fence's
expect_none "fence run R -- ls --ttl"
expect_none "fence exec R --pg C -- --j"
# an option's value is not a verb or an option
expect_none "fence acquire R --pg "

[ "$bad" -eq 0 ] || fail "$bad completions are wrong"
say "pass: verbs, ${#longs[@]} options for each verb, option values, run's command"
