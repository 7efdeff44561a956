/*
 * client/test/testlib.h
 *	  Helpers the client's C test programs share: unique resource names,
 *	  clocks, the lease-lost counter, and the PostgreSQL connection.
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

#endif							/* FENCE_TESTLIB_H */
