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
#include "bench.h"

static const char *redis_url;
static int	nthreads = 1;
static int	seconds = 5;
static int	connect_each;		/* -c: a new context per cycle */
static int	floor_only;			/* -p: two PINGs per cycle */
static int	loop_two;			/* -l: release, then acquire */
static int	loop_one;			/* -L: both in one call */

typedef struct worker
{
	bench_worker b;
	long long	cycles;
	bench_lat	acquire;
} worker;

/* -p: two PINGs per cycle, the floor of an acquire and a release. */
static void *
run_floor(void *arg)
{
	worker	   *w = arg;
	redisContext *c = bench_raw_redis(&w->b, redis_url);
	int64_t		end;

	if (c == NULL)
		return NULL;
	end = bench_deadline(seconds);
	while (bench_now_ns() < end)
	{
		int64_t		t0 = bench_now_ns();

		if (!bench_ping(c))
		{
			w->b.failed = 1;
			break;
		}
		bench_lat_add(&w->acquire, bench_now_ns() - t0);
		if (!bench_ping(c))
		{
			w->b.failed = 1;
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
	fence_ctx  *ctx = bench_connect(&w->b, redis_url);
	char		resource[2][64];
	fence_lease *l = NULL;
	int64_t		end;
	int			k = 0;

	if (ctx == NULL)
		return NULL;
	snprintf(resource[0], sizeof(resource[0]), "bench:loop:%d:a", w->b.id);
	snprintf(resource[1], sizeof(resource[1]), "bench:loop:%d:b", w->b.id);
	if ((l = fence_acquire(ctx, resource[1], 10000)) == NULL)
	{
		fprintf(stderr, "worker %d: acquire: %s\n", w->b.id, ctx->errstr);
		w->b.failed = 1;
		fence_free(ctx);
		return NULL;
	}
	end = bench_deadline(seconds);
	while (bench_now_ns() < end)
	{
		int64_t		t0 = bench_now_ns();
		fence_lease *next;
		int			released = FENCE_OK;

		if (loop_one)
			next = fence_release_acquire(ctx, l, resource[k], 10000, 0, &released);
		else
		{
			released = fence_release(ctx, l) == FENCE_OK ? FENCE_OK : ctx->err;
			next = released == FENCE_OK ? fence_acquire(ctx, resource[k], 10000) : NULL;
		}
		if (next == NULL || released != FENCE_OK)
		{
			fprintf(stderr, "worker %d: step: %s (release: %s)\n", w->b.id,
					ctx->errstr, fence_strerror(released));
			w->b.failed = 1;
			fence_lease_free(next);
			break;
		}
		bench_lat_add(&w->acquire, bench_now_ns() - t0);
		fence_lease_free(l);
		l = next;
		k = 1 - k;
		w->cycles++;
	}
	if (l != NULL && !w->b.failed)
		(void) fence_release(ctx, l);
	fence_lease_free(l);
	fence_free(ctx);
	return NULL;
}

static void *
run(void *arg)
{
	worker	   *w = arg;
	fence_ctx  *ctx = bench_connect(&w->b, redis_url);
	char		resource[64];
	int64_t		end;

	if (ctx == NULL)
		return NULL;
	snprintf(resource, sizeof(resource), "bench:cycles:%d", w->b.id);
	end = bench_deadline(seconds);
	while (bench_now_ns() < end)
	{
		int64_t		t0;
		fence_lease *l;

		if (connect_each && ctx == NULL && (ctx = bench_connect(&w->b, redis_url)) == NULL)
			break;
		t0 = bench_now_ns();
		l = fence_acquire(ctx, resource, 10000);

		if (l == NULL)
		{
			fprintf(stderr, "worker %d: acquire: %s\n", w->b.id, ctx->errstr);
			w->b.failed = 1;
			break;
		}
		bench_lat_add(&w->acquire, bench_now_ns() - t0);
		if (bench_release(&w->b, ctx, l) != 0)
			break;
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
	const bench_opt opts[] = {
		BENCH_INT('t', &nthreads), BENCH_INT('s', &seconds),
		BENCH_FLAG('c', &connect_each), BENCH_FLAG('p', &floor_only),
		BENCH_FLAG('l', &loop_two), BENCH_FLAG('L', &loop_one), BENCH_END
	};
	int			i;
	long long	cycles = 0;
	worker	   *ws;
	bench_lat	all = {0};
	int64_t		ns;

	if (bench_getopt(argc, argv, opts, "usage: fence_cycles [-t THREADS] [-s SECONDS] [-c | -p | -l | -L]") != 0)
		return 64;
	redis_url = bench_redis_url("fence_cycles", nthreads >= 1 && seconds >= 1,
								"THREADS and SECONDS must be positive");
	if (redis_url == NULL)
		return 64;

	ws = calloc(nthreads, sizeof(worker));
	if (bench_run(ws, sizeof(worker), nthreads,
				  floor_only ? run_floor : loop_one || loop_two ? run_loop : run, &ns))
		return 1;
	for (i = 0; i < nthreads; i++)
	{
		cycles += ws[i].cycles;
		bench_lat_merge(&all, &ws[i].acquire);
	}
	printf("cycles_per_s=%.1f acquire_p50_us=%.1f acquire_p99_us=%.1f\n",
		   (double) cycles * 1e9 / (double) ns,
		   bench_lat_pct_us(&all, 50), bench_lat_pct_us(&all, 99));
	return 0;
}
