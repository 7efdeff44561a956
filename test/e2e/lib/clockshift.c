/*
 * test/e2e/lib/clockshift.c
 *	  An LD_PRELOAD library that moves a process's wall clock, and only its
 *	  wall clock, by the number of seconds written in the file named by
 *	  CLOCKSHIFT_FILE (read again at most every 10 ms, so writing the file
 *	  makes the clock jump).
 *
 * topo_quorum.sh jumps the clock of one Redis node with it.  libfaketime does the same
 * for the client in F4, but it cannot run Debian's redis-server: that links
 * jemalloc, whose initialization calls clock_gettime() and
 * pthread_cond_init(), which libfaketime intercepts and answers by
 * initializing itself with dlsym(), which allocates: the process deadlocks
 * in jemalloc's lock (libfaketime issue #130, unresolved).  This library
 * asks the kernel directly (no dlsym, no allocation, no lock), so it
 * cannot recurse; CLOCK_MONOTONIC is left alone, as libfaketime's
 * FAKETIME_DONT_FAKE_MONOTONIC=1 would.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long shift_s;		/* seconds added to the wall clock */
static long long checked_ns;	/* monotonic time the file was last read */

static long long
monotonic_ns(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (long long) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Read the shift from the file when it was last read 10 ms ago or more. */
static long long
shift(void)
{
	long long	now = monotonic_ns();
	const char *path;
	char		buf[32];
	ssize_t		n;
	int			fd;

	if (__atomic_load_n(&checked_ns, __ATOMIC_RELAXED) != 0 &&
		now - __atomic_load_n(&checked_ns, __ATOMIC_RELAXED) < 10000000)
		return __atomic_load_n(&shift_s, __ATOMIC_RELAXED);
	__atomic_store_n(&checked_ns, now, __ATOMIC_RELAXED);
	path = getenv("CLOCKSHIFT_FILE");
	if (path == NULL || (fd = (int) syscall(SYS_openat, AT_FDCWD, path, O_RDONLY)) < 0)
		return __atomic_load_n(&shift_s, __ATOMIC_RELAXED);
	n = (ssize_t) syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	syscall(SYS_close, fd);
	if (n > 0)
	{
		buf[n] = '\0';
		__atomic_store_n(&shift_s, strtoll(buf, NULL, 10), __ATOMIC_RELAXED);
	}
	return __atomic_load_n(&shift_s, __ATOMIC_RELAXED);
}

int
clock_gettime(clockid_t id, struct timespec *ts)
{
	int			rc = (int) syscall(SYS_clock_gettime, id, ts);

	if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
		ts->tv_sec += shift();
	return rc;
}

int
gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;

	(void) tz;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	/* glibc declares "tv" non-null */
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t
time(time_t *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (t != NULL)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
