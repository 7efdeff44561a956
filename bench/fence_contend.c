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
 *		acquire_p50_us=N acquire_p99_us=N min_share=F timeouts=N release_p50_us=N
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
 *	  release: each fence_release call, call to return (the releaser's own
 *	  round trip, which hands the lease over on the way).
 */
#include <string.h>

#include "bench.h"

#define RESOURCE "bench:contend"
#define LEASE_TTL_MS 5000
#define ACQUIRE_WAIT_MS 10000

static const char *redis_url;
static int	nthreads = 1;
static int	seconds = 5;
static int	hold_ms = 2;

/* The last release of the resource, for the handoff latency. */
static bench_handoff last = {PTHREAD_MUTEX_INITIALIZER, 0, -1};
static int64_t busy_ns;			/* sum of the times the lease was held */

typedef struct worker
{
	bench_worker b;
	long long	sections;
	long long	timeouts;
	bench_lat	handoff;
	bench_lat	acquire;
	bench_lat	release;
} worker;

static void *
run(void *arg)
{
	worker	   *w = arg;
	fence_ctx  *ctx = bench_connect(&w->b, redis_url);
	int64_t		end = bench_deadline(seconds);

	while (ctx != NULL && bench_now_ns() < end)
	{
		int64_t		t0 = bench_now_ns(),
					got;
		fence_lease *l = bench_acquire_wait(&w->b, ctx, RESOURCE, LEASE_TTL_MS,
											ACQUIRE_WAIT_MS, &w->timeouts);

		if (l == NULL && w->b.failed)
			break;
		if (l == NULL)
			continue;
		got = bench_now_ns();
		bench_lat_add(&w->acquire, got - t0);
		bench_handoff_got(&last, w->b.id, got, &w->handoff, 1);

		if (hold_ms > 0)
			bench_sleep_ms(hold_ms);

		{
			int64_t		r0 = bench_handoff_release(&last, w->b.id);

			__atomic_add_fetch(&busy_ns, r0 - got, __ATOMIC_SEQ_CST);
			if (bench_release(&w->b, ctx, l) != 0)
				break;
			bench_lat_add(&w->release, bench_now_ns() - r0);
		}
		w->sections++;
	}
	fence_free(ctx);
	return NULL;
}

int
main(int argc, char **argv)
{
	const bench_opt opts[] = {
		BENCH_INT('t', &nthreads), BENCH_INT('s', &seconds), BENCH_INT('H', &hold_ms), BENCH_END
	};
	int			i;
	long long	sections = 0,
				timeouts = 0,
				fewest = -1;
	worker	   *ws;
	bench_lat	handoffs = {0},
				acquires = {0},
				releases = {0};
	int64_t		ns;

	if (bench_getopt(argc, argv, opts, "usage: fence_contend [-t THREADS] [-s SECONDS] [-H HOLD_MS]") != 0)
		return 64;
	redis_url = bench_redis_url("fence_contend", nthreads >= 1 && seconds >= 1 && hold_ms >= 0,
								"THREADS and SECONDS must be positive");
	if (redis_url == NULL)
		return 64;

	ws = calloc(nthreads, sizeof(worker));
	if (ws == NULL)
		return 1;
	if (bench_run(ws, sizeof(worker), nthreads, run, &ns))
		return 1;
	for (i = 0; i < nthreads; i++)
	{
		sections += ws[i].sections;
		timeouts += ws[i].timeouts;
		if (fewest < 0 || ws[i].sections < fewest)
			fewest = ws[i].sections;
		bench_lat_merge(&handoffs, &ws[i].handoff);
		bench_lat_merge(&acquires, &ws[i].acquire);
		bench_lat_merge(&releases, &ws[i].release);
	}
	printf("cs_per_s=%.1f handoffs=%zu handoff_p50_us=%.1f handoff_p99_us=%.1f busy=%.4f "
		   "acquire_p50_us=%.1f acquire_p99_us=%.1f min_share=%.4f timeouts=%lld release_p50_us=%.1f\n",
		   (double) sections * 1e9 / (double) ns, handoffs.n,
		   bench_lat_pct_us(&handoffs, 50), bench_lat_pct_us(&handoffs, 99),
		   (double) busy_ns / (double) ns,
		   bench_lat_pct_us(&acquires, 50), bench_lat_pct_us(&acquires, 99),
		   sections > 0 ? (double) fewest * nthreads / (double) sections : 0.0,
		   timeouts, bench_lat_pct_us(&releases, 50));
	return 0;
}
