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

#endif							/* FENCE_TESTLIB_H */
