/*
 * client/clock.c
 *	  Time: the monotonic clock every deadline is counted on, sleeping on
 *	  it, and the margin allowed for clocks that drift apart.
 */
#include <errno.h>
#include <time.h>

#include "fence_int.h"

/*
 * All lease timing uses CLOCK_MONOTONIC: a wall clock that jumps (NTP,
 * an administrator, a VM resume) must never make a lease look longer.
 */
int64_t
fence_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void
fence_sleep_ns(int64_t ns)
{
	struct timespec ts;

	if (ns <= 0)
		return;
	ts.tv_sec = ns / 1000000000;
	ts.tv_nsec = ns % 1000000000;
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/*
 * The margin Redlock uses: 1% of the TTL for the rate difference between
 * clocks, plus 2 ms for the resolution of Redis's expiry.
 */
long long
fence_drift_ms(long long ttl_ms)
{
	return ttl_ms / 100 + 2;
}
