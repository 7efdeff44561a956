/*
 * bench/fence_transfer.c
 *	  Scenario 15: N workers, each looping over a whole critical section on
 *	  random accounts through libfence, each account its own resource
 *	  "acct:<aid>":
 *
 *		transfer  fence_acquire_many {acct:a, acct:b} ->
 *				  SELECT fence.fenced_update_many(both, their tokens,
 *				  'UPDATE ... both rows') -> fence_leases_release
 *		single    fence_acquire acct:a -> SELECT fence.fenced_update(acct:a,
 *				  its token, 'UPDATE ... one row') -> fence_release
 *		two       the transfer as two single critical sections in a row,
 *				  debit then credit (not atomic: what a transfer costs
 *				  without sets)
 *		warm      acquire and release every account once, Redis only, so
 *				  that every later token is above the mark the script
 *				  announces at 1: every write of the runs moves its mark
 *
 *	  fence_transfer -m MODE -n WORKERS -a ACCOUNTS [-s SECONDS]
 *
 *	  Writes bench.s15_accounts (aid int primary key, abalance bigint).
 *	  Redis from $FENCE_REDIS_URL, PostgreSQL from the PG* variables.
 *	  Prints one line:
 *
 *		cs_per_s=N redis_us=N pg_us=N busy=N net=N sections=N
 *		cpu_client_us=N cpu_pg_us=N
 *
 *	  cs_per_s counts transfers for "two" (two critical sections each);
 *	  redis_us and pg_us are the mean wall time per counted section spent
 *	  in libfence's Redis calls (acquire and release) and in the
 *	  PostgreSQL statement(s); busy counts acquires refused because another
 *	  worker held an account (a new pair is drawn then); net is what the
 *	  run added to the sum of the balances (transfers add nothing), for the
 *	  caller to check against the table.  cpu_client_us and cpu_pg_us are
 *	  the CPU time (user + system) per counted section of this process and
 *	  of the workers' PostgreSQL backends (from /proc, so on the same
 *	  machine): unlike the wall times they do not grow when other
 *	  processes take the cores.
 */
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"

#define LEASE_TTL_MS 5000

enum mode
{
	MODE_TRANSFER,
	MODE_SINGLE,
	MODE_TWO,
	MODE_WARM
};

static const char *redis_url;
static enum mode mode;
static const char *mode_name = "transfer";
static int	seconds = 5;
static int	naccounts = 100000;
static int	nworkers = 4;

/*
 * The writes, prepared once per connection.  fence.fenced_update_many
 * sorts the resources itself, so they go in the set's canonical order
 * with their tokens.
 */
static const char *const transfer_sql =
	"SELECT fence.fenced_update_many($1::text[], $2::bigint[], "
	"'UPDATE bench.s15_accounts SET abalance = abalance + "
	"CASE aid WHEN $1 THEN -$3 ELSE $3 END WHERE aid IN ($1, $2)', "
	"$3::int, $4::int, $5::int)";
static const char *const single_sql =
	"SELECT fence.fenced_update($1, $2::bigint, "
	"'UPDATE bench.s15_accounts SET abalance = abalance + $2 WHERE aid = $1', "
	"$3::int, $4::int)";

typedef struct worker
{
	bench_worker b;
	uint64_t	rng;
	fence_ctx  *ctx;
	PGconn	   *pg;
	long long	sections;
	long long	busy;
	long long	net;			/* added to the sum of the balances */
	int64_t		redis_ns;
	int64_t		pg_ns;
	int			backend_pid;
	long long	backend_ticks;	/* CPU of its backend during the run */
} worker;

/* CPU time (user + system, clock ticks) of process "pid" so far; -1 if unknown. */
static long long
process_ticks(int pid)
{
	char		path[64];
	FILE	   *f;
	long long	utime = -1,
				stime = -1;
	int			c;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	/* the name in parentheses may hold spaces: fields 14 and 15 follow its ')' */
	while ((c = getc(f)) != EOF && c != ')')
		;
	if (fscanf(f, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld", &utime, &stime) != 2)
		utime = stime = -1;
	fclose(f);
	return utime < 0 ? -1 : utime + stime;
}

static int64_t
self_cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ((int64_t) ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
		((int64_t) ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

static uint64_t
next_random(worker *w)
{
	/* xorshift64*: enough to spread accounts, one state per thread */
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return w->rng * 2685821657736338717ULL;
}

static int
fail(worker *w, const char *what)
{
	fprintf(stderr, "worker %d: %s: %s%s\n", w->b.id, what, w->ctx->errstr,
			w->pg ? PQerrorMessage(w->pg) : "");
	w->b.failed = 1;
	return -1;
}

/* Run a prepared write; it must have processed "rows" rows. */
static int
write_rows(worker *w, const char *stmt, int nparams, const char *const *params, long rows)
{
	int64_t		t0 = bench_now_ns();
	PGresult   *res = PQexecPrepared(w->pg, stmt, nparams, params, NULL, NULL, 0);
	int			ok = PQresultStatus(res) == PGRES_TUPLES_OK &&
		PQntuples(res) == 1 && atol(PQgetvalue(res, 0, 0)) == rows;

	w->pg_ns += bench_now_ns() - t0;
	if (!ok)
		fprintf(stderr, "worker %d: %s: %s (expected %ld rows)\n", w->b.id, stmt,
				PQresultErrorMessage(res), rows);
	PQclear(res);
	if (!ok)
		w->b.failed = 1;
	return ok ? 0 : -1;
}

/*
 * One single-account critical section: add "delta" to account "aid".
 * 1 when the lease was busy (nothing written), 0 done, -1 failed.
 */
static int
single_section(worker *w, int aid, int delta)
{
	char		resource[32],
				token[24],
				aidbuf[16],
				deltabuf[16];
	const char *params[4] = {resource, token, aidbuf, deltabuf};
	int64_t		t0 = bench_now_ns();
	fence_lease *l;
	int			rc;

	snprintf(resource, sizeof(resource), "acct:%d", aid);
	l = fence_acquire(w->ctx, resource, LEASE_TTL_MS);
	w->redis_ns += bench_now_ns() - t0;
	if (l == NULL)
		return w->ctx->err == FENCE_ERR_BUSY ? 1 : fail(w, "fence_acquire");
	snprintf(token, sizeof(token), "%lld", fence_lease_token(l));
	snprintf(aidbuf, sizeof(aidbuf), "%d", aid);
	snprintf(deltabuf, sizeof(deltabuf), "%d", delta);
	if ((rc = write_rows(w, "single", 4, params, 1)) == 0)
		w->net += delta;
	t0 = bench_now_ns();
	if (fence_release(w->ctx, l) != FENCE_OK && rc == 0)
		rc = fail(w, "fence_release");
	w->redis_ns += bench_now_ns() - t0;
	fence_lease_free(l);
	return rc;
}

/* One transfer of "delta" from "a" to "b" holding both leases as a set. */
static int
transfer_section(worker *w, int a, int b, int delta)
{
	char		ra[32],
				rb[32],
				resources[80],
				tokens[48],
				abuf[16],
				bbuf[16],
				deltabuf[16];
	const char *names[2] = {ra, rb};
	const char *params[5] = {resources, tokens, abuf, bbuf, deltabuf};
	int64_t		t0 = bench_now_ns();
	fence_leases *set;
	fence_lease *m0,
			   *m1;
	int			rc;

	snprintf(ra, sizeof(ra), "acct:%d", a);
	snprintf(rb, sizeof(rb), "acct:%d", b);
	set = fence_acquire_many(w->ctx, names, 2, LEASE_TTL_MS);
	w->redis_ns += bench_now_ns() - t0;
	if (set == NULL)
		return w->ctx->err == FENCE_ERR_BUSY ? 1 : fail(w, "fence_acquire_many");
	m0 = fence_leases_member(set, 0);
	m1 = fence_leases_member(set, 1);
	snprintf(resources, sizeof(resources), "{%s,%s}",
			 fence_lease_resource(m0), fence_lease_resource(m1));
	snprintf(tokens, sizeof(tokens), "{%lld,%lld}",
			 fence_lease_token(m0), fence_lease_token(m1));
	snprintf(abuf, sizeof(abuf), "%d", a);
	snprintf(bbuf, sizeof(bbuf), "%d", b);
	snprintf(deltabuf, sizeof(deltabuf), "%d", delta);
	rc = write_rows(w, "transfer", 5, params, 2);
	t0 = bench_now_ns();
	if (fence_leases_release(w->ctx, set) != FENCE_OK && rc == 0)
		rc = fail(w, "fence_leases_release");
	w->redis_ns += bench_now_ns() - t0;
	fence_leases_free(set);
	return rc;
}

/* Acquire and release accounts id+1, id+1+nworkers, ...: Redis only. */
static void
warm(worker *w)
{
	char		resource[32];
	int			aid;

	for (aid = w->b.id + 1; aid <= naccounts; aid += nworkers)
	{
		fence_lease *l;

		snprintf(resource, sizeof(resource), "acct:%d", aid);
		if ((l = fence_acquire(w->ctx, resource, LEASE_TTL_MS)) == NULL ||
			fence_release(w->ctx, l) != FENCE_OK)
		{
			fail(w, "warm");
			fence_lease_free(l);
			return;
		}
		fence_lease_free(l);
		w->sections++;
	}
}

static void *
run(void *arg)
{
	worker	   *w = arg;
	int64_t		end;
	PGresult   *res;

	if ((w->ctx = bench_connect(&w->b, redis_url)) == NULL)
		return NULL;
	if (mode == MODE_WARM)
	{
		warm(w);
		fence_free(w->ctx);
		return NULL;
	}
	w->pg = PQconnectdb("");
	if (PQstatus(w->pg) != CONNECTION_OK)
	{
		fail(w, "connect");
		goto out;
	}
	res = PQprepare(w->pg, "transfer", transfer_sql, 0, NULL);
	if (PQresultStatus(res) == PGRES_COMMAND_OK)
	{
		PQclear(res);
		res = PQprepare(w->pg, "single", single_sql, 0, NULL);
	}
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		PQclear(res);
		fail(w, "prepare");
		goto out;
	}
	PQclear(res);
	res = PQexec(w->pg, "SELECT pg_backend_pid()");
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
		w->backend_pid = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	w->backend_ticks = -process_ticks(w->backend_pid);

	end = bench_deadline(seconds);
	while (bench_now_ns() < end)
	{
		int			a = (int) (next_random(w) % (uint64_t) naccounts) + 1;
		int			b = (int) ((uint64_t) a + next_random(w) % (uint64_t) (naccounts - 1)) % naccounts + 1;
		int			delta = (int) (next_random(w) % 10001) - 5000;
		int			rc;

		switch (mode)
		{
			case MODE_TRANSFER:
				rc = transfer_section(w, a, b, delta);
				break;
			case MODE_SINGLE:
				rc = single_section(w, a, delta);
				break;
			default:
				/* the credit must follow a debit: wait out a busy account */
				if ((rc = single_section(w, a, -delta)) == 0)
					while ((rc = single_section(w, b, delta)) == 1)
						w->busy++;
				break;
		}
		if (rc < 0)
			break;
		if (rc == 1)
			w->busy++;
		else
			w->sections++;
	}
	w->backend_ticks += process_ticks(w->backend_pid);
out:
	PQfinish(w->pg);
	fence_free(w->ctx);
	return NULL;
}

int
main(int argc, char **argv)
{
	const bench_opt opts[] = {
		BENCH_TEXT('m', &mode_name), BENCH_INT('n', &nworkers), BENCH_INT('a', &naccounts),
		BENCH_INT('s', &seconds), BENCH_END
	};
	int			i;
	long long	sections = 0,
				busy = 0,
				net = 0;
	int64_t		redis_ns = 0,
				pg_ns = 0,
				cpu0,
				seed,
				ns;
	long long	backend_ticks = 0;
	worker	   *ws;

	if (bench_getopt(argc, argv, opts,
					 "usage: fence_transfer -m transfer|single|two|warm -n WORKERS -a ACCOUNTS [-s SECONDS]") != 0)
		return 64;
	if (strcmp(mode_name, "transfer") == 0)
		mode = MODE_TRANSFER;
	else if (strcmp(mode_name, "single") == 0)
		mode = MODE_SINGLE;
	else if (strcmp(mode_name, "two") == 0)
		mode = MODE_TWO;
	else if (strcmp(mode_name, "warm") == 0)
		mode = MODE_WARM;
	else
	{
		fprintf(stderr, "fence_transfer: unknown mode \"%s\"\n", mode_name);
		return 64;
	}
	redis_url = bench_redis_url("fence_transfer", nworkers >= 1 && naccounts >= 2 && seconds >= 1,
								"at least 1 worker and 2 accounts");
	if (redis_url == NULL)
		return 64;

	ws = calloc(nworkers, sizeof(worker));
	cpu0 = self_cpu_ns();
	seed = bench_now_ns();
	for (i = 0; i < nworkers; i++)
		ws[i].rng = 0x9E3779B97F4A7C15ULL * (uint64_t) (i + 1) ^ (uint64_t) seed;
	if (bench_run(ws, sizeof(worker), nworkers, run, &ns))
		return 1;
	for (i = 0; i < nworkers; i++)
	{
		sections += ws[i].sections;
		busy += ws[i].busy;
		net += ws[i].net;
		backend_ticks += ws[i].backend_ticks;
		redis_ns += ws[i].redis_ns;
		pg_ns += ws[i].pg_ns;
	}
	if (sections == 0)
		sections = 1;
	printf("cs_per_s=%.1f redis_us=%.1f pg_us=%.1f busy=%lld net=%lld sections=%lld "
		   "cpu_client_us=%.1f cpu_pg_us=%.1f\n",
		   (double) sections * 1e9 / (double) ns,
		   (double) redis_ns / 1000.0 / (double) sections,
		   (double) pg_ns / 1000.0 / (double) sections, busy, net, sections,
		   (double) (self_cpu_ns() - cpu0) / 1000.0 / (double) sections,
		   (double) backend_ticks * 1e6 / (double) sysconf(_SC_CLK_TCK) / (double) sections);
	return 0;
}
