/*
 * bench/bench.h
 *	  Small helpers shared by the C bench programs: a monotonic clock,
 *	  a growable array of latencies, and percentiles; the options table, the
 *	  workers' threads and their connections, and the steps of a worker's
 *	  loop that every program takes the same way (a deadline, an acquire
 *	  that may time out, a release, the handoff stamp); the floors' raw
 *	  Redis connection and its PING.
 */
#ifndef BENCH_H
#define BENCH_H

#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "fence.h"

static inline int64_t
bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void
bench_sleep_ms(int64_t ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Latencies in nanoseconds; grows as needed. */
typedef struct bench_lat
{
	int64_t    *v;
	size_t		n;
	size_t		cap;
} bench_lat;

static inline void
bench_lat_add(bench_lat *l, int64_t ns)
{
	if (l->n == l->cap)
	{
		size_t		cap = l->cap ? 2 * l->cap : 4096;
		int64_t    *v = realloc(l->v, cap * sizeof(int64_t));

		if (v == NULL)
		{
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = ns;
}

/* Append all of "src" to "dst". */
static inline void
bench_lat_merge(bench_lat *dst, const bench_lat *src)
{
	size_t		i;

	for (i = 0; i < src->n; i++)
		bench_lat_add(dst, src->v[i]);
}

static int
bench_cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

/* The "p"-th percentile (0..100) in microseconds; sorts "l". */
static inline double
bench_lat_pct_us(bench_lat *l, double p)
{
	size_t		i;

	if (l->n == 0)
		return 0.0 / 0.0;
	qsort(l->v, l->n, sizeof(int64_t), bench_cmp_i64);
	i = (size_t) (p / 100.0 * (double) (l->n - 1) + 0.5);
	return (double) l->v[i] / 1000.0;
}

/* The end of a run of "seconds" that starts now, for bench_now_ns(). */
static inline int64_t
bench_deadline(int seconds)
{
	return bench_now_ns() + (int64_t) seconds * 1000000000;
}

/*
 * One option of a program: its letter and where it goes: "text" takes the
 * argument as it is, "value" its number (atoi), or with "flag" set, 1 and
 * no argument.  A table ends with a zero letter.
 */
typedef struct bench_opt
{
	char		letter;
	int		   *value;
	const char **text;
	int			flag;
} bench_opt;

#define BENCH_INT(c, p)		{.letter = (c), .value = (p)}
#define BENCH_TEXT(c, p)	{.letter = (c), .text = (p)}
#define BENCH_FLAG(c, p)	{.letter = (c), .value = (p), .flag = 1}
#define BENCH_END			{.letter = 0}

/*
 * Parse the options of "argv" by "opts"; on an unknown one print "usage"
 * ("usage: PROGRAM ...") and return 64 (EX_USAGE), else 0.
 */
static inline int
bench_getopt(int argc, char **argv, const bench_opt *opts, const char *usage)
{
	char		letters[64];
	size_t		n = 0;
	int			c;

	for (const bench_opt *o = opts; o->letter != 0 && n + 2 < sizeof(letters); o++)
	{
		letters[n++] = o->letter;
		if (!o->flag)
			letters[n++] = ':';
	}
	letters[n] = '\0';
	while ((c = getopt(argc, argv, letters)) != -1)
	{
		const bench_opt *o = opts;

		while (o->letter != 0 && o->letter != c)
			o++;
		if (o->letter == 0)
		{
			fprintf(stderr, "%s\n", usage);
			return 64;
		}
		if (o->text != NULL)
			*o->text = optarg;
		else
			*o->value = o->flag ? 1 : atoi(optarg);
	}
	return 0;
}

/*
 * Redis from FENCE_REDIS_URL, once the options are "ok"; else NULL, and
 * "PROGRAM: set FENCE_REDIS_URL; WHY" on stderr (the program exits 64).
 */
static inline const char *
bench_redis_url(const char *program, int ok, const char *why)
{
	const char *url = getenv("FENCE_REDIS_URL");

	if (url == NULL || !ok)
	{
		fprintf(stderr, "%s: set FENCE_REDIS_URL; %s\n", program, why);
		return NULL;
	}
	return url;
}

/*
 * What every program's worker begins with: its thread, its number and
 * whether it failed (which fails the run: the program prints nothing and
 * exits 1).
 */
typedef struct bench_worker
{
	pthread_t	thread;
	int			id;
	int			failed;
} bench_worker;

/* Worker "i" of an array of "n" workers of "size" bytes each. */
static inline bench_worker *
bench_worker_at(void *ws, size_t size, int i)
{
	return (bench_worker *) ((char *) ws + (size_t) i * size);
}

/*
 * The run: number the "n" workers 0..n-1, start each on "fn" (with the
 * worker), wait for them all; the time from the first start to the last
 * return in "*elapsed_ns".  1 when any of them failed.
 */
static inline int
bench_run(void *ws, size_t size, int n, void *(*fn) (void *), int64_t *elapsed_ns)
{
	int64_t		t0 = bench_now_ns();
	int			failed = 0;

	for (int i = 0; i < n; i++)
	{
		bench_worker *w = bench_worker_at(ws, size, i);

		w->id = i;
		pthread_create(&w->thread, NULL, fn, w);
	}
	for (int i = 0; i < n; i++)
	{
		bench_worker *w = bench_worker_at(ws, size, i);

		pthread_join(w->thread, NULL);
		failed |= w->failed;
	}
	*elapsed_ns = bench_now_ns() - t0;
	return failed;
}

/* A connected context for worker "w" (on FENCE_REDIS_URL), or NULL: it failed. */
static inline fence_ctx *
bench_connect(bench_worker *w, const char *url)
{
	fence_ctx  *ctx = fence_connect(url);

	if (ctx == NULL || ctx->err)
	{
		fprintf(stderr, "worker %d: %s\n", w->id, ctx ? ctx->errstr : "out of memory");
		fence_free(ctx);
		w->failed = 1;
		return NULL;
	}
	return ctx;
}

/*
 * A floor's connection: hiredis straight to the Redis of "url" (a
 * redis://HOST:PORT URL), the client stack libfence uses without
 * libfence; NULL when it failed (and so worker "w").
 */
static inline redisContext *
bench_raw_redis(bench_worker *w, const char *url)
{
	const char *hp = strstr(url, "://");
	const char *colon;
	char		host[256];
	redisContext *c;

	hp = hp ? hp + 3 : url;
	colon = strrchr(hp, ':');
	snprintf(host, sizeof(host), "%.*s", colon ? (int) (colon - hp) : (int) strlen(hp), hp);
	c = redisConnect(host, colon ? atoi(colon + 1) : 6379);
	if (c == NULL || c->err)
	{
		fprintf(stderr, "worker %d: %s\n", w->id, c ? c->errstr : "out of memory");
		redisFree(c);
		w->failed = 1;
		return NULL;
	}
	return c;
}

/* A PING on "c" answered with PONG: one round trip of a floor. */
static inline int
bench_ping(redisContext *c)
{
	redisReply *r = redisCommand(c, "PING");
	int			ok = r != NULL && r->type == REDIS_REPLY_STATUS;

	freeReplyObject(r);
	return ok;
}

/*
 * fence_acquire_wait for a worker's loop: NULL when the wait timed out
 * (counted in "timeouts": the loop goes on) or failed (the worker failed:
 * the loop stops).
 */
static inline fence_lease *
bench_acquire_wait(bench_worker *w, fence_ctx *ctx, const char *resource,
				   long long ttl_ms, long long wait_ms, long long *timeouts)
{
	fence_lease *l = fence_acquire_wait(ctx, resource, ttl_ms, wait_ms);

	if (l == NULL && ctx->err == FENCE_ERR_TIMEOUT)
		(*timeouts)++;
	else if (l == NULL)
	{
		fprintf(stderr, "worker %d: acquire: %s\n", w->id, ctx->errstr);
		w->failed = 1;
	}
	return l;
}

/* Release and free "l"; -1 when the release failed (and so the worker). */
static inline int
bench_release(bench_worker *w, fence_ctx *ctx, fence_lease *l)
{
	int			rc = 0;

	if (fence_release(ctx, l) != FENCE_OK)
	{
		fprintf(stderr, "worker %d: release: %s\n", w->id, ctx->errstr);
		w->failed = 1;
		rc = -1;
	}
	fence_lease_free(l);
	return rc;
}

/*
 * The last release of a resource, for the handoff latency: from a
 * holder's call to release to a moment of the next holder's (the return
 * of its acquire, or the end of its first write), when that is another
 * worker.
 */
typedef struct bench_handoff
{
	pthread_mutex_t mu;
	int64_t		released_ns;	/* 0: none yet (or none since the last take) */
	int			last_holder;
} bench_handoff;

/*
 * Worker "id" holds the lease since "now": add the handoff to "lat" when
 * another worker released it before; with "take", forget that release.
 */
static inline void
bench_handoff_got(bench_handoff *h, int id, int64_t now, bench_lat *lat, int take)
{
	pthread_mutex_lock(&h->mu);
	if (h->released_ns != 0 && h->last_holder != id)
		bench_lat_add(lat, now - h->released_ns);
	if (take)
		h->released_ns = 0;
	pthread_mutex_unlock(&h->mu);
}

/*
 * Worker "id" is about to release: stamp it before the release is sent
 * (nobody can acquire earlier); the stamp.
 */
static inline int64_t
bench_handoff_release(bench_handoff *h, int id)
{
	int64_t		now;

	pthread_mutex_lock(&h->mu);
	now = h->released_ns = bench_now_ns();
	h->last_holder = id;
	pthread_mutex_unlock(&h->mu);
	return now;
}

#endif							/* BENCH_H */
