/*
 * bench/fence_contend.c
 *	  Scenario 6: threads contending for one lease, Redis only.  Each thread
 *	  loops, on its own connection:
 *
 *		fence_acquire_wait -> [hold] -> fence_release
 *
 *	  and goes straight back to acquire, as a worker draining a queue does:
 *	  there are always THREADS - 1 waiters.
 *
 *	  fence_contend [-t THREADS] [-s SECONDS] [-H HOLD_MS]   (Redis: $FENCE_REDIS_URL)
 *
 *	  Prints one line:
 *
 *		cs_per_s=N handoffs=N handoff_p50_us=N handoff_p99_us=N busy=F
 *		acquire_p50_us=N acquire_p99_us=N min_share=F timeouts=N
 *
 *	  cs_per_s: critical sections per second, all threads together.
 *	  handoff: from a holder's call to fence_release to the return of the
 *	  next holder's fence_acquire_wait, when that is another thread.
 *	  busy: the fraction of the run during which some thread held the lease
 *	  (from its acquire's return to its call to release).
 *	  acquire: each fence_acquire_wait call, call to return; with one thread
 *	  nobody else wants the lease: the uncontended latency.
 *	  min_share: the fewest critical sections any thread got, over the fair
 *	  share (all critical sections / THREADS).
 */
#include <getopt.h>
#include <pthread.h>
#include <string.h>

#include "bench.h"
#include "fence.h"

#define RESOURCE "bench:contend"
#define LEASE_TTL_MS 5000
#define ACQUIRE_WAIT_MS 10000

static const char *redis_url;
static int	seconds = 5;
static int	hold_ms = 2;

/* The last release of the resource, for the handoff latency. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t released_ns;		/* 0: no release since the last acquire */
static int	last_holder = -1;
static int64_t busy_ns;			/* sum of the times the lease was held */

typedef struct worker
{
	pthread_t	thread;
	int			id;
	long long	sections;
	long long	timeouts;
	int			failed;
	bench_lat	handoff;
	bench_lat	acquire;
} worker;

static void *
run(void *arg)
{
	worker	   *w = arg;
	fence_ctx  *ctx = fence_connect(redis_url);
	int64_t		end;

	if (ctx == NULL || ctx->err)
	{
		fprintf(stderr, "worker %d: %s\n", w->id, ctx ? ctx->errstr : "out of memory");
		w->failed = 1;
		fence_free(ctx);
		return NULL;
	}
	end = bench_now_ns() + (int64_t) seconds * 1000000000;
	while (bench_now_ns() < end)
	{
		int64_t		t0 = bench_now_ns(),
					got,
					held;
		fence_lease *l = fence_acquire_wait(ctx, RESOURCE, LEASE_TTL_MS, ACQUIRE_WAIT_MS);

		if (l == NULL)
		{
			if (ctx->err == FENCE_ERR_TIMEOUT)
			{
				w->timeouts++;
				continue;
			}
			fprintf(stderr, "worker %d: acquire: %s\n", w->id, ctx->errstr);
			w->failed = 1;
			break;
		}
		got = bench_now_ns();
		bench_lat_add(&w->acquire, got - t0);
		pthread_mutex_lock(&mu);
		if (released_ns != 0 && last_holder != w->id)
			bench_lat_add(&w->handoff, got - released_ns);
		released_ns = 0;
		pthread_mutex_unlock(&mu);

		if (hold_ms > 0)
			bench_sleep_ms(hold_ms);

		/* stamp the release before it is sent: nobody can acquire earlier */
		pthread_mutex_lock(&mu);
		released_ns = bench_now_ns();
		held = released_ns - got;
		busy_ns += held;
		last_holder = w->id;
		pthread_mutex_unlock(&mu);
		if (fence_release(ctx, l) != FENCE_OK)
		{
			fprintf(stderr, "worker %d: release: %s\n", w->id, ctx->errstr);
			fence_lease_free(l);
			w->failed = 1;
			break;
		}
		fence_lease_free(l);
		w->sections++;
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
	long long	sections = 0,
				timeouts = 0,
				fewest = -1;
	worker	   *ws;
	bench_lat	handoffs = {0},
				acquires = {0};
	int64_t		t0,
				t1;

	while ((c = getopt(argc, argv, "t:s:H:")) != -1)
	{
		switch (c)
		{
			case 't':
				nthreads = atoi(optarg);
				break;
			case 's':
				seconds = atoi(optarg);
				break;
			case 'H':
				hold_ms = atoi(optarg);
				break;
			default:
				fprintf(stderr, "usage: fence_contend [-t THREADS] [-s SECONDS] [-H HOLD_MS]\n");
				return 64;
		}
	}
	redis_url = getenv("FENCE_REDIS_URL");
	if (redis_url == NULL || nthreads < 1 || seconds < 1 || hold_ms < 0)
	{
		fprintf(stderr, "fence_contend: set FENCE_REDIS_URL; THREADS and SECONDS must be positive\n");
		return 64;
	}

	ws = calloc(nthreads, sizeof(worker));
	if (ws == NULL)
		return 1;
	t0 = bench_now_ns();
	for (i = 0; i < nthreads; i++)
	{
		ws[i].id = i;
		pthread_create(&ws[i].thread, NULL, run, &ws[i]);
	}
	for (i = 0; i < nthreads; i++)
	{
		pthread_join(ws[i].thread, NULL);
		sections += ws[i].sections;
		timeouts += ws[i].timeouts;
		failed |= ws[i].failed;
		if (fewest < 0 || ws[i].sections < fewest)
			fewest = ws[i].sections;
		bench_lat_merge(&handoffs, &ws[i].handoff);
		bench_lat_merge(&acquires, &ws[i].acquire);
	}
	t1 = bench_now_ns();
	if (failed)
		return 1;
	printf("cs_per_s=%.1f handoffs=%zu handoff_p50_us=%.1f handoff_p99_us=%.1f busy=%.4f "
		   "acquire_p50_us=%.1f acquire_p99_us=%.1f min_share=%.4f timeouts=%lld\n",
		   (double) sections * 1e9 / (double) (t1 - t0), handoffs.n,
		   bench_lat_pct_us(&handoffs, 50), bench_lat_pct_us(&handoffs, 99),
		   (double) busy_ns / (double) (t1 - t0),
		   bench_lat_pct_us(&acquires, 50), bench_lat_pct_us(&acquires, 99),
		   sections > 0 ? (double) fewest * nthreads / (double) sections : 0.0,
		   timeouts);
	return 0;
}
