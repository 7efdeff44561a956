/*
 * client/cli/help.c
 *	  fence's help: the whole of it (fence --help), and each verb's own
 *	  (fence run --help, fence help run), which says only what that verb
 *	  takes.
 *
 * Grouped under headings with the defaults shown, as pg_isready's is.
 * Nothing here contacts anything: help is printed before a URL is looked
 * at, and wins over any error on the same command line.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void
usage_options(void)
{
	printf("\nLease options:\n");
	printf("  -R, --resource=RESOURCE  acquire, release, extend, run, exec: one lease of a set,\n");
	printf("                           instead of the RESOURCE argument; repeat it (a\n");
	printf("                           transfer: -R acct:1 -R acct:2); release and extend\n");
	printf("                           take the set's one OWNER\n");
	printf("  -t, --ttl=DURATION       lease time to live (default: 30s)\n");
	printf("  -w, --wait=DURATION      how long to queue while the lease is busy\n");
	printf("                           (default: 0; inf waits for ever, as flock does)\n");
	printf("  -g, --grace=DURATION     run: time between SIGTERM and SIGKILL when the\n");
	printf("                           lease is lost (default: 10s)\n");
	printf("  -n, --name=NAME          who holds the lease, in front of its owner id\n");
	printf("                           (NAME/ and 32 random hex digits; letters, digits\n");
	printf("                           and _-:@+, at most 64; default: HOST:PID:COMMAND)\n");
	printf("  -c STRING                run: run /bin/sh -c STRING as the command\n");
	printf("      --hold               acquire: keep the lease alive, renewing it, until\n");
	printf("                           SIGINT or SIGTERM, then give it back (exit 0);\n");
	printf("                           exit 76 if it is lost meanwhile\n");
	printf("      --prefix=PREFIX      resync: only the resources whose name starts\n");
	printf("                           with PREFIX\n");
	printf("      --death-signal=SIGNAL\n");
	printf("                           run: the signal COMMAND gets if fence itself dies\n");
	printf("                           (kill -9, a crash), by name or number (default: TERM)\n");
	printf("\nConnection options:\n");
	printf("  -r, --redis=URL          where the leases live (see URLs below); given\n");
	printf("                           more than once: a quorum of independent nodes\n");
	printf("                           (default: $FENCE_REDIS_URL, else\n");
	printf("                           %s)\n", FENCE_DEFAULT_URL);
	printf("      --password-file=FILE the Redis password, read from FILE (see Passwords)\n");
	printf("      --inherit-password   run: leave the Redis password in COMMAND's\n");
	printf("                           environment, for a nested fence run (see Passwords)\n");
	printf("      --timeout=DURATION   how long connecting to Redis and each command may\n");
	printf("                           take (default: 5s); while --wait runs, its end\n");
	printf("                           bounds them too\n");
	printf("      --min-replicas=N     take a lease only once N replicas have its lock\n");
	printf("                           and token (not for a quorum; default: 0)\n");
	printf("      --replica-timeout=DURATION\n");
	printf("                           how long to wait for them (default: 1s)\n");
	printf("  -p, --pg=CONNINFO        PostgreSQL connection string; the token is\n");
	printf("                           announced there before anything else runs\n");
	printf("                           (run: default $FENCE_PG, else the server that\n");
	printf("                           PGSERVICE, PGHOST or PGDATABASE name, as for psql)\n");
	printf("      --no-pg              run: announce to no PostgreSQL, and say nothing\n");
	printf("                           about it (the command writes nothing fenced)\n");
	printf("      --pooler             run: COMMAND connects through a pooler that refuses\n");
	printf("                           or drops PGOPTIONS (PgBouncer): it gets FENCE_*\n");
	printf("                           only, and sets the token per transaction\n");
	printf("\nOther options:\n");
	printf("  -j, --json               print results as JSON, and errors too, on stdout:\n");
	printf("                           {\"ok\":false,\"error\":\"busy\",\"exit\":75,\"message\":...}\n");
	printf("                           (bytes that are not UTF-8 come out as U+FFFD)\n");
	printf("  -q, --quiet              no notes or warnings on stderr, errors only\n");
	printf("  -v, --verbose            say what fence does: connections, the lease,\n");
	printf("                           renewals, the release\n");
	printf("  -V, --version            output version information, then exit\n");
	printf("  -h, --help               show this help, then exit (after a verb: its own)\n");
}

static void
usage(void)
{
	printf("%s takes leases on Redis and carries their fencing tokens into PostgreSQL.\n\n", progname);
	printf("Usage:\n");
	printf("  %s acquire RESOURCE [OPTION]...           take a lease, print FENCE_* lines\n", progname);
	printf("  %s release RESOURCE OWNER [OPTION]...     give a lease back\n", progname);
	printf("  %s extend  RESOURCE OWNER [OPTION]...     renew a lease for --ttl\n", progname);
	printf("  %s run     RESOURCE [OPTION]... [--] COMMAND [ARG]...\n", progname);
	printf("                                               run COMMAND (or, with -c STRING,\n");
	printf("                                               /bin/sh -c STRING) while holding the lease\n");
	printf("  %s exec    RESOURCE --pg CONNINFO [OPTION]... [--] SQL [PARAM]...\n", progname);
	printf("                                               run one fenced SQL statement\n");
	printf("  %s show    RESOURCE [OPTION]...           owner, remaining TTL, waiters, tokens;\n", progname);
	printf("                                               with --pg, the mark and fence.stats counts\n");
	printf("  %s list    [PATTERN] [OPTION]...          held leases (owner, TTL, waiters) whose\n", progname);
	printf("                                               resource matches PATTERN (a glob)\n");
	printf("  %s resync  --pg CONNINFO [OPTION]...      after a failover to an asynchronous\n", progname);
	printf("                                               standby: raise every mark to its\n");
	printf("                                               token counter in Redis\n");
	printf("  %s help    [VERB]                         this help, or VERB's\n", progname);
	usage_options();
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
	printf("\nPasswords: a password on the command line can be read by anyone on the\n");
	printf("machine (fence hides it from ps once started, not before).  Give it in\n");
	printf("--password-file FILE, or $FENCE_REDIS_PASSWORD, or $REDISCLI_AUTH (as\n");
	printf("redis-cli takes it), the first there is: it logs in to every node whose URL\n");
	printf("holds no password of its own, with the URL's user if it names one\n");
	printf("(redis://user@host).  run keeps the password from COMMAND: it takes\n");
	printf("$FENCE_REDIS_PASSWORD and $REDISCLI_AUTH out of its environment, and the\n");
	printf("passwords out of $FENCE_REDIS_URL, unless --inherit-password.\n");
	printf("\nDURATION is a whole number and its unit: 250ms, 10s, 2m, 1h (0 needs none).\n");
	printf("A bare number is refused: before 0.3.0 it meant milliseconds.\n");
	printf("\nOptions go before COMMAND or SQL: what follows them is passed on as it is\n");
	printf("(\"fence exec R --pg C 'SELECT $1' -5\" binds -5); \"--\" ends the options before\n");
	printf("SQL or a COMMAND that starts with \"-\".\n");
	printf("\nacquire prints the lease and exits: nothing renews it, so after\n");
	printf("eval \"$(fence acquire R)\" it lapses after its TTL unless \"fence extend\" runs in\n");
	printf("time.  run renews it while COMMAND runs; acquire --hold renews it until stopped.\n");
	printf("\nrun gives COMMAND FENCE_RESOURCE, FENCE_TOKEN and FENCE_OWNER, and appends\n");
	printf("-c fence.resource=... -c fence.token=... -c fence.owner=... to PGOPTIONS.\n");
	printf("With -R, or inside another fence run, every lease held goes into one\n");
	printf("-c fence.tokens=R1=T1/O1,R2=T2/O2 (merged with what PGOPTIONS had), and\n");
	printf("into FENCE_TOKENS, FENCE_COUNT and FENCE_RESOURCE_i, FENCE_TOKEN_i, FENCE_OWNER_i.\n");
	printf("With --pg it first checks that a session opened with those options sees the\n");
	printf("token: a connection pooler may refuse them (exit 78) or drop them (a warning);\n");
	printf("with --pooler PGOPTIONS stays as it was.  A run with no PostgreSQL to announce\n");
	printf("to (no --pg, FENCE_PG, PGSERVICE, PGHOST or PGDATABASE) says so, unless --no-pg.\n");
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
	printf("  69  Redis or PostgreSQL unreachable (or silent past --timeout, or past\n");
	printf("      the end of --wait, or a reply announcing more than fence reads);\n");
	printf("      a read-only server (a standby) at --pg\n");
	printf("  74  acquire, exec: the output could not be written (acquire gives the\n");
	printf("      lease back)\n");
	printf("  75  lease not acquired before --wait ran out\n");
	printf("  76  lease lost (run, acquire --hold), or not held by OWNER (release, extend)\n");
	printf("  77  PostgreSQL rejected a stale token\n");
	printf("  78  configuration refused: Redis refused the login (password, ACL user,\n");
	printf("      database); TLS refused (a certificate not trusted, a key that cannot\n");
	printf("      be read, a client certificate the server wants or refuses);\n");
	printf("      run --pg: PostgreSQL (or a pooler) refuses PGOPTIONS\n");
	printf("  1   any other error\n");
}

/* One verb's help: its synopsis, what it does, the options it reads. */
typedef struct verb_help
{
	const char *name;
	const char *synopsis;
	const char *text;
	const char *options;
} verb_help;

static const verb_help helps[] = {
	{"acquire", "acquire RESOURCE [--ttl D] [--wait D] [--pg CONNINFO] [--name NAME] [--hold]\n"
		"  fence acquire -R RESOURCE [-R RESOURCE]... [OPTION]...",
		"Take the lease on RESOURCE and print FENCE_RESOURCE, FENCE_TOKEN and\n"
		"FENCE_OWNER lines for a shell's eval (or JSON).  Nothing renews the lease:\n"
		"after eval \"$(fence acquire R)\" it lapses after --ttl unless \"fence extend\"\n"
		"runs in time; give it back with \"fence release R $FENCE_OWNER\".  With --hold,\n"
		"fence stays after printing and flushing, renews the lease until SIGINT or\n"
		"SIGTERM, then gives it back (exit 0); exit 76 if it is lost meanwhile.\n"
		"Exit 75 when the lease is busy past --wait.  With -R, a set of leases,\n"
		"taken in the bytewise order of their names: all of them or none.",
	"--resource --ttl --wait --timeout --pg --name --hold --redis --password-file --min-replicas --replica-timeout --json --quiet --verbose"},
	{"release", "release RESOURCE OWNER\n  fence release -R RESOURCE [-R RESOURCE]... OWNER",
		"Give back the lease OWNER holds (compare-and-delete): exit 76 when OWNER\n"
		"does not hold it (it expired, or passed on).",
	"--resource --timeout --redis --password-file --json --quiet --verbose"},
	{"extend", "extend RESOURCE OWNER [--ttl D]\n  fence extend -R RESOURCE [-R RESOURCE]... OWNER [--ttl D]",
		"Renew the lease OWNER holds for --ttl from now (compare-and-expire): exit 76\n"
		"when OWNER does not hold it any more.",
	"--resource --ttl --timeout --redis --password-file --json --quiet --verbose"},
	{"run", "run RESOURCE [--ttl D] [--wait D] [--pg CONNINFO | --no-pg] [--pooler] [--grace D] [--] COMMAND [ARG]...\n"
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
	"--resource --ttl --wait --timeout --grace --pg --no-pg --pooler --name --death-signal -c --redis --password-file --inherit-password --min-replicas --replica-timeout --json --quiet --verbose"},
	{"exec", "exec RESOURCE --pg CONNINFO [--] SQL [PARAM]...\n"
		"  fence exec -R RESOURCE [-R RESOURCE]... --pg CONNINFO [--] SQL [PARAM]...",
		"Take the lease, announce its token, run one SQL statement fenced by it\n"
		"(PARAMs bound to $1, $2...), print its result as psql -At does (or JSON),\n"
		"give the lease back.  Exit 77 when PostgreSQL refuses a stale token.",
	"--resource --ttl --wait --timeout --pg --name --redis --password-file --json --quiet --verbose"},
	{"show", "show RESOURCE [--pg CONNINFO]",
		"Print who holds RESOURCE, for how much longer, who waits, the last token\n"
		"handed out; with --pg, the token PostgreSQL last accepted and its counts.",
	"--pg --timeout --redis --password-file --json --quiet --verbose"},
	{"list", "list [PATTERN]",
		"Print the leases held now whose resource matches PATTERN (a glob: *, ?,\n"
		"[...]), with owner, remaining TTL, token and waiters.",
	"--timeout --redis --password-file --json --quiet --verbose"},
	{"resync", "resync --pg CONNINFO [--prefix PREFIX]",
		"After a failover to an asynchronous standby: read the token counter of\n"
		"every resource in Redis (whose name starts with PREFIX), and raise each\n"
		"mark in PostgreSQL to it with fence.resync(), never lowering one and making\n"
		"the missing ones.  Prints FENCE_RESYNC_COUNTERS and FENCE_RESYNC_CHANGED.\n"
		"Refused on a standby (exit 1); running it again changes nothing.",
	"--pg --prefix --timeout --redis --password-file --json --quiet --verbose"},
	{"help", "help [VERB]",
		"Print fence's help, or VERB's.",
	""},
};

/*
 * Print the help of "name" (fence help VERB, fence VERB --help), or all of
 * it for NULL.  Returns 0, or 64 for a verb fence does not know.
 */
int
print_help(const char *name)
{
	size_t		i;

	if (name == NULL)
	{
		usage();
		return 0;
	}
	for (i = 0; i < sizeof(helps) / sizeof(helps[0]); i++)
	{
		const char *p;

		if (strcmp(helps[i].name, name) != 0)
			continue;
		printf("Usage:\n  %s %s\n\n%s\n", progname, helps[i].synopsis, helps[i].text);
		if (*helps[i].options)
		{
			int			col = 2;

			/* the options, wrapped at 78 columns */
			printf("\nOptions it reads:\n ");
			for (p = helps[i].options; *p;)
			{
				size_t		n = strcspn(p, " ");

				if (col + 1 + (int) n > 78)
				{
					printf("\n ");
					col = 2;
				}
				printf(" %.*s", (int) n, p);
				col += 1 + (int) n;
				p += n + (p[n] == ' ');
			}
			printf("\n\nDURATION is a whole number and its unit: 250ms, 10s, 2m, 1h.\n");
		}
		printf("See \"%s --help\" for every option, the URLs and the exit status.\n", progname);
		return 0;
	}
	return usage_error("no such command \"%s\" (acquire, release, extend, run, exec, show, list, resync)", name);
}
