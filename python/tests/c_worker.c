/*
 * python/tests/c_worker.c
 *	  The C side of test_faults.py's mixed test: N times, take the lease on
 *	  RESOURCE, announce, read the counter, write it back one higher
 *	  through fence_exec, log the token, commit, release.
 *
 *	  c_worker RESOURCE N     (Redis: $FENCE_REDIS_URL; PostgreSQL: PG*)
 */
#include <stdio.h>
#include <stdlib.h>

#include "fence.h"

static int
ok(PGresult *res, ExecStatusType want, const char *what, PGconn *pg)
{
	int			good = res != NULL && PQresultStatus(res) == want;

	if (!good)
		fprintf(stderr, "c_worker: %s: %s", what, PQerrorMessage(pg));
	PQclear(res);
	return good;
}

int
main(int argc, char **argv)
{
	fence_ctx  *ctx;
	PGconn	   *pg;
	int			i,
				n;

	if (argc != 3)
		return 64;
	n = atoi(argv[2]);
	ctx = fence_connect(getenv("FENCE_REDIS_URL"));
	if (ctx == NULL || ctx->err)
		return 69;
	pg = PQconnectdb("");
	if (PQstatus(pg) != CONNECTION_OK)
		return 69;
	for (i = 0; i < n; i++)
	{
		fence_lease *lease = fence_acquire_wait(ctx, argv[1], 5000, 60000);
		PGresult   *res;
		char		next[32],
					token[32];
		const char *params[1];
		const char *logp[1];

		if (lease == NULL || fence_announce(ctx, lease, pg) != FENCE_OK)
		{
			fprintf(stderr, "c_worker: %s\n", ctx->errstr);
			return 1;
		}
		if (!ok(PQexec(pg, "BEGIN"), PGRES_COMMAND_OK, "begin", pg))
			return 1;
		res = PQexec(pg, "SELECT n FROM mix_counter");
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
			return 1;
		snprintf(next, sizeof(next), "%d", atoi(PQgetvalue(res, 0, 0)) + 1);
		PQclear(res);
		params[0] = next;
		res = fence_exec(ctx, lease, pg, "UPDATE mix_counter SET n = $1", 1, params);
		if (res == NULL)
		{
			fprintf(stderr, "c_worker: exec: %s\n", ctx->errstr);
			return 1;
		}
		PQclear(res);
		snprintf(token, sizeof(token), "%lld", fence_lease_token(lease));
		logp[0] = token;
		if (!ok(PQexecParams(pg, "INSERT INTO mix_log (who, token) VALUES ('c', $1)",
							 1, NULL, logp, NULL, NULL, 0), PGRES_COMMAND_OK, "log", pg) ||
			!ok(PQexec(pg, "COMMIT"), PGRES_COMMAND_OK, "commit", pg))
			return 1;
		if (fence_release(ctx, lease) != FENCE_OK)
		{
			fprintf(stderr, "c_worker: release: %s\n", ctx->errstr);
			return 1;
		}
		fence_lease_free(lease);
	}
	PQfinish(pg);
	fence_free(ctx);
	return 0;
}
