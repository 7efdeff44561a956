/*
 * client/cli/common.c
 *	  What every verb of the fence command shares: usage errors, exit codes
 *	  for the library's errors, and connecting to Redis and PostgreSQL.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/*
 * A signal by name (TERM, SIGTERM; the ones a user would send to stop a
 * process) or number.  Returns the signal, or 0.
 */
int
parse_signal(const char *s)
{
	static const struct
	{
		const char *name;
		int			sig;
	}			names[] = {
		{"HUP", SIGHUP}, {"INT", SIGINT}, {"QUIT", SIGQUIT}, {"KILL", SIGKILL},
		{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM}
	};
	char	   *end;
	long		n;
	size_t		i;

	if (*s >= '0' && *s <= '9')
	{
		n = strtol(s, &end, 10);
		return *end == '\0' && n >= 1 && n <= SIGRTMAX ? (int) n : 0;
	}
	if (strncmp(s, "SIG", 3) == 0)
		s += 3;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].sig;
	return 0;
}

int
usage_error(const char *fmt, const char *arg)
{
	char		msg[1024];

	snprintf(msg, sizeof(msg), fmt, arg);
	report_error(EXIT_USAGE, msg, NULL);
	fprintf(stderr, "Try \"%s --help\" for more information.\n", progname);
	return EXIT_USAGE;
}

/* The exit status for a failed library call. */
static int
exit_for(int err)
{
	switch (err)
	{
		case FENCE_ERR_IO:
		case FENCE_ERR_PROTOCOL:
		case FENCE_ERR_REPLICAS:
			return EXIT_UNAVAIL;
		case FENCE_ERR_BUSY:
		case FENCE_ERR_TIMEOUT:
			return EXIT_BUSY;
		case FENCE_ERR_LOST:
		case FENCE_ERR_SUSPECT:
			return EXIT_LOST;
		case FENCE_ERR_STALE:
			return EXIT_STALE;
		case FENCE_ERR_ARG:
			return EXIT_USAGE;
		case FENCE_ERR_AUTH:
		case FENCE_ERR_TLS:
			return EXIT_CONFIG;
		case FENCE_ERR_STATE:
			return EXIT_DATAERR;
		default:
			return EXIT_FAIL;
	}
}

int
fail(fence_ctx *ctx)
{
	return report_error(exit_for(ctx->err), ctx->errstr, NULL);
}

/*
 * A PostgreSQL failure: unreachable (69) or some other error (1); with the
 * fix when the database is not set up for fence (a grant, the extension).
 */
static int	pg_read_only(PGconn *pg);

int
pg_fail(fence_ctx *ctx, PGconn *pg)
{
	int			code = exit_for(ctx->err);

	if (ctx->err == FENCE_ERR_PG && (pg == NULL || PQstatus(pg) != CONNECTION_OK))
		code = EXIT_UNAVAIL;
	/* it became read-only since we connected (a switchover): no writer */
	else if (ctx->err == FENCE_ERR_PG && PQtransactionStatus(pg) == PQTRANS_IDLE &&
			 pg_read_only(pg))
		code = EXIT_UNAVAIL;
	return report_error(code, ctx->errstr, fence_pg_hint(ctx));
}

fence_ctx *
redis_connect(const options *o, int *code)
{
	fence_ctx  *ctx;

	if (cli_verbosity > 0)
	{
		char	   *shown = masked_url(o->redis);

		trace("connecting to %s (timeout %lld ms)", shown ? shown : "Redis", o->timeout_ms);
		free(shown);
	}
	ctx = fence_connect_timeout(o->redis, FENCE_DEFAULT_CONNECT_TIMEOUT_MS < o->timeout_ms ?
								FENCE_DEFAULT_CONNECT_TIMEOUT_MS : (long) o->timeout_ms,
								(long) o->timeout_ms);
	if (ctx == NULL)
	{
		*code = report_error(EXIT_FAIL, "out of memory", NULL);
		return NULL;
	}
	if (ctx->err)
	{
		*code = fail(ctx);
		fence_free(ctx);
		return NULL;
	}
	trace("connected");
	if (o->min_replicas > 0 &&
		fence_set_min_replicas(ctx, o->min_replicas, (long) o->replica_timeout_ms) != FENCE_OK)
	{
		*code = fail(ctx);
		fence_free(ctx);
		return NULL;
	}
	return ctx;
}

/* --redis once more: the URLs so far and "url", separated by a space. */
int
add_quorum_url(options *o, const char *url)
{
	size_t		len = strlen(o->redis) + strlen(url) + 2;
	char	   *list = malloc(len);

	if (list == NULL)
		return -1;
	snprintf(list, len, "%s %s", o->redis, url);
	free(o->redis_list);
	o->redis_list = list;
	o->redis = list;
	return 0;
}

/* Several URLs (a quorum) rather than one? */
int
is_quorum(const char *spec)
{
	const char *p = spec;
	int			words = 0;

	while (*p)
	{
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v')
			p++;
		if (*p == '\0')
			break;
		words++;
		while (*p && !(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v'))
			p++;
	}
	return words > 1;
}

PGconn *
pg_connect(const char *conninfo, int *code)
{
	PGconn	   *pg;
	const char *why;

	if ((why = pq_load()) != NULL)
	{
		fprintf(stderr, "%s: %s\n", progname, why);
		*code = EXIT_UNAVAIL;
		return NULL;
	}
	pg = PQconnectdb(conninfo);
	if (pg == NULL || PQstatus(pg) != CONNECTION_OK)
	{
		const char *msg = pg ? PQerrorMessage(pg) : "out of memory\n";
		char		buf[1024];

		snprintf(buf, sizeof(buf), "could not connect to PostgreSQL: %s", msg);
		if (*buf && buf[strlen(buf) - 1] == '\n')
			buf[strlen(buf) - 1] = '\0';
		/* a malformed conninfo is the user's mistake, not an outage */
		*code = report_error(pg && strstr(PQerrorMessage(pg), "invalid connection option") ? EXIT_USAGE :
							 (pg && strstr(PQerrorMessage(pg), "missing \"=\"") ? EXIT_USAGE : EXIT_UNAVAIL),
							 buf, NULL);
		PQfinish(pg);
		return NULL;
	}
	return pg;
}

/*
 * Is the server at the other end of "pg" read-only: a standby (after a
 * switchover, a single-host --pg still names the demoted server; a pooler
 * may still point at it), or a primary with default_transaction_read_only?
 * Servers of PostgreSQL 14 and later report both settings at login; an
 * older one is asked.
 */
static int
pg_read_only(PGconn *pg)
{
	const char *standby = PQparameterStatus(pg, "in_hot_standby");
	const char *ro = PQparameterStatus(pg, "default_transaction_read_only");
	PGresult   *res;
	int			yes;

	if (standby != NULL)
		return strcmp(standby, "on") == 0 || (ro != NULL && strcmp(ro, "on") == 0);
	res = PQexec(pg, "SELECT pg_catalog.pg_is_in_recovery() "
				 "OR pg_catalog.current_setting('default_transaction_read_only')::bool");
	yes = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
		strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return yes;
}

/*
 * pg_connect for a verb that announces tokens, which writes: a read-only
 * server cannot take the announce.  That is the writer out of reach (69),
 * found before any lease is taken, and said with the way to the primary.
 */
PGconn *
pg_connect_writer(const char *conninfo, int *code)
{
	PGconn	   *pg = pg_connect(conninfo, code);
	char		buf[1024];

	if (pg == NULL || !pg_read_only(pg))
		return pg;
	snprintf(buf, sizeof(buf),
			 "PostgreSQL at --pg (%s port %s) is a read-only server (a standby, or "
			 "default_transaction_read_only): tokens are announced to the primary",
			 PQhost(pg) ? PQhost(pg) : "?", PQport(pg) ? PQport(pg) : "?");
	*code = report_error(EXIT_UNAVAIL, buf,
						 "Reach the primary: list every server of the cluster in --pg and add "
						 "target_session_attrs=read-write (\"host=pg1,pg2 "
						 "target_session_attrs=read-write\", or "
						 "postgresql://pg1,pg2/db?target_session_attrs=read-write); libpq then "
						 "connects to whichever is the primary.");
	PQfinish(pg);
	return NULL;
}
