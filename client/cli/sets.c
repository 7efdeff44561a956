/*
 * client/cli/sets.c
 *	  -R RESOURCE, given once or more: the usage rules of -R for every verb.
 *	  A set is taken by take.c (one RESOURCE is a set of one), acquired,
 *	  released and extended in acquire.c, run in run.c, its statement
 *	  run by libfence (fence_leases_exec) for exec.c.
 *
 * The leases of a set share one owner id (lease_set.c), so release and
 * extend take the set's resources with -R and that one OWNER:
 *
 *	 eval "$(fence acquire -R acct:1 -R acct:2)"
 *	 fence release -R acct:1 -R acct:2 "$FENCE_OWNER_1"
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/*
 * The usage rules of -R for "verb" with "nargs" arguments of its own:
 * 0, or the usage error's exit status (printed).  A positional RESOURCE
 * and -R do not mix.
 */
int
set_usage(const options *o, const char *verb, int nargs)
{
	char		errbuf[256];
	int			i,
				j;

	if (strcmp(verb, "show") == 0 || strcmp(verb, "list") == 0)
		return usage_error("-R is for acquire, release, extend, run and exec, not %s", verb);
	if (strcmp(verb, "exec") == 0 && (nargs < 1 || o->pg == NULL))
		return usage_error("exec -R RESOURCE... needs --pg CONNINFO and SQL%s", "");
	if ((strcmp(verb, "acquire") == 0 && nargs != 0) ||
		((strcmp(verb, "release") == 0 || strcmp(verb, "extend") == 0) && nargs > 1))
		return usage_error("a RESOURCE argument and -R do not mix: give every resource with -R (%s)", verb);
	if ((strcmp(verb, "release") == 0 || strcmp(verb, "extend") == 0) && nargs != 1)
		return usage_error("%s -R RESOURCE... needs one argument: OWNER (the set's, FENCE_OWNER_1)", verb);
	if (strcmp(verb, "run") == 0 && nargs < 1 && o->shell == NULL)
		return usage_error("run -R RESOURCE... needs a command after --%s", "");
	for (i = 0; i < o->nresources; i++)
	{
		if (fence_check_resource(o->resources[i], errbuf, sizeof(errbuf)) != FENCE_OK)
			return usage_error("-R: %s", errbuf);
		for (j = 0; j < i; j++)
			if (strcmp(o->resources[i], o->resources[j]) == 0)
				return usage_error("-R %s is given twice", o->resources[i]);
	}
	return 0;
}
