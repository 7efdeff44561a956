/*
 * client/test/testlib.h
 *	  Helpers the client's C test programs share: unique resource names,
 *	  clocks, the lease-lost counter, the PostgreSQL connection, and the
 *	  sockets a process holds.
 *
 * Define TEST_PREFIX (a string) before including it: resource names are
 * TEST_PREFIX "-<pid>-<base>", since other suites share the servers.
 */
#ifndef FENCE_TESTLIB_H
#define FENCE_TESTLIB_H

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fence.h"

static PGconn *pg;
static int	pg_ready;			/* the fence extension is there */

/* A resource name unique to this run. */
static const char *
R(const char *base)
{
	static char pool[8][256];
	static int	next;
	char	   *buf = pool[next++ % 8];

	snprintf(buf, sizeof(pool[0]), "%s-%d-%s", TEST_PREFIX, (int) getpid(), base);
	return buf;
}

static long long
ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

/* A lease-lost callback that counts its calls. */
static volatile int lost_calls;

static void
count_lost(fence_lease *lease, void *arg)
{
	(void) lease;
	(void) arg;
	__atomic_add_fetch(&lost_calls, 1, __ATOMIC_SEQ_CST);
}

/*
 * Connect to PostgreSQL (PG* variables) and create the extension; tests
 * that need it are skipped when that fails ("pg_ready" stays 0).
 */
static void
pg_setup(void)
{
	pg = PQconnectdb("");
	if (PQstatus(pg) == CONNECTION_OK)
	{
		PGresult   *r = PQexec(pg, "SET client_min_messages = warning");

		PQclear(r);
		r = PQexec(pg, "CREATE EXTENSION IF NOT EXISTS fence");
		PQclear(r);
		r = PQexec(pg, "SELECT to_regprocedure('fence.advance(text,bigint,text)') IS NOT NULL");
		pg_ready = PQresultStatus(r) == PGRES_TUPLES_OK && strcmp(PQgetvalue(r, 0, 0), "t") == 0;
		PQclear(r);
	}
}

/* Is "fd" in "fds[0..n)"? */
static int
fd_in(const int *fds, int n, int fd)
{
	for (int i = 0; i < n; i++)
		if (fds[i] == fd)
			return 1;
	return 0;
}

/* The socket descriptors this process holds, at most "max" of them. */
static int
list_sockets(int *fds, int max)
{
	char		path[64],
				target[64];
	int			n = 0;

	for (int fd = 0; fd < 1024 && n < max; fd++)
	{
		ssize_t		len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, target, sizeof(target) - 1);
		if (len > 0)
		{
			target[len] = '\0';
			if (strncmp(target, "socket:", 7) == 0)
				fds[n++] = fd;
		}
	}
	return n;
}

/*
 * A waiter: on a thread and a connection of its own, fence_acquire_wait,
 * hold the lease "hold_ms", release.  Fill in the first fields, then
 * waiter_start and waiter_join; the results are in the last ones.
 */
typedef struct waiter
{
	const char *url;
	const char *resource;
	long long	ttl_ms;
	long long	wait_ms;
	long long	hold_ms;
	int			min_replicas;	/* fence_set_min_replicas(ctx, n, 100) */
	int		   *order;			/* if set: counts acquisitions, shared */
	pthread_t	thread;
	long long	token;			/* 0: not acquired */
	int			nth;			/* *order when it acquired */
	long long	got_ms;			/* ms_now() when acquire returned */
	long long	released_ms;	/* ms_now() just before release */
	int			err;			/* ctx->err of a failed acquire */
	char		errstr[FENCE_ERRSTR_LEN];
} waiter;

static void *
waiter_main(void *arg)
{
	waiter	   *w = arg;
	fence_ctx  *c = fence_connect(w->url);
	fence_lease *l = NULL;

	if (c == NULL || c->err ||
		(w->min_replicas > 0 && fence_set_min_replicas(c, w->min_replicas, 100) != FENCE_OK))
	{
		w->err = c ? c->err : FENCE_ERR_OOM;
		snprintf(w->errstr, sizeof(w->errstr), "%s", c ? c->errstr : "out of memory");
		fence_free(c);
		return NULL;
	}
	l = fence_acquire_wait(c, w->resource, w->ttl_ms, w->wait_ms);
	w->got_ms = ms_now();
	if (l == NULL)
	{
		w->err = c->err;
		snprintf(w->errstr, sizeof(w->errstr), "%s", c->errstr);
		fence_free(c);
		return NULL;
	}
	w->token = fence_lease_token(l);
	if (w->order != NULL)
		w->nth = __atomic_add_fetch(w->order, 1, __ATOMIC_SEQ_CST);
	if (w->hold_ms > 0)
		sleep_ms(w->hold_ms);
	w->released_ms = ms_now();
	if (fence_release(c, l) != FENCE_OK)
	{
		w->err = c->err;
		snprintf(w->errstr, sizeof(w->errstr), "release: %.200s", c->errstr);
	}
	fence_lease_free(l);
	fence_free(c);
	return NULL;
}

static int
waiter_start(waiter *w)
{
	return pthread_create(&w->thread, NULL, waiter_main, w) == 0 ? 0 : -1;
}

static void
waiter_join(waiter *w)
{
	pthread_join(w->thread, NULL);
}

#endif							/* FENCE_TESTLIB_H */
