/*
 * client/cli/main.c
 *	  The fence command: leases, tokens and fenced commands from a shell.
 *
 *	  fence acquire RESOURCE [--ttl D] [--wait D] [--pg CONNINFO]
 *	  fence release RESOURCE OWNER
 *	  fence extend  RESOURCE OWNER [--ttl D]
 *	  fence run     RESOURCE [--ttl D] [--wait D] [--pg CONNINFO] [--grace D]
 *	                [--death-signal SIG] [--] CMD [ARG...]
 *	  fence exec    RESOURCE --pg CONNINFO [--] SQL [PARAM...]
 *	  fence show    RESOURCE [--pg CONNINFO]
 *	  fence list    [PATTERN]
 *	  (acquire, release, extend, run, exec: -R RESOURCE, repeated, for a set:
 *	  sets.c, exec_set.c)
 *
 * Exit status (DESIGN.md section 4): 0 success (for run, the command's own
 * status), 64 usage error, 69 Redis or PostgreSQL unreachable, 75 lease not
 * acquired before --wait ran out, 76 lease lost, 77 stale token (LF001),
 * 1 anything else; and from sysexits.h as well, 65 for fence keys in a
 * state fence never writes, 78 for a configuration the servers refuse (a
 * Redis login; for run --pg, the options in PGOPTIONS, at a pooler).
 *
 * This file is the door, as git's main program is: the help, one option
 * parser for every verb (options may come anywhere among a verb's
 * arguments), the checks that run before anything is contacted, and the
 * table that sends each verb to its cmd_* (cli.h).  The verbs live one
 * family to a file: acquire.c (acquire, release, extend), run.c, exec.c,
 * show.c and list.c, on take.c (taking a lease, guarded against signals),
 * name.c, output.c and common.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void
usage(void)
{
	printf("%s takes leases on Redis and carries their fencing tokens into PostgreSQL.\n\n", progname);
	printf("Usage:\n");
	printf("  %s acquire RESOURCE [OPTION]...           take a lease, print FENCE_* lines\n", progname);
	printf("  %s release RESOURCE OWNER [OPTION]...     give a lease back\n", progname);
	printf("  %s extend  RESOURCE OWNER [OPTION]...     renew a lease for --ttl\n", progname);
	printf("  %s run     RESOURCE [OPTION]... [--] COMMAND [ARG]...\n", progname);
	printf("                                               run COMMAND while holding the lease\n");
	printf("  %s exec    RESOURCE --pg CONNINFO [OPTION]... [--] SQL [PARAM]...\n", progname);
	printf("                                               run one fenced SQL statement\n");
	printf("  %s show    RESOURCE [OPTION]...           owner, remaining TTL, waiters, tokens;\n", progname);
	printf("                                               with --pg, the mark and fence.stats counts\n");
	printf("  %s list    [PATTERN] [OPTION]...          held leases (owner, TTL, waiters) whose\n", progname);
	printf("                                               resource matches PATTERN (a glob)\n");
	printf("\nLease options:\n");
	printf("  -R, --resource=RESOURCE  acquire, release, extend, run, exec: one lease of a set,\n");
	printf("                           instead of the RESOURCE argument; repeat it (a\n");
	printf("                           transfer: -R acct:1 -R acct:2); release and extend\n");
	printf("                           take the set's one OWNER\n");
	printf("  -t, --ttl=DURATION       lease time to live (default: 30s)\n");
	printf("  -w, --wait=DURATION      how long to retry while the lease is busy (default: 0)\n");
	printf("  -g, --grace=DURATION     run: time between SIGTERM and SIGKILL when the\n");
	printf("                           lease is lost (default: 10s)\n");
	printf("  -n, --name=NAME          who holds the lease, in front of its owner id\n");
	printf("                           (NAME/ and 32 random hex digits; letters, digits\n");
	printf("                           and _-:@+, at most 64; default: HOST:PID:COMMAND)\n");
	printf("      --death-signal=SIGNAL\n");
	printf("                           run: the signal COMMAND gets if fence itself dies\n");
	printf("                           (kill -9, a crash), by name or number (default: TERM)\n");
	printf("\nConnection options:\n");
	printf("  -r, --redis=URL          where the leases live (see URLs below); given\n");
	printf("                           more than once: a quorum of independent nodes\n");
	printf("                           (default: $FENCE_REDIS_URL, else\n");
	printf("                           %s)\n", FENCE_DEFAULT_URL);
	printf("      --min-replicas=N     take a lease only once N replicas have its lock\n");
	printf("                           and token (not for a quorum; default: 0)\n");
	printf("      --replica-timeout=DURATION\n");
	printf("                           how long to wait for them (default: 1s)\n");
	printf("  -p, --pg=CONNINFO        PostgreSQL connection string; the token is\n");
	printf("                           announced there before anything else runs\n");
	printf("\nOther options:\n");
	printf("  -j, --json               print results as JSON (bytes that are not UTF-8\n");
	printf("                           come out as U+FFFD)\n");
	printf("  -V, --version            output version information, then exit\n");
	printf("  -?, --help               show this help, then exit\n");
	printf("\nURLs:\n");
	printf("  redis://[[user]:password@]host[:port][/db]      one node\n");
	printf("  unix:///path/to/socket[?db=N]                   one node\n");
	printf("  redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/MASTER[?db=N]\n");
	printf("                                the master Sentinel names (port 26379)\n");
	printf("  redis-cluster://[[user]:password@]host[:port][,host[:port]...]\n");
	printf("                                a Redis Cluster\n");
	printf("  several redis://, rediss:// or unix:// URLs, separated by whitespace in\n");
	printf("  $FENCE_REDIS_URL or given by repeated --redis: a quorum (Redlock)\n");
	printf("  rediss://, rediss-sentinel://, rediss-cluster://: the same over TLS, the\n");
	printf("  server's certificate and host name verified; query parameters (after ?,\n");
	printf("  joined by &): tls-ca-cert-file=FILE, tls-ca-cert-dir=DIR (default: the\n");
	printf("  system's CAs), tls-cert-file=FILE and tls-key-file=FILE (a client\n");
	printf("  certificate), tls-server-name=NAME (sent as SNI and verified instead of\n");
	printf("  the host), tls-insecure-skip-verify=yes (no checks at all: tests only)\n");
	printf("\nDURATION is 250ms, 10s, 2m, 1h, or a plain number of milliseconds.\n");
	printf("\nOptions go before COMMAND or SQL: what follows them is passed on as it is\n");
	printf("(\"fence exec R --pg C 'SELECT $1' -5\" binds -5); \"--\" ends the options before\n");
	printf("SQL or a COMMAND that starts with \"-\".\n");
	printf("\nrun gives COMMAND FENCE_RESOURCE, FENCE_TOKEN and FENCE_OWNER, and appends\n");
	printf("-c fence.resource=... -c fence.token=... -c fence.owner=... to PGOPTIONS.\n");
	printf("With -R, or inside another fence run, every lease held goes into one\n");
	printf("-c fence.tokens=R1=T1/O1,R2=T2/O2 (merged with what PGOPTIONS had), and\n");
	printf("into FENCE_TOKENS, FENCE_COUNT and FENCE_RESOURCE_i, FENCE_TOKEN_i, FENCE_OWNER_i.\n");
	printf("With --pg it first checks that a session opened with those options sees the\n");
	printf("token: a connection pooler may refuse them (exit 78) or drop them (a warning).\n");
	printf("It keeps the lease until COMMAND and every process it started have exited\n");
	printf("(background jobs too, and processes that left its process group); if the\n");
	printf("lease is lost, all of them get SIGTERM, then SIGKILL after --grace.\n");
	printf("SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to them; a signal ignored\n");
	printf("when fence starts (nohup) stays ignored, in fence and in COMMAND.  In a\n");
	printf("terminal, job control works as for COMMAND (Ctrl-C, Ctrl-Z, fg, bg); the lease\n");
	printf("is renewed while the job is stopped.\n");
	printf("\nOne of those signals while acquire, run or exec takes the lease is acted on\n");
	printf("once the acquire returns (--wait gives up within half a second; a second one\n");
	printf("stops fence at once): the lease is given back, exit 128+N.  exec cancels its\n");
	printf("statement.\n");
	printf("\nExit status:\n");
	printf("  0   success (run: the status of COMMAND, 128+N if killed by signal N)\n");
	printf("  64  usage error (also a TTL not above the drift margin, 1%% + 2 ms)\n");
	printf("  65  fence's keys in Redis hold what fence never writes (wrong type,\n");
	printf("      lock without expiry, token counter not a positive integer)\n");
	printf("  69  Redis or PostgreSQL unreachable\n");
	printf("  74  acquire, exec: the output could not be written (acquire gives the\n");
	printf("      lease back)\n");
	printf("  75  lease not acquired before --wait ran out\n");
	printf("  76  lease lost (run), or not held by OWNER (release, extend)\n");
	printf("  77  PostgreSQL rejected a stale token\n");
	printf("  78  configuration refused: Redis refused the login (password, ACL user,\n");
	printf("      database); TLS refused (a certificate not trusted, a key that cannot\n");
	printf("      be read, a client certificate the server wants or refuses);\n");
	printf("      run --pg: PostgreSQL (or a pooler) refuses PGOPTIONS\n");
	printf("  1   any other error\n");
}

/*
 * The verbs, and how many arguments each takes before what it passes on:
 * after RESOURCE and SQL, exec's parameters, and after RESOURCE and the
 * command's name, run's arguments, are taken as they are, options or not.
 */
typedef struct verb
{
	const char *name;
	int			fixed;			/* arguments after the verb */
	int			variadic;		/* more may follow, never parsed */
	const char *needs;			/* for the usage error */
	int			(*fn) (fence_ctx *ctx, const options *o, int argc, char **argv);
	int			optional;		/* then up to this many more, parsed */
} verb;

static const verb verbs[] = {
	{"acquire", 1, 0, "exactly one argument: RESOURCE", cmd_acquire},
	{"release", 2, 0, "two arguments: RESOURCE OWNER", cmd_release},
	{"extend", 2, 0, "two arguments: RESOURCE OWNER", cmd_extend},
	{"run", 2, 1, "RESOURCE and a command after --", cmd_run},
	{"exec", 2, 1, "RESOURCE, --pg CONNINFO and SQL", cmd_exec},
	{"show", 1, 0, "exactly one argument: RESOURCE", cmd_show},
	{"list", 0, 0, "at most one argument: PATTERN", cmd_list, 1},
};

static const verb *
find_verb(const char *name)
{
	size_t		i;

	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(verbs[i].name, name) == 0)
			return &verbs[i];
	return NULL;
}

/*
 * Usage errors, all reported before anything is contacted ("err" is the
 * first one parsing found).  Returns 0 when the command line is good, and
 * fills in the Redis URL.
 */
static int
check_command_line(options *o, const verb *v, const char *err, int nargs, char **args)
{
	char		errbuf[256];
	int			rc;

	if (*err)
		return usage_error("%s", err);
	if (v == NULL)
		return usage_error("no command given (acquire, release, extend, run, exec, show or list)%s", "");
	if (o->nresources > 0)
	{
		/* -R names the resources: no RESOURCE argument (sets.c) */
		if ((rc = set_usage(o, v->name, nargs)) != 0)
			return rc;
	}
	else if (nargs < v->fixed || (!v->variadic && nargs > v->fixed + v->optional) ||
			 (v->fn == cmd_exec && o->pg == NULL))
	{
		snprintf(errbuf, sizeof(errbuf), "%s needs %s", v->name, v->needs);
		return usage_error("%s", errbuf);
	}
	/* RESOURCE comes first; list's PATTERN is optional */
	if (o->nresources > 0)
		rc = FENCE_OK;
	else if (v->fn == cmd_list)
		rc = nargs == 0 ? FENCE_OK : fence_check_pattern(args[0], errbuf, sizeof(errbuf));
	else
		rc = fence_check_resource(args[0], errbuf, sizeof(errbuf));
	if (rc != FENCE_OK || fence_check_ttl(o->ttl_ms, errbuf, sizeof(errbuf)) != FENCE_OK)
		return usage_error("%s", errbuf);
	if (o->wait_ms > FENCE_MAX_TTL_MS)
	{
		snprintf(errbuf, sizeof(errbuf), "--wait must be at most %lld ms", FENCE_MAX_TTL_MS);
		return usage_error("%s", errbuf);
	}
	if ((v->fn == cmd_release || v->fn == cmd_extend) && *args[o->nresources > 0 ? 0 : 1] == '\0')
		return usage_error("OWNER must not be empty%s", "");
	if (o->name != NULL && fence_check_owner_name(o->name, errbuf, sizeof(errbuf)) != FENCE_OK)
		return usage_error("--name: %s", errbuf);

	if (o->redis == NULL)
		o->redis = getenv("FENCE_REDIS_URL");
	if (o->redis == NULL || *o->redis == '\0')
		o->redis = FENCE_DEFAULT_URL;
	if (fence_check_url(o->redis, errbuf, sizeof(errbuf)) != FENCE_OK)
		return usage_error("%s", errbuf);
	if (skips_verify(o->redis))
		fprintf(stderr, "%s: warning: tls-insecure-skip-verify=yes: the Redis server's certificate is not checked, so anyone on the way can pose as it (for tests only)\n",
				progname);
	if (o->min_replicas > 0 && is_quorum(o->redis))
		return usage_error("--min-replicas needs one master (one node, Sentinel or Cluster), not a quorum%s", "");
	if (o->min_replicas > 0 &&
		(o->replica_timeout_ms <= 0 || o->replica_timeout_ms >= FENCE_DEFAULT_COMMAND_TIMEOUT_MS))
	{
		snprintf(errbuf, sizeof(errbuf), "--replica-timeout must be between 1 ms and %d ms",
				 FENCE_DEFAULT_COMMAND_TIMEOUT_MS - 1);
		return usage_error("%s", errbuf);
	}
	return 0;
}

/*
 * A standard descriptor that was closed (">&-") would be the first socket
 * fence opens, and what it prints would go to Redis or PostgreSQL.  Hold
 * each closed one with /dev/null, opened read-only, so that writing to it
 * still fails as it would have.
 */
static void
hold_std_fds(void)
{
	int			fd;

	for (fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
			open("/dev/null", O_RDONLY) != fd)
			exit(EXIT_FAIL);	/* cannot happen: the lowest free one */
}

int
main(int argc, char **argv)
{
	static const struct option long_options[] = {
		{"redis", required_argument, NULL, 'r'},
		{"ttl", required_argument, NULL, 't'},
		{"wait", required_argument, NULL, 'w'},
		{"pg", required_argument, NULL, 'p'},
		{"grace", required_argument, NULL, 'g'},
		{"json", no_argument, NULL, 'j'},
		{"min-replicas", required_argument, NULL, 'm' + 256},
		{"replica-timeout", required_argument, NULL, 'T' + 256},
		{"death-signal", required_argument, NULL, 'D' + 256},
		{"name", required_argument, NULL, 'n'},
		{"resource", required_argument, NULL, 'R'},
		{"help", no_argument, NULL, '?' + 256},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}
	};
	options		o;
	char		errbuf[256],
				usage_err[320] = "";
	const verb *v = NULL;
	fence_ctx  *ctx;
	int			c,
				code = 0,
				help = 0,
				version = 0,
				nargs = 0;
	char	  **args;

	hold_std_fds();
	args = calloc(argc + 1, sizeof(char *));
	if (args == NULL)
	{
		fprintf(stderr, "%s: out of memory\n", progname);
		return EXIT_FAIL;
	}
	memset(&o, 0, sizeof(o));
	o.ttl_ms = DEFAULT_TTL_MS;
	o.grace_ms = DEFAULT_GRACE_MS;
	o.replica_timeout_ms = DEFAULT_REPLICA_TIMEOUT_MS;
	o.death_signal = SIGTERM;

	/*
	 * Options may come anywhere among the verb's own arguments.  "-" at the
	 * start of the option string hands those over in order (getopt_long
	 * would otherwise move every non-option to the end and parse an SQL
	 * parameter "-5" as an option); once a verb that passes arguments on
	 * has its own, the rest is taken as it is.  "--" ends the options, too.
	 * As with pg_isready, --help and --version win over any error.
	 */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-:r:t:w:p:g:n:R:jV", long_options, NULL)) != -1)
	{
		long long  *dst = NULL;
		const char *what = NULL;

		switch (c)
		{
			case 1:				/* the verb, then its arguments, in order */
				if (nargs == 0 && (v = find_verb(optarg)) == NULL && !*usage_err)
					snprintf(usage_err, sizeof(usage_err), "unknown command \"%s\"", optarg);
				args[nargs++] = optarg;
				break;
			case 'r':
				if (o.redis == NULL)
					o.redis = optarg;
				else if (add_quorum_url(&o, optarg) != 0)
				{
					fprintf(stderr, "%s: out of memory\n", progname);
					free(args);
					return EXIT_FAIL;
				}
				break;
			case 'm' + 256:
				{
					char	   *end;
					long		n = strtol(optarg, &end, 10);

					if ((*optarg < '0' || *optarg > '9' || *end != '\0' || n > 100) && !*usage_err)
						snprintf(usage_err, sizeof(usage_err),
								 "--min-replicas must be a number from 0 to 100, not \"%s\"", optarg);
					else
						o.min_replicas = (int) n;
				}
				break;
			case 'T' + 256:
				dst = &o.replica_timeout_ms;
				what = "--replica-timeout";
				break;
			case 'D' + 256:
				if ((o.death_signal = parse_signal(optarg)) == 0 && !*usage_err)
					snprintf(usage_err, sizeof(usage_err),
							 "--death-signal must be a signal name (TERM, KILL...) or number, not \"%s\"",
							 optarg);
				break;
			case 'p':
				o.pg = optarg;
				break;
			case 'n':
				o.name = optarg;
				break;
			case 'R':
				/* after the verb's own RESOURCE: the two do not mix */
				if (nargs > 1 && !*usage_err)
					snprintf(usage_err, sizeof(usage_err),
							 "a RESOURCE argument and -R do not mix: give every resource with -R");
				if (o.resources == NULL && (o.resources = calloc(argc, sizeof(char *))) == NULL)
				{
					fprintf(stderr, "%s: out of memory\n", progname);
					free(args);
					return EXIT_FAIL;
				}
				o.resources[o.nresources++] = optarg;
				break;
			case 'j':
				o.json = 1;
				break;
			case 't':
				dst = &o.ttl_ms;
				what = "--ttl";
				break;
			case 'w':
				dst = &o.wait_ms;
				what = "--wait";
				break;
			case 'g':
				dst = &o.grace_ms;
				what = "--grace";
				break;
			case 'V':
				version = 1;
				break;
			case '?' + 256:
				help = 1;
				break;
			case ':':
				if (!*usage_err)
					snprintf(usage_err, sizeof(usage_err), "option '%s' requires an argument",
							 argv[optind - 1]);
				break;
			default:
				if (optopt == '?')
					help = 1;
				else if (*usage_err)
					;
				else if (optopt)
					snprintf(usage_err, sizeof(usage_err), "invalid option -- '%c'", optopt);
				else
					snprintf(usage_err, sizeof(usage_err), "unrecognized option '%s'", argv[optind - 1]);
				break;
		}
		if (dst != NULL && fence_parse_duration(optarg, dst, errbuf, sizeof(errbuf)) != FENCE_OK &&
			!*usage_err)
			snprintf(usage_err, sizeof(usage_err), "%s: %s", what, errbuf);
		/* the verb has its own arguments: what follows is passed on */
		if (c == 1 && v != NULL && v->variadic && nargs == 1 + v->fixed - (o.nresources > 0))
			break;
	}
	while (optind < argc)
		args[nargs++] = argv[optind++];
	if (help)
	{
		usage();
		free(args);
		free(o.redis_list);
		free(o.resources);
		return 0;
	}
	if (version)
	{
		printf("fence (pgfence) %s\n", FENCE_VERSION);
		free(args);
		free(o.redis_list);
		free(o.resources);
		return 0;
	}
	code = check_command_line(&o, v, usage_err, nargs - 1, args + 1);
	if (code == 0)
	{
		if ((ctx = redis_connect(&o, &code)) != NULL)
		{
			code = v->fn(ctx, &o, nargs - 1, args + 1);
			fence_free(ctx);
		}
	}
	free(args);
	free(o.redis_list);
	free(o.resources);
	fflush(stdout);
	return code;
}
