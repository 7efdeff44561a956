/*
 * client/duration.c
 *	  Durations as people write them on a command line: "250ms", "10s",
 *	  "2m", "1h", or a plain number of milliseconds.
 *
 * Only whole numbers are accepted, and the result must fit comfortably in
 * a long long of milliseconds; anything else is an error rather than a
 * guess, because a TTL silently read as 0 or as a huge value would be a
 * lease that never holds or never ends.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "fence_int.h"

/* About 292 years: far beyond any lease, far below overflow in ns. */
#define FENCE_MAX_DURATION_MS (INT64_C(9223372036854) - 1)

int
fence_parse_duration(const char *s, long long *ms, char *errbuf, size_t errlen)
{
	const char *p = s;
	long long	v = 0;
	long long	mult;

	if (s == NULL || *s == '\0')
	{
		snprintf(errbuf, errlen, "empty duration");
		return FENCE_ERR;
	}
	if (!isdigit((unsigned char) *p))
		goto bad;
	while (isdigit((unsigned char) *p))
	{
		if (v > (FENCE_MAX_DURATION_MS - (*p - '0')) / 10)
		{
			snprintf(errbuf, errlen, "duration \"%s\" is too large", s);
			return FENCE_ERR;
		}
		v = v * 10 + (*p - '0');
		p++;
	}
	if (*p == '\0' || strcmp(p, "ms") == 0)
		mult = 1;
	else if (strcmp(p, "s") == 0)
		mult = 1000;
	else if (strcmp(p, "m") == 0)
		mult = 60 * 1000;
	else if (strcmp(p, "h") == 0)
		mult = 3600 * 1000;
	else
		goto bad;
	if (v > FENCE_MAX_DURATION_MS / mult)
	{
		snprintf(errbuf, errlen, "duration \"%s\" is too large", s);
		return FENCE_ERR;
	}
	*ms = v * mult;
	return FENCE_OK;

bad:
	snprintf(errbuf, errlen,
			 "invalid duration \"%s\": expected a whole number with unit ms, s, m or h (plain number = ms)", s);
	return FENCE_ERR;
}
