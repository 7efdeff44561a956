/*
 * client/examples/example.c
 *	  A worker that takes a lease, announces its token to PostgreSQL, keeps
 *	  the lease alive with the heartbeat, and writes through fence_exec.
 *
 *	  example [REDIS_URL [CONNINFO [RESOURCE]]]
 *
 * Every call is checked: this is the shape real code should have.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "fence.h"

static volatile sig_atomic_t lost;

/* Runs on the heartbeat thread: only set a flag. */
static void
on_lost(fence_lease *lease, void *arg)
{
	(void) lease;
	(void) arg;
	lost = 1;
}

int
main(int argc, char **argv)
{
	const char *url = argc > 1 ? argv[1] : getenv("FENCE_REDIS_URL");
	const char *conninfo = argc > 2 ? argv[2] : "";
	const char *resource = argc > 3 ? argv[3] : "example";
	fence_ctx  *ctx;
	fence_lease *lease;
	PGconn	   *pg;
	PGresult   *res;
	const char *params[1] = {resource};
	int			status = 1;

	ctx = fence_connect(url);
	if (ctx == NULL)
	{
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	if (ctx->err)
	{
		fprintf(stderr, "connect: %s (%s)\n", ctx->errstr, fence_strerror(ctx->err));
		fence_free(ctx);
		return 1;
	}

	pg = PQconnectdb(conninfo);
	if (pg == NULL || PQstatus(pg) != CONNECTION_OK)
	{
		fprintf(stderr, "PostgreSQL: %s", pg ? PQerrorMessage(pg) : "out of memory\n");
		PQfinish(pg);
		fence_free(ctx);
		return 1;
	}

	/* Wait up to 5 s for a 10 s lease. */
	lease = fence_acquire_wait(ctx, resource, 10000, 5000);
	if (lease == NULL)
	{
		fprintf(stderr, "acquire: %s\n", ctx->errstr);
		goto out;
	}
	printf("token %lld, owner %s\n", fence_lease_token(lease), fence_lease_owner(lease));

	/* Before reading anything: from now on older tokens are refused. */
	if (fence_announce(ctx, lease, pg) != FENCE_OK)
	{
		fprintf(stderr, "announce: %s\n", ctx->errstr);
		goto release;
	}
	if (fence_heartbeat_start(ctx, lease, on_lost, NULL) != FENCE_OK)
	{
		fprintf(stderr, "heartbeat: %s\n", ctx->errstr);
		goto release;
	}

	res = fence_exec(ctx, lease, pg, "SELECT token FROM fence.fences WHERE resource = $1",
					 1, params);
	if (res == NULL)
	{
		if (ctx->err == FENCE_ERR_STALE)
			fprintf(stderr, "fenced off: a newer holder exists: %s\n", ctx->errstr);
		else
			fprintf(stderr, "exec: %s\n", ctx->errstr);
		goto release;
	}
	if (PQntuples(res) == 1)
		printf("PostgreSQL's mark for %s: %s\n", resource, PQgetvalue(res, 0, 0));
	PQclear(res);
	if (lost)
		fprintf(stderr, "lease lost during the work\n");
	else
		status = 0;

release:
	if (fence_release(ctx, lease) != FENCE_OK)
	{
		fprintf(stderr, "release: %s\n", ctx->errstr);
		status = 1;
	}
	fence_lease_free(lease);
out:
	PQfinish(pg);
	fence_free(ctx);
	return status;
}
