/*
 * client/cli/help.c
 *	  fence's help: the whole of it (fence --help), and each verb's own
 *	  (fence run --help, fence help run), which says only what that verb
 *	  takes.
 *
 * Grouped under headings with the defaults shown, as pg_isready's is; the
 * options' lines come from the options table, a verb's from the verbs
 * table (options.c).  Nothing here contacts anything: help is printed before a URL is looked
 * at, and wins over any error on the same command line.
 */
#include <stdio.h>
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
	print_option_lines();
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

/*
 * Print the help of "name" (fence help VERB, fence VERB --help), or all of
 * it for NULL.  Returns 0, or 64 for a verb fence does not know.
 */
int
print_help(const char *name)
{
	const verb *v;
	size_t		i;

	if (name == NULL)
	{
		usage();
		return 0;
	}
	if ((v = find_verb(name)) != NULL)
	{
		printf("Usage:\n  %s %s\n\n%s\n", progname, v->synopsis, v->text);
		if (v->reads[0] != NULL)
		{
			int			col = 2;

			/* the options, wrapped at 78 columns */
			printf("\nOptions it reads:\n ");
			for (i = 0; v->reads[i] != NULL; i++)
			{
				const char *name = v->reads[i];
				int			n = (int) strlen(name) + (name[0] == '-' ? 0 : 2);

				if (col + 1 + n > 78)
				{
					printf("\n ");
					col = 2;
				}
				printf(" %s%s", name[0] == '-' ? "" : "--", name);
				col += 1 + n;
			}
			printf("\n\nDURATION is a whole number and its unit: 250ms, 10s, 2m, 1h.\n");
		}
		printf("See \"%s --help\" for every option, the URLs and the exit status.\n", progname);
		return 0;
	}
	return usage_error("no such command \"%s\" (acquire, release, extend, run, exec, show, list, resync)", name);
}
