/*
 * client/cli/options.c
 *	  The options table and the verbs table: one entry per option parses it
 *	  and prints its lines of "fence --help"; one entry per verb names the
 *	  options that verb reads, which its own --help prints (as git's
 *	  parse-options prints usage from the table it parses with).
 *
 * Options may come anywhere among a verb's arguments, and every option is
 * accepted by every verb, as it always was: a verb's list says what it
 * reads, the checks in main.c refuse what would mislead (--hold outside
 * acquire, -c outside run, ...).  The man page, client/cli/fence.1, is the
 * reference; test/packaging/man_page.sh checks that it names every option
 * of this table, and every option each verb's --help lists.
 */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* what an option's argument goes into */
enum opt_kind
{
	OPT_STRING,					/* a const char * of options */
	OPT_FLAG,					/* an int of options, set to 1 */
	OPT_DURATION,				/* a long long of options, parsed */
	OPT_OWN						/* parse_one's own case */
};

typedef struct cli_option
{
	const char *name;			/* --NAME, or NULL: short only */
	char		short_name;		/* -X, or 0: long only */
	const char *arg;			/* its argument in --help, NULL: none */
	enum opt_kind kind;
	size_t		offset;			/* in options, for the first three kinds */
	long long	inf_ms;			/* OPT_DURATION: what "inf" is (0: refused) */
	int			group;			/* 0 lease, 1 connection, 2 other */
	const char *help;			/* its lines in --help, after the column */
} cli_option;

#define OFF(field) offsetof(options, field)

static const cli_option cli_options[] = {
	{"resource", 'R', "RESOURCE", OPT_OWN, 0, 0, 0,
		"acquire, release, extend, run, exec: one lease of a set,\n"
		"instead of the RESOURCE argument; repeat it (a\n"
		"transfer: -R acct:1 -R acct:2); release and extend\n"
		"take the set's one OWNER"},
	{"ttl", 't', "DURATION", OPT_DURATION, OFF(ttl_ms), 0, 0,
		"lease time to live (default: 30s)"},
	{"wait", 'w', "DURATION", OPT_DURATION, OFF(wait_ms), FENCE_MAX_TTL_MS, 0,
		"how long to queue while the lease is busy\n"
		"(default: 0; inf waits for ever, as flock does)"},
	{"grace", 'g', "DURATION", OPT_DURATION, OFF(grace_ms), 0, 0,
		"run: time between SIGTERM and SIGKILL when the\n"
		"lease is lost (default: 10s)"},
	{"name", 'n', "NAME", OPT_STRING, OFF(name), 0, 0,
		"who holds the lease, in front of its owner id\n"
		"(NAME/ and 32 random hex digits; letters, digits\n"
		"and _-:@+, at most 64; default: HOST:PID:COMMAND)"},
	{NULL, 'c', "STRING", OPT_STRING, OFF(shell), 0, 0,
		"run: run /bin/sh -c STRING as the command"},
	{"hold", 0, NULL, OPT_FLAG, OFF(hold), 0, 0,
		"acquire: keep the lease alive, renewing it, until\n"
		"SIGINT or SIGTERM, then give it back (exit 0);\n"
		"exit 76 if it is lost meanwhile"},
	{"prefix", 0, "PREFIX", OPT_STRING, OFF(prefix), 0, 0,
		"resync: only the resources whose name starts\n"
		"with PREFIX"},
	{"death-signal", 0, "SIGNAL", OPT_OWN, 0, 0, 0,
		"run: the signal COMMAND gets if fence itself dies\n"
		"(kill -9, a crash), by name or number (default: TERM)"},
	{"redis", 'r', "URL", OPT_OWN, 0, 0, 1,
		"where the leases live (see URLs below); given\n"
		"more than once: a quorum of independent nodes\n"
		"(default: $FENCE_REDIS_URL, else\n"
		FENCE_DEFAULT_URL ")"},
	{"password-file", 0, "FILE", OPT_STRING, OFF(password_file), 0, 1,
		"the Redis password, read from FILE (see Passwords)"},
	{"inherit-password", 0, NULL, OPT_FLAG, OFF(inherit_password), 0, 1,
		"run: leave the Redis password in COMMAND's\n"
		"environment, for a nested fence run (see Passwords)"},
	{"timeout", 0, "DURATION", OPT_DURATION, OFF(timeout_ms), 0, 1,
		"how long connecting to Redis and each command may\n"
		"take (default: 5s); while --wait runs, its end\n"
		"bounds them too"},
	{"min-replicas", 0, "N", OPT_OWN, 0, 0, 1,
		"take a lease only once N replicas have its lock\n"
		"and token (not for a quorum; default: 0)"},
	{"replica-timeout", 0, "DURATION", OPT_DURATION, OFF(replica_timeout_ms), 0, 1,
		"how long to wait for them (default: 1s)"},
	{"pg", 'p', "CONNINFO", OPT_STRING, OFF(pg), 0, 1,
		"PostgreSQL connection string; the token is\n"
		"announced there before anything else runs\n"
		"(run: default $FENCE_PG, else the server that\n"
		"PGSERVICE, PGHOST or PGDATABASE name, as for psql)"},
	{"no-pg", 0, NULL, OPT_FLAG, OFF(no_pg), 0, 1,
		"run: announce to no PostgreSQL, and say nothing\n"
		"about it (the command writes nothing fenced)"},
	{"pooler", 0, NULL, OPT_FLAG, OFF(pooler), 0, 1,
		"run: COMMAND connects through a pooler that refuses\n"
		"or drops PGOPTIONS (PgBouncer): it gets FENCE_*\n"
		"only, and sets the token per transaction"},
	{"json", 'j', NULL, OPT_OWN, 0, 0, 2,
		"print results as JSON, and errors too, on stdout:\n"
		"{\"ok\":false,\"error\":\"busy\",\"exit\":75,\"message\":...}\n"
		"(bytes that are not UTF-8 come out as U+FFFD)"},
	{"quiet", 'q', NULL, OPT_OWN, 0, 0, 2,
		"no notes or warnings on stderr, errors only"},
	{"verbose", 'v', NULL, OPT_OWN, 0, 0, 2,
		"say what fence does: connections, the lease,\n"
		"renewals, the release"},
	{"version", 'V', NULL, OPT_OWN, 0, 0, 2,
		"output version information, then exit"},
	{"help", 'h', NULL, OPT_OWN, 0, 0, 2,
		"show this help, then exit (after a verb: its own)"},
};

#define NOPTIONS ((int) (sizeof(cli_options) / sizeof(cli_options[0])))

static const char *const group_names[] = {"Lease options", "Connection options", "Other options"};

/* What getopt_long returns for option "i": its short name, or 256 + i. */
static int
key_of(int i)
{
	return cli_options[i].short_name ? cli_options[i].short_name : 256 + i;
}

/*
 * The options' lines of "fence --help", under their headings: the option
 * in a column of 27, its text after it (on a line of its own when the
 * option is wider).
 */
void
print_option_lines(void)
{
	int			g,
				i;

	for (g = 0; g < 3; g++)
	{
		printf("\n%s:\n", group_names[g]);
		for (i = 0; i < NOPTIONS; i++)
		{
			const cli_option *opt = &cli_options[i];
			char		flag[64];
			const char *p = opt->help;
			int			n;

			if (opt->group != g)
				continue;
			if (opt->name == NULL)
				n = snprintf(flag, sizeof(flag), "  -%c %s", opt->short_name, opt->arg);
			else
				n = snprintf(flag, sizeof(flag), "  %s--%s%s%s",
							 opt->short_name ? (char[]) {'-', opt->short_name, ',', ' ', '\0'} : "    ",
							 opt->name, opt->arg ? "=" : "", opt->arg ? opt->arg : "");
			printf("%s", flag);
			if (n > 26)
				printf("\n%27s", "");
			else
				printf("%*s", 27 - n, "");
			while (*p)
			{
				size_t		len = strcspn(p, "\n");

				printf("%.*s\n", (int) len, p);
				p += len;
				if (*p == '\n' && *++p)
					printf("%27s", "");
			}
		}
	}
}

/*
 * The verbs: how many arguments each takes before what it passes on
 * (after RESOURCE and SQL, exec's parameters, and after RESOURCE and the
 * command's name, run's arguments, are taken as they are, options or
 * not), and its help: synopsis, what it does, the options it reads.
 */
static const char *const acquire_reads[] = {"resource", "ttl", "wait", "timeout", "pg", "name", "hold", "redis", "password-file", "min-replicas", "replica-timeout", "json", "quiet", "verbose", NULL};
static const char *const release_reads[] = {"resource", "timeout", "redis", "password-file", "json", "quiet", "verbose", NULL};
static const char *const extend_reads[] = {"resource", "ttl", "timeout", "redis", "password-file", "json", "quiet", "verbose", NULL};
static const char *const run_reads[] = {"resource", "ttl", "wait", "timeout", "grace", "pg", "no-pg", "pooler", "name", "death-signal", "-c", "redis", "password-file", "inherit-password", "min-replicas", "replica-timeout", "json", "quiet", "verbose", NULL};
static const char *const exec_reads[] = {"resource", "ttl", "wait", "timeout", "pg", "name", "redis", "password-file", "json", "quiet", "verbose", NULL};
static const char *const show_reads[] = {"pg", "timeout", "redis", "password-file", "json", "quiet", "verbose", NULL};
static const char *const list_reads[] = {"timeout", "redis", "password-file", "json", "quiet", "verbose", NULL};
static const char *const resync_reads[] = {"pg", "prefix", "timeout", "redis", "password-file", "json", "quiet", "verbose", NULL};
static const char *const help_reads[] = {NULL};

const verb	verbs[] = {
	{"acquire", 1, 0, "exactly one argument: RESOURCE", cmd_acquire, 0,
		"acquire RESOURCE [--ttl D] [--wait D] [--pg CONNINFO] [--name NAME] [--hold]\n"
		"  fence acquire -R RESOURCE [-R RESOURCE]... [OPTION]...",
		"Take the lease on RESOURCE and print FENCE_RESOURCE, FENCE_TOKEN and\n"
		"FENCE_OWNER lines for a shell's eval (or JSON).  Nothing renews the lease:\n"
		"after eval \"$(fence acquire R)\" it lapses after --ttl unless \"fence extend\"\n"
		"runs in time; give it back with \"fence release R $FENCE_OWNER\".  With --hold,\n"
		"fence stays after printing and flushing, renews the lease until SIGINT or\n"
		"SIGTERM, then gives it back (exit 0); exit 76 if it is lost meanwhile.\n"
		"Exit 75 when the lease is busy past --wait.  With -R, a set of leases,\n"
		"taken in the bytewise order of their names: all of them or none.",
	acquire_reads},
	{"release", 2, 0, "two arguments: RESOURCE OWNER", cmd_release, 0,
		"release RESOURCE OWNER\n  fence release -R RESOURCE [-R RESOURCE]... OWNER",
		"Give back the lease OWNER holds (compare-and-delete): exit 76 when OWNER\n"
		"does not hold it (it expired, or passed on).",
	release_reads},
	{"extend", 2, 0, "two arguments: RESOURCE OWNER", cmd_extend, 0,
		"extend RESOURCE OWNER [--ttl D]\n  fence extend -R RESOURCE [-R RESOURCE]... OWNER [--ttl D]",
		"Renew the lease OWNER holds for --ttl from now (compare-and-expire): exit 76\n"
		"when OWNER does not hold it any more.",
	extend_reads},
	{"run", 2, 1, "RESOURCE and a command after --", cmd_run, 0,
		"run RESOURCE [--ttl D] [--wait D] [--pg CONNINFO | --no-pg] [--pooler] [--grace D] [--] COMMAND [ARG]...\n"
		"  fence run RESOURCE [OPTION]... -c STRING\n"
		"  fence run -R RESOURCE [-R RESOURCE]... [OPTION]... [--] COMMAND [ARG]...",
		"Take the lease, run COMMAND (or /bin/sh -c STRING) with FENCE_RESOURCE,\n"
		"FENCE_TOKEN and FENCE_OWNER in its environment and the token in PGOPTIONS,\n"
		"renew the lease until COMMAND and everything it started have exited, then\n"
		"give it back.  The exit status is COMMAND's; 76 when the lease was lost (all\n"
		"of them got SIGTERM, then SIGKILL after --grace); 75 when it was busy past\n"
		"--wait.  With -R, a set: every token in FENCE_TOKENS and fence.tokens.\n"
		"The token is announced to --pg, else $FENCE_PG, else the PostgreSQL that\n"
		"PGSERVICE, PGHOST or PGDATABASE name; with none of them a warning says so\n"
		"(--no-pg: none is meant).  --pooler: no PGOPTIONS for a command behind PgBouncer.",
	run_reads},
	{"exec", 2, 1, "RESOURCE, --pg CONNINFO and SQL", cmd_exec, 0,
		"exec RESOURCE --pg CONNINFO [--] SQL [PARAM]...\n"
		"  fence exec -R RESOURCE [-R RESOURCE]... --pg CONNINFO [--] SQL [PARAM]...",
		"Take the lease, announce its token, run one SQL statement fenced by it\n"
		"(PARAMs bound to $1, $2...), print its result as psql -At does (or JSON),\n"
		"give the lease back.  Exit 77 when PostgreSQL refuses a stale token.",
	exec_reads},
	{"show", 1, 0, "exactly one argument: RESOURCE", cmd_show, 0,
		"show RESOURCE [--pg CONNINFO]",
		"Print who holds RESOURCE, for how much longer, who waits, the last token\n"
		"handed out; with --pg, the token PostgreSQL last accepted and its counts.",
	show_reads},
	{"list", 0, 0, "at most one argument: PATTERN", cmd_list, 1,
		"list [PATTERN]",
		"Print the leases held now whose resource matches PATTERN (a glob: *, ?,\n"
		"[...]), with owner, remaining TTL, token and waiters.",
	list_reads},
	{"resync", 0, 0, "--pg CONNINFO and no argument", cmd_resync, 0,
		"resync --pg CONNINFO [--prefix PREFIX]",
		"After a failover to an asynchronous standby: read the token counter of\n"
		"every resource in Redis (whose name starts with PREFIX), and raise each\n"
		"mark in PostgreSQL to it with fence.resync(), never lowering one and making\n"
		"the missing ones.  Prints FENCE_RESYNC_COUNTERS and FENCE_RESYNC_CHANGED.\n"
		"Refused on a standby (exit 1); running it again changes nothing.",
	resync_reads},
	{"help", 0, 0, "", NULL, 0,
		"help [VERB]",
		"Print fence's help, or VERB's.",
	help_reads},
	{NULL}
};

/* The verb "name", help included (NULL: none such). */
const verb *
find_verb(const char *name)
{
	const verb *v;

	for (v = verbs; v->name != NULL; v++)
		if (strcmp(v->name, name) == 0)
			return v;
	return NULL;
}

/*
 * Parse option "c" (what getopt_long returned) with "arg" into "o": 0, or
 * -1 out of memory.  A usage error goes into "err" (the first one only).
 */
static int
parse_one(int c, char *arg, options *o, int nargs, int argc, char *err, size_t errlen)
{
	const cli_option *opt = NULL;
	char		errbuf[256],
				what[32];
	int			i;

	for (i = 0; i < NOPTIONS && opt == NULL; i++)
		if (key_of(i) == c)
			opt = &cli_options[i];
	if (opt == NULL)
		return 0;
	switch (opt->kind)
	{
		case OPT_STRING:
			*(const char **) ((char *) o + opt->offset) = arg;
			return 0;
		case OPT_FLAG:
			*(int *) ((char *) o + opt->offset) = 1;
			return 0;
		case OPT_DURATION:
			snprintf(what, sizeof(what), "--%s", opt->name);
			if (parse_duration_arg(what, arg, (long long *) ((char *) o + opt->offset),
								   opt->inf_ms, errbuf, sizeof(errbuf)) != 0 && !*err)
				snprintf(err, errlen, "%s", errbuf);
			return 0;
		case OPT_OWN:
			break;
	}
	switch (c)
	{
		case 'r':
			if (o->redis == NULL)
				o->redis = arg;
			else if (add_quorum_url(o, arg) != 0)
				return -1;
			break;
		case 'R':
			/* after the verb's own RESOURCE: the two do not mix */
			if (nargs > 1 && !*err)
				snprintf(err, errlen, "a RESOURCE argument and -R do not mix: give every resource with -R");
			if (o->resources == NULL && (o->resources = calloc(argc, sizeof(char *))) == NULL)
				return -1;
			o->resources[o->nresources++] = arg;
			break;
		case 'j':
			o->json = cli_json = 1;
			break;
		case 'q':
			cli_verbosity = -1;
			break;
		case 'v':
			cli_verbosity = 1;
			break;
		case 'V':
			o->version = 1;
			break;
		case 'h':
			o->help = 1;
			break;
		default:
			if (strcmp(opt->name, "min-replicas") == 0)
			{
				char	   *end;
				long		n = strtol(arg, &end, 10);

				if ((*arg < '0' || *arg > '9' || *end != '\0' || n > 100) && !*err)
					snprintf(err, errlen, "--min-replicas must be a number from 0 to 100, not \"%s\"", arg);
				else
					o->min_replicas = (int) n;
			}
			else if ((o->death_signal = parse_signal(arg)) == 0 && !*err)
				snprintf(err, errlen, "--death-signal must be a signal name (TERM, KILL...) or number, not \"%s\"",
						 arg);
			break;
	}
	return 0;
}

/*
 * Parse the command line into "o" and the verb's arguments "args" (the
 * verb first; "*nargs" of them), "*v" the verb (NULL: none, or unknown).
 * Options may come anywhere among the verb's own arguments.  "-" at the
 * start of the option string hands those over in order (getopt_long would
 * otherwise move every non-option to the end and parse an SQL parameter
 * "-5" as an option); once a verb that passes arguments on has its own,
 * the rest is taken as it is.  "--" ends the options, too.  The first
 * usage error goes into "err", for after --help and --version, which win
 * over it.  0, or -1 out of memory.
 */
int
parse_command_line(int argc, char **argv, options *o, char **args, int *nargs,
				   const verb **v, char *err, size_t errlen)
{
	struct option longs[NOPTIONS + 1];
	char		shorts[3 + 2 * NOPTIONS + 1] = "-:";
	int			c,
				i,
				n = 0;

	for (i = 0; i < NOPTIONS; i++)
	{
		const cli_option *opt = &cli_options[i];

		if (opt->short_name)
		{
			size_t		len = strlen(shorts);

			shorts[len++] = opt->short_name;
			if (opt->arg)
				shorts[len++] = ':';
			shorts[len] = '\0';
		}
		if (opt->name != NULL)
			longs[n++] = (struct option) {opt->name, opt->arg ? required_argument : no_argument, NULL, key_of(i)};
	}
	longs[n] = (struct option) {NULL, 0, NULL, 0};

	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1)
	{
		switch (c)
		{
			case 1:				/* the verb, then its arguments, in order */
				if (*nargs == 0 && ((*v = find_verb(optarg)) == NULL || (*v)->fn == NULL))
				{
					*v = NULL;
					if (!*err)
						snprintf(err, errlen, "unknown command \"%s\"", optarg);
				}
				args[(*nargs)++] = optarg;
				break;
			case ':':
				if (!*err)
					snprintf(err, errlen, "option '%s' requires an argument", argv[optind - 1]);
				break;
			case '?':
				if (optopt == '?')
					o->help = 1;
				else if (*err)
					;
				else if (optopt)
					snprintf(err, errlen, "invalid option -- '%c'", optopt);
				else
					snprintf(err, errlen, "unrecognized option '%s'", argv[optind - 1]);
				break;
			default:
				if (parse_one(c, optarg, o, *nargs, argc, err, errlen) != 0)
					return -1;
				break;
		}
		/* the verb has its own arguments: what follows is passed on */
		if (c == 1 && *v != NULL && (*v)->variadic && *nargs == 1 + (*v)->fixed - (o->nresources > 0))
			break;
	}
	while (optind < argc)
		args[(*nargs)++] = argv[optind++];
	return 0;
}
