/*
 * bench/fence_cycles.c
 *	  Scenario 4: acquire + release cycles per second on Redis through
 *	  libfence, each thread on its own connection and its own resource.
 *
 *	  fence_cycles [-t THREADS] [-s SECONDS] [-c | -p | -l | -L]
 *	  (Redis: $FENCE_REDIS_URL)
 *
 *	  Prints one line: cycles_per_s=N acquire_p50_us=N acquire_p99_us=N.
 *	  A cycle is fence_acquire (one EVALSHA: SET NX PX + INCR + GET) and
 *	  fence_release (one EVALSHA: GET + DEL): two round trips.  With -c,
 *	  each cycle also connects (fence_connect, with its TLS handshake for a
 *	  rediss:// URL) and disconnects, as every run of the fence command
 *	  does; the acquire latency still counts the acquire alone.  With -p,
 *	  a cycle is the floor of the same two round trips in the same client
 *	  stack: two PINGs on a hiredis connection (a redis://HOST:PORT URL),
 *	  the "acquire" latency that of the first.  With -l or -L, a cycle is
 *	  a worker loop's step (scenario 20): give back the lease held and take
 *	  the next, each thread alternating between two resources of its own;
 *	  -l with fence_release then fence_acquire (two round trips), -L with
 *	  fence_release_acquire (one write: one round trip on a single node);
 *	  the latency is the step's.
 */
#include <getopt.h>
#include <pthread.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "bench.h"
#include "fence.h"

static const char *redis_url;
static int	seconds = 5;
static int	connect_each;		/* -c: a new context per cycle */
static int	floor_only;			/* -p: two PINGs per cycle */
static int	loop_mode;			/* -l: release, acquire; -L: in one call */

typedef struct worker
{
	pthread_t	thread;
	int			id;
	long long	cycles;
	int			failed;
	bench_lat	acquire;
} worker;

/* A connected context, or NULL (the worker failed). */
static fence_ctx *
connect_worker(worker *w)
{
	fence_ctx  *ctx = fence_connect(redis_url);

	if (ctx == NULL || ctx->err)
	{
		fprintf(stderr, "worker %d: %s\n", w->id, ctx ? ctx->errstr : "out of memory");
		fence_free(ctx);
		w->failed = 1;
		return NULL;
	}
	return ctx;
}

/* A PING on "c" answered with PONG. */
static int
ping(redisContext *c)
{
	redisReply *r = redisCommand(c, "PING");
	int			ok = r != NULL && r->type == REDIS_REPLY_STATUS;

	freeReplyObject(r);
	return ok;
}

/* -p: two PINGs per cycle, the floor of an acquire and a release. */
static void *
run_floor(void *arg)
{
	worker	   *w = arg;
	const char *hp = strstr(redis_url, "://");
	char		host[256];
	const char *colon;
	redisContext *c;
	int64_t		end;

	hp = hp ? hp + 3 : redis_url;
	colon = strrchr(hp, ':');
	snprintf(host, sizeof(host), "%.*s", colon ? (int) (colon - hp) : (int) strlen(hp), hp);
	c = redisConnect(host, colon ? atoi(colon + 1) : 6379);
	if (c == NULL || c->err)
	{
		fprintf(stderr, "worker %d: %s\n", w->id, c ? c->errstr : "out of memory");
		w->failed = 1;
		redisFree(c);
		return NULL;
	}
	end = bench_now_ns() + (int64_t) seconds * 1000000000;
	while (bench_now_ns() < end)
	{
		int64_t		t0 = bench_now_ns();

		if (!ping(c))
		{
			w->failed = 1;
			break;
		}
		bench_lat_add(&w->acquire, bench_now_ns() - t0);
		if (!ping(c))
		{
			w->failed = 1;
			break;
		}
		w->cycles++;
	}
	redisFree(c);
	return NULL;
}

/* -l, -L: a worker loop, from one resource to the next. */
static void *
run_loop(void *arg)
{
	worker	   *w = arg;
	fence_ctx  *ctx = connect_worker(w);
	char		resource[2][64];
	fence_lease *l = NULL;
	int64_t		end;
	int			k = 0;

	if (ctx == NULL)
		return NULL;
	snprintf(resource[0], sizeof(resource[0]), "bench:loop:%d:a", w->id);
	snprintf(resource[1], sizeof(resource[1]), "bench:loop:%d:b", w->id);
	if ((l = fence_acquire(ctx, resource[1], 10000)) == NULL)
	{
		fprintf(stderr, "worker %d: acquire: %s\n", w->id, ctx->errstr);
		w->failed = 1;
		fence_free(ctx);
		return NULL;
	}
	end = bench_now_ns() + (int64_t) seconds * 1000000000;
	while (bench_now_ns() < end)
	{
		int64_t		t0 = bench_now_ns();
		fence_lease *next;
		int			released = FENCE_OK;

		if (loop_mode == 'L')
			next = fence_release_acquire(ctx, l, resource[k], 10000, 0, &released);
		else
		{
			released = fence_release(ctx, l) == FENCE_OK ? FENCE_OK : ctx->err;
			next = released == FENCE_OK ? fence_acquire(ctx, resource[k], 10000) : NULL;
		}
		if (next == NULL || released != FENCE_OK)
		{
			fprintf(stderr, "worker %d: step: %s (release: %s)\n", w->id,
					ctx->errstr, fence_strerror(released));
			w->failed = 1;
			fence_lease_free(next);
			break;
		}
		bench_lat_add(&w->acquire, bench_now_ns() - t0);
		fence_lease_free(l);
		l = next;
		k = 1 - k;
		w->cycles++;
	}
	if (l != NULL && !w->failed)
		(void) fence_release(ctx, l);
	fence_lease_free(l);
	fence_free(ctx);
	return NULL;
}

static void *
run(void *arg)
{
	worker	   *w = arg;
	fence_ctx  *ctx = connect_worker(w);
	char		resource[64];
	int64_t		end;

	if (ctx == NULL)
		return NULL;
	snprintf(resource, sizeof(resource), "bench:cycles:%d", w->id);
	end = bench_now_ns() + (int64_t) seconds * 1000000000;
	while (bench_now_ns() < end)
	{
		int64_t		t0;
		fence_lease *l;

		if (connect_each && ctx == NULL && (ctx = connect_worker(w)) == NULL)
			break;
		t0 = bench_now_ns();
		l = fence_acquire(ctx, resource, 10000);

		if (l == NULL)
		{
			fprintf(stderr, "worker %d: acquire: %s\n", w->id, ctx->errstr);
			w->failed = 1;
			break;
		}
		bench_lat_add(&w->acquire, bench_now_ns() - t0);
		if (fence_release(ctx, l) != FENCE_OK)
		{
			fprintf(stderr, "worker %d: release: %s\n", w->id, ctx->errstr);
			w->failed = 1;
			fence_lease_free(l);
			break;
		}
		fence_lease_free(l);
		w->cycles++;
		if (connect_each)
		{
			fence_free(ctx);
			ctx = NULL;
		}
	}
	fence_free(ctx);
	return NULL;
}

int
main(int argc, char **argv)
{
	int			nthreads = 1,
				i,
				c,
				failed = 0;
	long long	cycles = 0;
	worker	   *ws;
	bench_lat	all = {0};
	int64_t		t0,
				t1;

	while ((c = getopt(argc, argv, "t:s:cplL")) != -1)
	{
		switch (c)
		{
			case 't':
				nthreads = atoi(optarg);
				break;
			case 's':
				seconds = atoi(optarg);
				break;
			case 'c':
				connect_each = 1;
				break;
			case 'p':
				floor_only = 1;
				break;
			case 'l':
			case 'L':
				loop_mode = c;
				break;
			default:
				fprintf(stderr, "usage: fence_cycles [-t THREADS] [-s SECONDS] [-c | -p | -l | -L]\n");
				return 64;
		}
	}
	redis_url = getenv("FENCE_REDIS_URL");
	if (redis_url == NULL || nthreads < 1 || seconds < 1)
	{
		fprintf(stderr, "fence_cycles: set FENCE_REDIS_URL; THREADS and SECONDS must be positive\n");
		return 64;
	}

	ws = calloc(nthreads, sizeof(worker));
	t0 = bench_now_ns();
	for (i = 0; i < nthreads; i++)
	{
		ws[i].id = i;
		pthread_create(&ws[i].thread, NULL,
					   floor_only ? run_floor : loop_mode ? run_loop : run, &ws[i]);
	}
	for (i = 0; i < nthreads; i++)
	{
		pthread_join(ws[i].thread, NULL);
		cycles += ws[i].cycles;
		failed |= ws[i].failed;
		bench_lat_merge(&all, &ws[i].acquire);
	}
	t1 = bench_now_ns();
	if (failed)
		return 1;
	printf("cycles_per_s=%.1f acquire_p50_us=%.1f acquire_p99_us=%.1f\n",
		   (double) cycles * 1e9 / (double) (t1 - t0),
		   bench_lat_pct_us(&all, 50), bench_lat_pct_us(&all, 99));
	return 0;
}
