/*
 * client/tools/cycles.c
 *	  Acquire+release cycles per second on one connection, against SET
 *	  requests per second on one connection to the same server.
 *
 *	  cycles [N [REDIS_URL]]
 *
 * Each cycle is fence_acquire (one EVALSHA) and fence_release (one
 * EVALSHA): two round trips, the least for a lease with a token.  The SET
 * baseline (what "redis-benchmark -c 1 -t set" measures: one round trip per
 * request) runs interleaved with the cycles, in chunks, so that load from
 * other processes falls on both alike.  Prints three lines:
 *	 cycles_per_sec N / set_per_sec N / ratio R
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "fence.h"
#include "fence_int.h"		/* fence_parse_url: the SET baseline's host */

#define CHUNK 500

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
cycles(fence_ctx *ctx, const char *resource, long n)
{
	long		i;

	for (i = 0; i < n; i++)
	{
		fence_lease *l = fence_acquire(ctx, resource, 10000);

		if (l == NULL || fence_release(ctx, l) != FENCE_OK)
		{
			fprintf(stderr, "cycles: %s\n", ctx->errstr);
			fence_lease_free(l);
			return -1;
		}
		fence_lease_free(l);
	}
	return 0;
}

static int
sets(redisContext *rc, const char *key, long n)
{
	long		i;

	for (i = 0; i < n; i++)
	{
		redisReply *r = redisCommand(rc, "SET %s xxx", key);

		if (r == NULL || r->type != REDIS_REPLY_STATUS)
		{
			fprintf(stderr, "cycles: SET failed: %s\n", r ? r->str : rc->errstr);
			if (r)
				freeReplyObject(r);
			return -1;
		}
		freeReplyObject(r);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	long		n = argc > 1 ? atol(argv[1]) : 20000;
	const char *url = argc > 2 ? argv[2] : getenv("FENCE_REDIS_URL");
	fence_ctx  *ctx = fence_connect(url);
	fence_url	u;
	redisContext *rc;
	char		resource[64],
				key[64],
				err[256] = "";
	double		t_cyc = 0,
				t_set = 0,
				t;
	long		done;

	if (ctx == NULL || ctx->err)
	{
		fprintf(stderr, "cycles: %s\n", ctx ? ctx->errstr : "out of memory");
		return 1;
	}
	if (n <= 0)
	{
		fprintf(stderr, "cycles: N must be positive\n");
		return 1;
	}
	/* the SET baseline is plain hiredis: no Unix socket, no TLS */
	if (fence_parse_url(url ? url : FENCE_DEFAULT_URL, &u, err, sizeof(err)) != FENCE_OK ||
		u.is_unix || u.tls.enabled)
	{
		fprintf(stderr, "cycles: needs a redis:// URL%s%s\n", err[0] ? ": " : "", err);
		return 1;
	}
	rc = redisConnect(u.host, u.port);
	if (rc == NULL || rc->err)
	{
		fprintf(stderr, "cycles: cannot connect for the SET baseline\n");
		return 1;
	}
	if (u.password)
		freeReplyObject(u.user ? redisCommand(rc, "AUTH %s %s", u.user, u.password)
						: redisCommand(rc, "AUTH %s", u.password));
	snprintf(resource, sizeof(resource), "bench-cycles-%d", (int) getpid());
	snprintf(key, sizeof(key), "bench-set-%d", (int) getpid());

	/* warm up both (SCRIPT LOAD happens on first use) */
	if (cycles(ctx, resource, 200) != 0 || sets(rc, key, 200) != 0)
		return 1;
	for (done = 0; done < n; done += CHUNK)
	{
		long		k = n - done < CHUNK ? n - done : CHUNK;

		t = now();
		if (cycles(ctx, resource, k) != 0)
			return 1;
		t_cyc += now() - t;
		t = now();
		if (sets(rc, key, k) != 0)
			return 1;
		t_set += now() - t;
	}
	freeReplyObject(redisCommand(rc, "DEL %s", key));
	printf("cycles_per_sec %.0f\nset_per_sec %.0f\nratio %.3f\n",
		   n / t_cyc, n / t_set, t_set / t_cyc);
	redisFree(rc);
	fence_url_free(&u);
	fence_free(ctx);
	return 0;
}
