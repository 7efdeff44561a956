# client/cli/fence.bash: bash completion for the fence command.
#
# Installed as bash-completion/completions/fence, where bash-completion
# loads it on first use; "source" it to try it by hand.  It completes the
# verbs, the options of "fence --help" (every verb takes them all), signal
# names for --death-signal, URL schemes for --redis, and, for run, the
# command and its arguments as a shell would.  It needs no function of
# bash-completion's, so it works without that package too.
# test/packaging/completion.sh checks it against "fence --help".

_fence()
{
	local cur=${COMP_WORDS[COMP_CWORD]}
	local prev=${COMP_WORDS[COMP_CWORD - 1]}
	local verbs="acquire release extend run exec show list resync help"
	local opts="--resource --ttl --wait --grace --name --hold --prefix --death-signal --redis --password-file --inherit-password
		--timeout --min-replicas --replica-timeout --pg --no-pg --pooler --json --quiet --verbose --version --help"
	# options followed by a value of their own
	local valued="-R|--resource|-t|--ttl|-w|--wait|-g|--grace|-n|--name|--prefix|--death-signal|-r|--redis|--password-file|--timeout|--min-replicas|--replica-timeout|-p|--pg|-c"
	local i word verb= args=0 command_at= set=0

	COMPREPLY=()
	# Walk the words before the cursor: the verb, its arguments, and (run)
	# where the command starts; options stop at "--" or at that command.
	for ((i = 1; i < COMP_CWORD; i++)); do
		word=${COMP_WORDS[i]}
		if [ -n "$command_at" ]; then
			break
		elif [ "$word" = -- ]; then
			[ "$verb" = run ] && command_at=$((i + 1))
			[ -n "$verb" ] && args=99
		elif [[ $word == @(-R|--resource) ]]; then
			set=1
			i=$((i + 1))
		elif [[ $word == @($valued) ]]; then
			i=$((i + 1))
		elif [[ $word == -* ]]; then
			:
		elif [ -z "$verb" ]; then
			verb=$word
		else
			args=$((args + 1))
			# run RESOURCE COMMAND: the second argument starts the command
			# (with -R, the first)
			[ "$verb" = run ] && [ "$args" -ge $((2 - set)) ] && command_at=$i
		fi
	done

	if [ -n "$command_at" ]; then
		if [ "$COMP_CWORD" -eq "$command_at" ]; then
			COMPREPLY=($(compgen -c -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return 0
	fi

	case $prev in
	--death-signal)
		COMPREPLY=($(compgen -W "TERM KILL INT HUP QUIT USR1 USR2" -- "$cur"))
		return 0
		;;
	-r | --redis)
		compopt -o nospace 2>/dev/null
		COMPREPLY=($(compgen -W "redis:// rediss:// unix:// redis-sentinel:// rediss-sentinel:// redis-cluster:// rediss-cluster://" -- "$cur"))
		return 0
		;;
	-w | --wait)
		COMPREPLY=($(compgen -W "250ms 10s 30s 2m inf" -- "$cur"))
		return 0
		;;
	-t | --ttl | -g | --grace | --timeout | --replica-timeout)
		COMPREPLY=($(compgen -W "250ms 10s 30s 2m" -- "$cur"))
		return 0
		;;
	--password-file)
		COMPREPLY=($(compgen -f -- "$cur"))
		return 0
		;;
	-p | --pg | --min-replicas | -n | --name | -R | --resource | -c)
		return 0
		;;
	esac

	if [[ $cur == -* ]] && [ "$args" -lt 99 ]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	elif [ -z "$verb" ]; then
		COMPREPLY=($(compgen -W "$verbs" -- "$cur"))
	elif [ "$verb" = help ] && [ "$args" -eq 0 ]; then
		COMPREPLY=($(compgen -W "$verbs" -- "$cur"))
	elif [ "$verb" = run ] && [ "$args" -ge $((1 - set)) ]; then
		COMPREPLY=($(compgen -c -- "$cur"))
	fi
	return 0
}
complete -F _fence fence
