/*
 * client/cli/show.c
 *	  fence show: a resource's owner, remaining TTL, live waiters and token
 *	  in Redis; with --pg, the token PostgreSQL last accepted, the edition
 *	  of fence there, and its fence.stats counts.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/*
 * PostgreSQL's counts for one resource (the fence.stats view), as text:
 * accepted, stale, missing, invalid, last refusal (ISO 8601, UTC, or ""),
 * last refused token (or "").
 */
#define SHOW_STATS_FIELDS 6
static const char *const show_stats_names[SHOW_STATS_FIELDS] = {
	"ACCEPTED", "STALE", "MISSING", "INVALID", "LAST_REFUSAL", "LAST_REFUSED_TOKEN"
};

/*
 * Read the counts of "resource" into "*res" (NULL when PostgreSQL keeps
 * none: the library is not preloaded, the role may not read fence.stats,
 * or the extension predates it; a warning says which).  Returns 0, or -1
 * on any other error, which is then in "pg".
 */
static int
show_stats(PGconn *pg, const char *resource, PGresult **res)
{
	const char *params[1] = {resource};
	const char *state;
	PGresult   *r;

	*res = NULL;
	r = PQexecParams(pg,
					 "SELECT coalesce(sum(accepted), 0), coalesce(sum(stale), 0),"
					 " coalesce(sum(missing), 0), coalesce(sum(invalid), 0),"
					 " coalesce(to_char(max(last_refusal) AT TIME ZONE 'UTC',"
					 "   'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), ''),"
					 " coalesce(max(last_refused_token)::text, '')"
					 " FROM fence.stats WHERE resource = $1::text",
					 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
	{
		*res = r;
		return 0;
	}
	state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	if (state != NULL && (strcmp(state, FENCE_SQLSTATE_NOT_READY) == 0 ||	/* not preloaded */
						  strcmp(state, FENCE_SQLSTATE_PRIVILEGE) == 0 ||	/* not pg_monitor */
						  strcmp(state, FENCE_SQLSTATE_NO_TABLE) == 0))	/* no fence.stats */
	{
		const char *hint = PQresultErrorField(r, PG_DIAG_MESSAGE_HINT);

		note("warning: no counts from PostgreSQL: %s%s%s%s",
			 PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY),
			 hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
		PQclear(r);
		return 0;
	}
	PQclear(r);
	return -1;
}

/*
 * Which edition of fence the database runs, fence.edition(): "c" for the
 * extension, "sql" for the SQL edition of hosted PostgreSQL.  An extension
 * older than the function (42883) is the C one.  Returns 0, or -1 on any
 * other error, which is then in "pg".
 */
static int
show_edition(PGconn *pg, char *edition, size_t size)
{
	PGresult   *r = PQexec(pg, "SELECT fence.edition()");
	const char *state;
	int			rc = 0;

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		snprintf(edition, size, "%s", PQgetvalue(r, 0, 0));
	else if ((state = PQresultErrorField(r, PG_DIAG_SQLSTATE)) != NULL &&
			 strcmp(state, FENCE_SQLSTATE_NO_FUNCTION) == 0)
		snprintf(edition, size, "c");
	else
		rc = -1;
	PQclear(r);
	return rc;
}

/*
 * Whether the server is a standby (pg_is_in_recovery()): 1 or 0, or -1 on
 * an error, which is then in "pg".  A standby's marks are the primary's as
 * replayed so far; after a failover to an asynchronous standby they may be
 * behind the tokens handed out (fence resync).
 */
static int
show_standby(PGconn *pg)
{
	PGresult   *r = PQexec(pg, "SELECT pg_catalog.pg_is_in_recovery()");
	int			rc = -1;

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		rc = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	PQclear(r);
	return rc;
}

/*
 * The live waiters, first first: FENCE_WAITERS=N, then FENCE_WAITER_1...
 * (one variable each: an owner id of another client may hold anything),
 * or "waiters": [...].
 */
static void
print_waiters(const options *o, char **waiters, size_t n)
{
	char		name[48],
				count[24];
	size_t		i;

	if (o->json)
	{
		printf(",\"waiters\":[");
		for (i = 0; i < n; i++)
		{
			if (i > 0)
				putchar(',');
			json_string(stdout, waiters[i]);
		}
		putchar(']');
		return;
	}
	snprintf(count, sizeof(count), "%zu", n);
	shell_assign("FENCE_WAITERS", count);
	for (i = 0; i < n; i++)
	{
		snprintf(name, sizeof(name), "FENCE_WAITER_%zu", i + 1);
		shell_assign(name, waiters[i]);
	}
}

int
cmd_show(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	fence_info	info;
	long long	mark = -1;
	char		edition[16] = "";
	PGresult   *stats = NULL;
	char	  **waiters = NULL;
	size_t		nwaiters = 0;
	int			code = 0,
				standby = -1,
				i;

	if (argc != 1)
		return usage_error("show needs exactly one argument: RESOURCE%s", "");
	if (fence_show(ctx, argv[0], &info) != FENCE_OK)
		return fail(ctx);
	if (fence_waiters(ctx, argv[0], &waiters, &nwaiters) != FENCE_OK)
	{
		fence_info_free(&info);
		return fail(ctx);
	}
	if (o->pg != NULL)
	{
		PGconn	   *pg = pg_connect(o->pg, &code);

		if (pg == NULL)
			goto done;
		if (fence_pg_mark(ctx, pg, argv[0], &mark) != FENCE_OK)
		{
			code = pg_fail(ctx, pg);
			PQfinish(pg);
			goto done;
		}
		if (show_edition(pg, edition, sizeof(edition)) != 0)
		{
			fprintf(stderr, "%s: could not read fence.edition(): %s", progname, PQerrorMessage(pg));
			code = PQstatus(pg) == CONNECTION_OK ? EXIT_FAIL : EXIT_UNAVAIL;
			PQfinish(pg);
			goto done;
		}
		if ((standby = show_standby(pg)) < 0)
		{
			fprintf(stderr, "%s: could not ask whether PostgreSQL is a standby: %s", progname, PQerrorMessage(pg));
			code = PQstatus(pg) == CONNECTION_OK ? EXIT_FAIL : EXIT_UNAVAIL;
			PQfinish(pg);
			goto done;
		}
		if (standby)
			note("warning: PostgreSQL is a standby: its mark is the primary's as replayed so far (after a failover to an asynchronous standby, run fence resync against the promoted server)");
		/* the SQL edition keeps no counts: no warning that says so each time */
		if (strcmp(edition, "sql") != 0 && show_stats(pg, argv[0], &stats) != 0)
		{
			fprintf(stderr, "%s: could not read fence.stats: %s", progname, PQerrorMessage(pg));
			code = PQstatus(pg) == CONNECTION_OK ? EXIT_FAIL : EXIT_UNAVAIL;
			PQfinish(pg);
			goto done;
		}
		PQfinish(pg);
	}
	if (o->json)
	{
		printf("{\"resource\":");
		json_string(stdout, argv[0]);
		printf(",\"owner\":");
		if (info.owner)
			json_string(stdout, info.owner);
		else
			printf("null");
		/* a free lease has no TTL: null, as its owner (never PTTL's -2) */
		if (info.owner)
			printf(",\"ttl_ms\":%lld", info.pttl_ms);
		else
			printf(",\"ttl_ms\":null");
		print_waiters(o, waiters, nwaiters);
		printf(",\"token\":%lld", info.token);
		/* 0: PostgreSQL has no mark (never announced, or reset) */
		if (mark > 0)
			printf(",\"pg_token\":%lld", mark);
		else if (mark == 0)
			printf(",\"pg_token\":null");
		if (stats != NULL)
		{
			const char *when = PQgetvalue(stats, 0, 4);
			const char *refused = PQgetvalue(stats, 0, 5);

			printf(",\"pg_stats\":{\"accepted\":%s,\"stale\":%s,\"missing\":%s,\"invalid\":%s,\"last_refusal\":",
				   PQgetvalue(stats, 0, 0), PQgetvalue(stats, 0, 1),
				   PQgetvalue(stats, 0, 2), PQgetvalue(stats, 0, 3));
			if (*when)
				json_string(stdout, when);
			else
				printf("null");
			printf(",\"last_refused_token\":%s}", *refused ? refused : "null");
		}
		else if (o->pg != NULL)
			printf(",\"pg_stats\":null");
		if (*edition)
		{
			printf(",\"pg_edition\":");
			json_string(stdout, edition);
		}
		if (standby >= 0)
			printf(",\"pg_standby\":%s", standby ? "true" : "false");
		printf("}\n");
	}
	else
	{
		char		buf[24];

		shell_assign("FENCE_RESOURCE", argv[0]);
		shell_assign("FENCE_OWNER", info.owner ? info.owner : "");
		snprintf(buf, sizeof(buf), "%lld", info.owner ? info.pttl_ms : 0);
		shell_assign("FENCE_TTL_MS", buf);
		print_waiters(o, waiters, nwaiters);
		snprintf(buf, sizeof(buf), "%lld", info.token);
		shell_assign("FENCE_TOKEN", buf);
		if (mark >= 0)
		{
			snprintf(buf, sizeof(buf), "%lld", mark);
			shell_assign("FENCE_PG_TOKEN", mark > 0 ? buf : "");
		}
		if (*edition)
			shell_assign("FENCE_PG_EDITION", edition);
		if (standby >= 0)
			shell_assign("FENCE_PG_STANDBY", standby ? "yes" : "no");
		for (i = 0; stats != NULL && i < SHOW_STATS_FIELDS; i++)
		{
			char		name[48];

			snprintf(name, sizeof(name), "FENCE_PG_%s", show_stats_names[i]);
			shell_assign(name, PQgetvalue(stats, 0, i));
		}
	}
done:
	if (stats != NULL)			/* libpq is opened only with --pg */
		PQclear(stats);
	fence_waiters_free(waiters, nwaiters);
	fence_info_free(&info);
	return code;
}
