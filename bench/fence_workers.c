/*
 * bench/fence_workers.c
 *	  Scenarios 5 and 6: N workers, each looping over a whole critical
 *	  section through libfence:
 *
 *		fence_acquire_wait -> fence_announce -> fence_exec (one UPDATE) ->
 *		[hold] -> fence_release -> [think]
 *
 *	  fence_workers -n WORKERS -r RESOURCES [-s SECONDS] [-H HOLD_MS] [-T THINK_MS]
 *
 *	  Worker i uses resource "bench:e2e:<i mod RESOURCES>" and updates row i
 *	  of bench.e2e.  Redis from $FENCE_REDIS_URL, PostgreSQL from the PG*
 *	  variables.  Prints one line:
 *
 *		cs_per_s=N handoffs=N handoff_p50_us=N handoff_p99_us=N timeouts=N
 *		first_write_p50_us=N
 *
 *	  The handoff latency is the time from a holder's call to release to the
 *	  end of the first fenced write of the next holder, when that is another
 *	  worker: what a waiting worker loses to the hand-over itself.  Its floor
 *	  is the time from calling acquire to the end of the first write when
 *	  nobody else wants the lease (first_write, measured with -n 1).
 */
#include <getopt.h>
#include <pthread.h>
#include <string.h>

#include "bench.h"
#include "fence.h"

#define LEASE_TTL_MS 5000
#define ACQUIRE_WAIT_MS 10000

static const char *redis_url;
static int	seconds = 5;
static int	hold_ms = 0;
static int	think_ms = 0;
static int	nresources = 1;

/* The last release of each resource, for the handoff latency. */
typedef struct resource_state
{
	pthread_mutex_t mu;
	int64_t		released_ns;	/* 0: never released yet */
	int			last_holder;
} resource_state;

static resource_state *resources;

typedef struct worker
{
	pthread_t	thread;
	int			id;
	long long	sections;
	long long	timeouts;
	int			failed;
	bench_lat	handoff;
	bench_lat	first_write;	/* acquire call to end of the first write */
} worker;

static void *
run(void *arg)
{
	worker	   *w = arg;
	fence_ctx  *ctx = fence_connect(redis_url);
	PGconn	   *pg = PQconnectdb("");
	char		resource[64],
				rowid[16];
	const char *params[1] = {rowid};
	resource_state *rs = &resources[w->id % nresources];
	int64_t		end;

	if (ctx == NULL || ctx->err || PQstatus(pg) != CONNECTION_OK)
	{
		fprintf(stderr, "worker %d: %s%s\n", w->id,
				ctx ? ctx->errstr : "out of memory", PQerrorMessage(pg));
		w->failed = 1;
		return NULL;
	}
	snprintf(resource, sizeof(resource), "bench:e2e:%d", w->id % nresources);
	snprintf(rowid, sizeof(rowid), "%d", w->id);
	end = bench_now_ns() + (int64_t) seconds * 1000000000;
	while (bench_now_ns() < end)
	{
		int64_t		t0 = bench_now_ns();
		fence_lease *l = fence_acquire_wait(ctx, resource, LEASE_TTL_MS,
											ACQUIRE_WAIT_MS);
		PGresult   *res;
		int64_t		now;

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
		if (fence_announce(ctx, l, pg) != FENCE_OK ||
			(res = fence_exec(ctx, l, pg,
							  "UPDATE bench.e2e SET n = n + 1 WHERE id = $1::int",
							  1, params)) == NULL)
		{
			fprintf(stderr, "worker %d: %s\n", w->id, ctx->errstr);
			fence_release(ctx, l);
			fence_lease_free(l);
			w->failed = 1;
			break;
		}
		PQclear(res);
		now = bench_now_ns();
		bench_lat_add(&w->first_write, now - t0);
		pthread_mutex_lock(&rs->mu);
		if (rs->released_ns != 0 && rs->last_holder != w->id)
			bench_lat_add(&w->handoff, now - rs->released_ns);
		pthread_mutex_unlock(&rs->mu);

		if (hold_ms > 0)
			bench_sleep_ms(hold_ms);

		/* stamp the release before it is sent: nobody can acquire earlier */
		pthread_mutex_lock(&rs->mu);
		rs->released_ns = bench_now_ns();
		rs->last_holder = w->id;
		pthread_mutex_unlock(&rs->mu);
		if (fence_release(ctx, l) != FENCE_OK)
		{
			fprintf(stderr, "worker %d: release: %s\n", w->id, ctx->errstr);
			fence_lease_free(l);
			w->failed = 1;
			break;
		}
		fence_lease_free(l);
		w->sections++;
		if (think_ms > 0)
			bench_sleep_ms(think_ms);
	}
	PQfinish(pg);
	fence_free(ctx);
	return NULL;
}

int
main(int argc, char **argv)
{
	int			nworkers = 1,
				i,
				c,
				failed = 0;
	long long	sections = 0,
				timeouts = 0;
	worker	   *ws;
	bench_lat	all = {0},
				first = {0};
	size_t		handoffs;
	int64_t		t0,
				t1;

	while ((c = getopt(argc, argv, "n:r:s:H:T:")) != -1)
	{
		switch (c)
		{
			case 'n':
				nworkers = atoi(optarg);
				break;
			case 'r':
				nresources = atoi(optarg);
				break;
			case 's':
				seconds = atoi(optarg);
				break;
			case 'H':
				hold_ms = atoi(optarg);
				break;
			case 'T':
				think_ms = atoi(optarg);
				break;
			default:
				fprintf(stderr, "usage: fence_workers -n WORKERS -r RESOURCES [-s SECONDS] [-H HOLD_MS] [-T THINK_MS]\n");
				return 64;
		}
	}
	redis_url = getenv("FENCE_REDIS_URL");
	if (redis_url == NULL || nworkers < 1 || nresources < 1 || seconds < 1)
	{
		fprintf(stderr, "fence_workers: set FENCE_REDIS_URL; counts must be positive\n");
		return 64;
	}

	resources = calloc(nresources, sizeof(resource_state));
	for (i = 0; i < nresources; i++)
		pthread_mutex_init(&resources[i].mu, NULL);
	ws = calloc(nworkers, sizeof(worker));
	t0 = bench_now_ns();
	for (i = 0; i < nworkers; i++)
	{
		ws[i].id = i;
		pthread_create(&ws[i].thread, NULL, run, &ws[i]);
	}
	for (i = 0; i < nworkers; i++)
	{
		pthread_join(ws[i].thread, NULL);
		sections += ws[i].sections;
		timeouts += ws[i].timeouts;
		failed |= ws[i].failed;
		bench_lat_merge(&all, &ws[i].handoff);
		bench_lat_merge(&first, &ws[i].first_write);
	}
	t1 = bench_now_ns();
	if (failed)
		return 1;
	handoffs = all.n;
	printf("cs_per_s=%.1f handoffs=%zu handoff_p50_us=%.1f handoff_p99_us=%.1f timeouts=%lld first_write_p50_us=%.1f\n",
		   (double) sections * 1e9 / (double) (t1 - t0), handoffs,
		   bench_lat_pct_us(&all, 50), bench_lat_pct_us(&all, 99), timeouts,
		   bench_lat_pct_us(&first, 50));
	return 0;
}
