/*
 * client/test/testlib.h
 *	  Helpers the client's C test programs share: unique resource names
 *	  and their Redis keys, clocks, the lease-lost counter, the PostgreSQL
 *	  connection, a raw Redis connection (with TESTLIB_RAW_REDIS), a test's
 *	  connection to servers of its own, the descriptors a process holds,
 *	  waiters; and the bodies of the tests that every transport and
 *	  topology runs alike (test_fence.c on one node, test_tls.c over TLS,
 *	  test_topo.c on Cluster, Sentinel and a quorum), each parameterised by
 *	  the URL: descriptors closed on exec, the fork+exec race, the hand-over
 *	  to a waiter on release.
 *
 * Define TEST_PREFIX (a string) before including it: resource names are
 * TEST_PREFIX "-<pid>-<base>", since other suites share the servers.
 */
#ifndef FENCE_TESTLIB_H
#define FENCE_TESTLIB_H

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fence.h"

static PGconn *pg;
static int	pg_ready;			/* the fence extension is there */

/* libfence's key of "resource" (test_key_names pins the formula). */
char	   *fence_key(const char *resource, const char *suffix);

/*
 * The Redis key "suffix" of "resource" as libfence names it; with
 * "quoted", in single quotes, for a shell's redis-cli command line.  In
 * a static pool of 4.
 */
static const char *__attribute__((unused))
key_of(const char *resource, const char *suffix, int quoted)
{
	static char pool[4][400];
	static int	next;
	char	   *buf = pool[next++ % 4];
	char	   *k = fence_key(resource, suffix);

	snprintf(buf, sizeof(pool[0]), quoted ? "'%s'" : "%s", k ? k : "");
	free(k);
	return buf;
}

/*
 * A test's set-up on servers of its own: SKIP (with "why") unless "have"
 * (the suite started them), then connect "a" to "url".
 */
#define CONNECT_OR_SKIP(a, have, url, why) \
	do { \
		if (!(have)) \
			SKIP(why); \
		(a) = fence_connect(url); \
		CHECKC((a)->err == 0, (a)); \
	} while (0)

#ifdef TESTLIB_RAW_REDIS

/*
 * A side connection to the Redis under test, for set-up and checks that
 * go around libfence (define TESTLIB_RAW_REDIS, with hiredis.h and
 * fence_int.h included, for fence_parse_url).
 */
static const char *redis_url;
static redisContext *raw;

/*
 * Connect "raw" to FENCE_REDIS_URL (a TCP URL); on failure print the
 * "not ok - WHAT" line and return -1, so that main can stop there.
 */
static int
raw_redis_setup(const char *what)
{
	fence_url	u;
	char		err[256];

	redis_url = getenv("FENCE_REDIS_URL");
	if (redis_url == NULL || *redis_url == '\0')
		redis_url = FENCE_DEFAULT_URL;
	if (fence_parse_url(redis_url, &u, err, sizeof(err)) != FENCE_OK || u.is_unix)
	{
		printf("not ok - %s\n#   FENCE_REDIS_URL: %s\n", what, err);
		return -1;
	}
	raw = redisConnect(u.host, u.port);
	fence_url_free(&u);
	if (raw == NULL || raw->err)
	{
		printf("not ok - %s\n#   cannot reach Redis at %s\n", what, redis_url);
		return -1;
	}
	return 0;
}

/* GET "key" on the raw connection: a malloc'd string, NULL if missing. */
static char *__attribute__((unused))
rget(const char *key)
{
	redisReply *r = redisCommand(raw, "GET %s", key);
	char	   *s = NULL;

	if (r && r->type == REDIS_REPLY_STRING)
		s = strdup(r->str);
	freeReplyObject(r);
	return s;
}
#endif							/* TESTLIB_RAW_REDIS */

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

/* Parse "a b c" into up to "max" ints; how many. */
static int	__attribute__((unused))
ints(const char *s, int *out, int max)
{
	int			n = 0;
	char	   *end;

	while (s != NULL && *s && n < max)
	{
		long		v = strtol(s, &end, 10);

		if (end == s)
			break;
		out[n++] = (int) v;
		s = end;
	}
	return n;
}

/* The descriptors this process holds, of any kind, at most "max" of them. */
static int	__attribute__((unused))
list_fds(int *fds, int max)
{
	DIR		   *d = opendir("/proc/self/fd");
	struct dirent *e;
	int			n = 0,
				self = d ? dirfd(d) : -1;

	while (d != NULL && (e = readdir(d)) != NULL && n < max)
	{
		int			fd = atoi(e->d_name);

		if (e->d_name[0] != '.' && fd != self)
			fds[n++] = fd;
	}
	if (d != NULL)
		closedir(d);
	return n;
}

/*
 * The race of the close-on-exec tests: a thread of the application forks
 * and execs while libfence connects.  Each child counts, before its exec,
 * the descriptors it would keep across it that were not there (and
 * inheritable) before the test: sockets, or with "race_any_fd" every kind
 * (the files libfence reads too).  A descriptor that got FD_CLOEXEC only
 * once it was open is caught in that window.
 */
static volatile int race_stop;
static int	race_known[256],
			race_nknown,
			race_any_fd;

static void *
race_fork_exec(void *arg)
{
	int		   *leaked = arg;

	while (!race_stop)
	{
		pid_t		pid = fork();
		int			st;

		if (pid == 0)
		{
			int			n = 0;

			/* only async-signal-safe calls between fork and exec */
			for (int fd = 3; fd < 1024; fd++)
			{
				struct stat sb;
				int			flags = fcntl(fd, F_GETFD);

				if (flags >= 0 && !(flags & FD_CLOEXEC) && fstat(fd, &sb) == 0 &&
					(race_any_fd || S_ISSOCK(sb.st_mode)) && !fd_in(race_known, race_nknown, fd))
					n++;
			}
			if (n > 0)
				_exit(100 + (n < 100 ? n : 99));
			execl("/bin/true", "true", (char *) NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			break;
		if (WIFEXITED(st) && WEXITSTATUS(st) > 100 && WEXITSTATUS(st) != 127)
			(*leaked)++;
	}
	return NULL;
}

/*
 * Connect to "url" and disconnect again and again while race_fork_exec
 * runs: for "ms" and at most "max" times, but at least "min" times, however
 * long a busy machine makes them take (within a minute); "what" names what
 * may leak, for the message.  0 when no child inherited anything, else 1
 * with tap_why set.
 */
static int	__attribute__((unused))
cloexec_race(const char *url, int any_fd, long ms, int max, int min, const char *what)
{
	pthread_t	th;
	int			all[256],
				nall,
				leaked = 0,
				connects = 0,
				failed = 0;
	long long	t0;

	race_any_fd = any_fd;
	race_nknown = 0;
	nall = list_fds(all, 256);
	for (int i = 0; i < nall; i++)
		if (!(fcntl(all[i], F_GETFD) & FD_CLOEXEC))
			race_known[race_nknown++] = all[i];
	race_stop = 0;
	if (pthread_create(&th, NULL, race_fork_exec, &leaked) != 0)
	{
		snprintf(tap_why, sizeof(tap_why), "pthread_create failed");
		return 1;
	}
	t0 = ms_now();
	while ((connects < min || (ms_now() - t0 < ms && connects < max)) &&
		   ms_now() - t0 < 60000 && leaked == 0 && !failed)
	{
		fence_ctx  *a = fence_connect(url);

		if (a == NULL || a->err)
		{
			snprintf(tap_why, sizeof(tap_why), "connect: %s", a ? a->errstr : "out of memory");
			failed = 1;
		}
		fence_free(a);
		connects++;
	}
	race_stop = 1;
	pthread_join(th, NULL);
	if (failed)
		return 1;
	if (leaked > 0)
	{
		snprintf(tap_why, sizeof(tap_why), "%d exec'd children inherited %s (%d connects)",
				 leaked, what, connects);
		return 1;
	}
	if (connects < min)
	{
		snprintf(tap_why, sizeof(tap_why), "only %d connects in %lld ms", connects, ms_now() - t0);
		return 1;
	}
	return 0;
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
	const char *name;			/* if set: fence_set_owner_name */
	char		owner[160];		/* its owner id, once acquired */
} waiter;

static void *
waiter_main(void *arg)
{
	waiter	   *w = arg;
	fence_ctx  *c = fence_connect(w->url);
	fence_lease *l = NULL;

	if (c == NULL || c->err ||
		(w->min_replicas > 0 && fence_set_min_replicas(c, w->min_replicas, 100) != FENCE_OK) ||
		(w->name != NULL && fence_set_owner_name(c, w->name) != FENCE_OK))
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
	snprintf(w->owner, sizeof(w->owner), "%s", fence_lease_owner(l));
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

/*
 * Wait (at most 10 s) until "a" sees "n" live waiters for "resource"
 * (fence_waiters: on every topology, over every transport).
 */
static int	__attribute__((unused))
waiters_queued(fence_ctx *a, const char *resource, size_t n)
{
	long long	t0 = ms_now();

	for (;;)
	{
		char	  **owners = NULL;
		size_t		have = 0;

		if (fence_waiters(a, resource, &owners, &have) == FENCE_OK)
			fence_waiters_free(owners, have);
		if (have >= n)
			return 1;
		if (ms_now() - t0 > 10000)
			return 0;
		sleep_ms(2);
	}
}

/*
 * The hand-over every transport and topology makes at once: "a" holds "l"
 * (the lease of "w"'s resource); waiter "w" (filled in, not started)
 * takes a place in the queue, and the release hands it the lease, with a
 * higher token, within "within_ms" (far sooner than a waiter's own next
 * look).  0, or 1 with tap_why set; "w" is joined either way.
 */
static int	__attribute__((unused))
handed_over(fence_ctx *a, fence_lease *l, waiter *w, long long within_ms)
{
	long long	released = 0;
	int			bad = 1;

	if (waiter_start(w) != 0)
	{
		snprintf(tap_why, sizeof(tap_why), "pthread_create failed");
		return 1;
	}
	if (!waiters_queued(a, w->resource, 1))
		snprintf(tap_why, sizeof(tap_why), "%.200s: no waiter in the queue after 10 s", w->url);
	else if ((released = ms_now()), fence_release(a, l) != FENCE_OK)
		snprintf(tap_why, sizeof(tap_why), "%.200s: release: %.200s", w->url, a->errstr);
	else
		bad = 0;
	waiter_join(w);
	if (bad)
		return 1;
	if (w->token <= fence_lease_token(l) || w->got_ms - released > within_ms)
	{
		snprintf(tap_why, sizeof(tap_why),
				 "%.200s: the waiter got token %lld %lld ms after the release of token %lld (%.200s)",
				 w->url, w->token, w->got_ms - released, fence_lease_token(l), w->errstr);
		return 1;
	}
	return 0;
}

/*
 * What every transport and topology keeps from a child the application
 * execs: on a context of "url", a lease and its heartbeat; "more" (if set)
 * adds what else the test opens (a connection the server drops, so that
 * it is opened again; libpq's); two extends (the first may find the
 * connection gone).  Every descriptor opened since (the sockets, or with
 * "any_fd" every kind: the files TLS reads) closes on exec, and at least
 * "min_sockets" sockets are new.  0, or 1 with tap_why set.
 */
static int	__attribute__((unused))
lease_fds_cloexec(const char *url, int any_fd, void (*more) (void), int min_sockets)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	int			before[256],
				after[256],
				nb,
				na,
				fresh = 0,
				rc = 1;

	nb = any_fd ? list_fds(before, 256) : list_sockets(before, 256);
	a = fence_connect(url);
	CHECKC(a->err == 0, a);
	l = fence_acquire(a, R("cloexec"), 5000);
	CHECKC(l != NULL, a);
	CHECKC(fence_heartbeat_start(a, l, NULL, NULL) == FENCE_OK, a);
	if (more != NULL)
		more();
	(void) fence_extend(a, l, 5000);
	CHECKC(fence_extend(a, l, 5000) == FENCE_OK, a);
	na = any_fd ? list_fds(after, 256) : list_sockets(after, 256);
	for (int i = 0; i < na; i++)
	{
		if (!fd_in(before, nb, after[i]) && !(fcntl(after[i], F_GETFD) & FD_CLOEXEC))
		{
			snprintf(tap_why, sizeof(tap_why), "%.200s: %s %d is inherited across exec",
					 url, any_fd ? "descriptor" : "socket", after[i]);
			goto fail;
		}
	}
	na = list_sockets(after, 256);
	for (int i = 0; i < na; i++)
		fresh += !fd_in(before, nb, after[i]);
	CHECK(fresh >= min_sockets);
	fence_heartbeat_stop(l);
	if (fence_release(a, l) == FENCE_OK)
		rc = 0;
	else
		snprintf(tap_why, sizeof(tap_why), "%.200s: release: %.200s", url, a->errstr);
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

#endif							/* FENCE_TESTLIB_H */
