/*
 * client/cli/durations.c
 *	  Durations on fence's command line: always with their unit.
 *
 * Until 0.3.0 a bare number was milliseconds, so "--ttl 10" was a lease of
 * 10 ms that was lost before the command started (exit 76), and nothing
 * said why.  Now a duration says its unit (250ms, 10s, 2m, 1h) and a bare
 * number is refused with the spellings that were probably meant.  Only 0
 * needs none: it is the same in every unit.  libfence's own parser
 * (fence_parse_duration) still reads a bare number as milliseconds, for
 * the programs that use it.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/*
 * Read the duration "s" given to option "what" into "*ms"; "inf" (waiting
 * for ever) only when "inf_ms" is not 0, as that value.  On failure the
 * message goes into "errbuf" and -1 is returned.
 */
int
parse_duration_arg(const char *what, const char *s, long long *ms, long long inf_ms,
				   char *errbuf, size_t errlen)
{
	char		err[200];

	if (inf_ms != 0 && (strcmp(s, "inf") == 0 || strcmp(s, "infinity") == 0))
	{
		*ms = inf_ms;
		return 0;
	}
	if (*s != '\0' && strspn(s, "0123456789") == strlen(s) && strspn(s, "0") != strlen(s))
	{
		/* what the number meant before, in the largest unit that fits */
		long long	n = 0;

		if (strlen(s) > 15 || fence_parse_duration(s, &n, err, sizeof(err)) != FENCE_OK)
			snprintf(errbuf, errlen, "%s %s: a duration needs its unit (ms, s, m or h)", what, s);
		else if (n % 1000 == 0)
			snprintf(errbuf, errlen, "%s %s: say %llds or %sms (a duration needs its unit)",
					 what, s, n / 1000, s);
		else
			snprintf(errbuf, errlen, "%s %s: say %ss or %sms (a duration needs its unit)",
					 what, s, s, s);
		return -1;
	}
	if (fence_parse_duration(s, ms, err, sizeof(err)) != FENCE_OK)
	{
		if (strstr(err, "too large") != NULL)
			snprintf(errbuf, errlen, "%s: %s", what, err);
		else
			snprintf(errbuf, errlen, "%s: invalid duration \"%s\": expected a whole number and its unit (250ms, 10s, 2m, 1h)%s",
					 what, s, inf_ms != 0 ? ", or inf" : "");
		return -1;
	}
	return 0;
}
