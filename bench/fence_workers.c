/*
 * bench/fence_workers.c
 *	  Scenarios 5 and 6: N workers, each looping over a whole critical
 *	  section through libfence:
 *
 *		fence_acquire_wait -> fence_exec (one UPDATE) -> [hold] ->
 *		fence_release -> [think]
 *
 *	  fence_workers -n WORKERS -r RESOURCES [-s SECONDS] [-H HOLD_MS] [-T THINK_MS] [-A | -F [-D]]
 *
 *	  The fenced UPDATE is the lease's announce too (its transaction moves
 *	  the mark first); with -A a fence_announce goes before it, as a worker
 *	  whose first statement is not fenced must.  With -F, the floor of a
 *	  critical section in the same client stack: a PING (the acquire's
 *	  round trip), the plain autocommit UPDATE, a PING (the release's);
 *	  with -D that UPDATE commits durably (synchronous_commit = on), as
 *	  the extension makes every transaction that moves a mark commit
 *	  (extension/marks.c, durable_commit), whatever the session asked for.
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
#include <string.h>

#include "bench.h"

#define LEASE_TTL_MS 5000
#define ACQUIRE_WAIT_MS 10000

static const char *redis_url;
static int	nworkers = 1;
static int	seconds = 5;
static int	hold_ms = 0;
static int	think_ms = 0;
static int	nresources = 1;
static int	announce_first;		/* -A: fence_announce before the UPDATE */
static int	floor_only;			/* -F: PING, plain UPDATE, PING */
static int	floor_durable;		/* -D: that UPDATE with synchronous_commit = on */

#define UPDATE_SQL "UPDATE bench.e2e SET n = n + 1 WHERE id = $1::int"

/* The last release of each resource, for the handoff latency. */
static bench_handoff *resources;

typedef struct worker
{
	bench_worker b;
	long long	sections;
	long long	timeouts;
	bench_lat	handoff;
	bench_lat	first_write;	/* acquire call to end of the first write */
} worker;

static void *
run(void *arg)
{
	worker	   *w = arg;
	int			id = w->b.id;
	fence_ctx  *ctx = fence_connect(redis_url);
	PGconn	   *pg = PQconnectdb("");
	char		resource[64],
				rowid[16];
	const char *params[1] = {rowid};
	bench_handoff *rs = &resources[id % nresources];
	int64_t		end;

	if (ctx == NULL || ctx->err || PQstatus(pg) != CONNECTION_OK)
	{
		fprintf(stderr, "worker %d: %s%s\n", id,
				ctx ? ctx->errstr : "out of memory", PQerrorMessage(pg));
		w->b.failed = 1;
		return NULL;
	}
	snprintf(resource, sizeof(resource), "bench:e2e:%d", id % nresources);
	snprintf(rowid, sizeof(rowid), "%d", id);
	end = bench_deadline(seconds);
	while (bench_now_ns() < end)
	{
		int64_t		t0 = bench_now_ns();
		fence_lease *l = bench_acquire_wait(&w->b, ctx, resource, LEASE_TTL_MS,
											ACQUIRE_WAIT_MS, &w->timeouts);
		PGresult   *res;
		int64_t		now;

		if (l == NULL && w->b.failed)
			break;
		if (l == NULL)
			continue;
		if ((announce_first && fence_announce(ctx, l, pg) != FENCE_OK) ||
			(res = fence_exec(ctx, l, pg, UPDATE_SQL, 1, params)) == NULL)
		{
			fprintf(stderr, "worker %d: %s\n", id, ctx->errstr);
			fence_release(ctx, l);
			fence_lease_free(l);
			w->b.failed = 1;
			break;
		}
		PQclear(res);
		now = bench_now_ns();
		bench_lat_add(&w->first_write, now - t0);
		bench_handoff_got(rs, id, now, &w->handoff, 0);

		if (hold_ms > 0)
			bench_sleep_ms(hold_ms);

		bench_handoff_release(rs, id);
		if (bench_release(&w->b, ctx, l) != 0)
			break;
		w->sections++;
		if (think_ms > 0)
			bench_sleep_ms(think_ms);
	}
	PQfinish(pg);
	fence_free(ctx);
	return NULL;
}

/* -F: the floor, one worker on its own row: PING, plain UPDATE, PING. */
static void *
run_floor(void *arg)
{
	worker	   *w = arg;
	redisContext *c = bench_raw_redis(&w->b, redis_url);
	PGconn	   *pg = PQconnectdb("");
	char		rowid[16];
	const char *params[1] = {rowid};
	int64_t		end;

	snprintf(rowid, sizeof(rowid), "%d", w->b.id);
	if (PQstatus(pg) == CONNECTION_OK && floor_durable)
		PQclear(PQexec(pg, "SET synchronous_commit = on"));
	if (c == NULL || PQstatus(pg) != CONNECTION_OK)
	{
		fprintf(stderr, "worker %d: %s\n", w->b.id, PQerrorMessage(pg));
		w->b.failed = 1;
		end = 0;
	}
	else
		end = bench_deadline(seconds);
	while (bench_now_ns() < end)
	{
		int64_t		t0 = bench_now_ns();
		PGresult   *res;
		int			ok;

		if (!bench_ping(c))
		{
			w->b.failed = 1;
			break;
		}
		res = PQexecParams(pg, UPDATE_SQL, 1, NULL, params, NULL, NULL, 0);
		ok = PQresultStatus(res) == PGRES_COMMAND_OK;
		PQclear(res);
		if (!ok || !bench_ping(c))
		{
			fprintf(stderr, "worker %d: %s\n", w->b.id, PQerrorMessage(pg));
			w->b.failed = 1;
			break;
		}
		bench_lat_add(&w->first_write, bench_now_ns() - t0);
		w->sections++;
	}
	PQfinish(pg);
	if (c != NULL)
		redisFree(c);
	return NULL;
}

int
main(int argc, char **argv)
{
	const bench_opt opts[] = {
		BENCH_INT('n', &nworkers), BENCH_INT('r', &nresources), BENCH_INT('s', &seconds),
		BENCH_INT('H', &hold_ms), BENCH_INT('T', &think_ms),
		BENCH_FLAG('A', &announce_first), BENCH_FLAG('F', &floor_only),
		BENCH_FLAG('D', &floor_durable), BENCH_END
	};
	int			i;
	long long	sections = 0,
				timeouts = 0;
	worker	   *ws;
	bench_lat	all = {0},
				first = {0};
	size_t		handoffs;
	int64_t		ns;

	if (bench_getopt(argc, argv, opts,
					 "usage: fence_workers -n WORKERS -r RESOURCES [-s SECONDS] [-H HOLD_MS] [-T THINK_MS] [-A | -F [-D]]") != 0)
		return 64;
	redis_url = bench_redis_url("fence_workers", nworkers >= 1 && nresources >= 1 && seconds >= 1,
								"counts must be positive");
	if (redis_url == NULL)
		return 64;

	resources = calloc(nresources, sizeof(bench_handoff));
	for (i = 0; i < nresources; i++)
		pthread_mutex_init(&resources[i].mu, NULL);
	ws = calloc(nworkers, sizeof(worker));
	if (bench_run(ws, sizeof(worker), nworkers, floor_only ? run_floor : run, &ns))
		return 1;
	for (i = 0; i < nworkers; i++)
	{
		sections += ws[i].sections;
		timeouts += ws[i].timeouts;
		bench_lat_merge(&all, &ws[i].handoff);
		bench_lat_merge(&first, &ws[i].first_write);
	}
	handoffs = all.n;
	printf("cs_per_s=%.1f handoffs=%zu handoff_p50_us=%.1f handoff_p99_us=%.1f timeouts=%lld first_write_p50_us=%.1f\n",
		   (double) sections * 1e9 / (double) ns, handoffs,
		   bench_lat_pct_us(&all, 50), bench_lat_pct_us(&all, 99), timeouts,
		   bench_lat_pct_us(&first, 50));
	return 0;
}
