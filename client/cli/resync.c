/*
 * client/cli/resync.c
 *	  fence resync --pg CONNINFO [--prefix PREFIX]: after a failover to a
 *	  PostgreSQL standby that missed acknowledged announces, raise every
 *	  mark to its resource's token counter in Redis.
 *
 * Such a standby brings older marks back, and the tokens of earlier
 * holders pass again.  Redis's counter (fence:{R}:token) only grows and is
 * at least every token handed out: a mark raised to it refuses every token
 * but the newest, which still writes.  The library reads the counters
 * (fence_counters: SCAN on every node that holds keys, never KEYS), and
 * fence.resync() raises the marks in one call, never lowering one, and
 * making those the standby never had; every resource with a counter is
 * covered, with or without a mark.  Refused on a standby, which cannot
 * write: run it against the promoted server.
 *
 * Prints FENCE_RESYNC_COUNTERS (counters read) and FENCE_RESYNC_CHANGED
 * (marks raised or made), or one JSON object with --json.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/*
 * The array literal of "n" strings (quoted, '"' and '\\' escaped), or of
 * the counters' names ("names") or tokens; malloc'd, NULL when out of
 * memory.
 */
static char *
array_literal(const fence_counter *counters, size_t n, int names)
{
	size_t		size = 3,
				i;
	char	   *out,
			   *q;

	for (i = 0; i < n; i++)
		size += (names ? 2 * strlen(counters[i].resource) : 20) + 3;
	if ((q = out = malloc(size)) == NULL)
		return NULL;
	*q++ = '{';
	for (i = 0; i < n; i++)
	{
		const char *p;

		if (i > 0)
			*q++ = ',';
		if (!names)
		{
			q += sprintf(q, "%lld", counters[i].token);
			continue;
		}
		*q++ = '"';
		for (p = counters[i].resource; *p; p++)
		{
			if (*p == '"' || *p == '\\')
				*q++ = '\\';
			*q++ = *p;
		}
		*q++ = '"';
	}
	*q++ = '}';
	*q = '\0';
	return out;
}

/*
 * The fence_list pattern for the names that start with "prefix": its glob
 * characters escaped, then "*" (malloc'd), or NULL when out of memory.
 */
static char *
prefix_pattern(const char *prefix)
{
	char	   *out = malloc(2 * strlen(prefix) + 2),
			   *q = out;
	const char *p;

	if (out == NULL)
		return NULL;
	for (p = prefix; *p; p++)
	{
		if (strchr("*?[]\\", *p) != NULL)
			*q++ = '\\';
		*q++ = *p;
	}
	*q++ = '*';
	*q = '\0';
	return out;
}

/* Report a PostgreSQL error of "what"; the exit status. */
static int
pg_error(PGconn *pg, PGresult *r, const char *what)
{
	char		buf[1024];
	const char *hint = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_HINT) : NULL;
	const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	snprintf(buf, sizeof(buf), "%s: %s", what, msg ? msg : PQerrorMessage(pg));
	if (*buf && buf[strlen(buf) - 1] == '\n')
		buf[strlen(buf) - 1] = '\0';
	return report_error(PQstatus(pg) == CONNECTION_OK ? EXIT_FAIL : EXIT_UNAVAIL, buf, hint);
}

int
cmd_resync(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	fence_counter *counters = NULL;
	size_t		n = 0;
	char	   *pattern = NULL,
			   *resources = NULL,
			   *tokens = NULL;
	const char *params[2];
	char		errbuf[256];
	PGconn	   *pg;
	PGresult   *r;
	int			code = 0;

	(void) argv;
	if (argc != 0)
		return usage_error("resync takes no argument (--prefix PREFIX for some resources)%s", "");
	if (o->prefix != NULL)
	{
		if ((pattern = prefix_pattern(o->prefix)) == NULL)
			return report_error(EXIT_FAIL, "out of memory", NULL);
		if (fence_check_pattern(pattern, errbuf, sizeof(errbuf)) != FENCE_OK)
		{
			free(pattern);
			return usage_error("--prefix: %s", errbuf);
		}
	}
	if ((pg = pg_connect(o->pg, &code)) == NULL)
	{
		free(pattern);
		return code;
	}

	/* a standby cannot write, and its marks are what the primary replayed */
	r = PQexec(pg, "SELECT pg_catalog.pg_is_in_recovery()");
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
	{
		code = pg_error(pg, r, "could not ask whether PostgreSQL is a standby");
		goto done;
	}
	if (strcmp(PQgetvalue(r, 0, 0), "t") == 0)
	{
		code = report_error(EXIT_FAIL, "PostgreSQL is a standby: its marks cannot be raised there",
							"Run fence resync against the primary (after a failover, the promoted server).");
		goto done;
	}
	PQclear(r);
	r = NULL;

	if (fence_counters(ctx, pattern, &counters, &n) != FENCE_OK)
	{
		code = fail(ctx);
		goto done;
	}
	resources = array_literal(counters, n, 1);
	tokens = array_literal(counters, n, 0);
	if (resources == NULL || tokens == NULL)
	{
		code = report_error(EXIT_FAIL, "out of memory", NULL);
		goto done;
	}

	params[0] = resources;
	params[1] = tokens;
	trace("raising the marks of %zu resources to their counters", n);
	r = PQexecParams(pg, "SELECT fence.resync($1::text[], $2::bigint[])",
					 2, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
	{
		code = pg_error(pg, r, "could not raise the marks");
		goto done;
	}
	if (o->json)
		printf("{\"counters\":%zu,\"changed\":%s}\n", n, PQgetvalue(r, 0, 0));
	else
	{
		char		num[24];

		snprintf(num, sizeof(num), "%zu", n);
		shell_assign("FENCE_RESYNC_COUNTERS", num);
		shell_assign("FENCE_RESYNC_CHANGED", PQgetvalue(r, 0, 0));
	}
	note("raised or made %s marks, from %zu token counters in Redis", PQgetvalue(r, 0, 0), n);
done:
	if (r != NULL)
		PQclear(r);
	PQfinish(pg);
	fence_counters_free(counters, n);
	free(resources);
	free(tokens);
	free(pattern);
	return code;
}
