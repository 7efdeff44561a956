/*
 * client/cli/acquire.c
 *	  fence acquire, release and extend: leases held across commands of a
 *	  shell script, by their owner string: one family of verbs in one file,
 *	  as git keeps log, show and whatchanged together.  One RESOURCE is a
 *	  set of one; -R, given once or more, names a set (sets.c), whose
 *	  leases share one owner id.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/*
 * Print what was taken: for one RESOURCE its FENCE_RESOURCE, FENCE_TOKEN
 * and FENCE_OWNER (or JSON); for -R the set's numbered ones too.
 * 0, or the exit status once the leases were given back.
 */
static int
print_taken(fence_ctx *ctx, const options *o, fence_leases *set)
{
	char	   *tokens;

	if (o->nresources == 0)
		print_lease(o, fence_leases_member(set, 0));
	else if ((tokens = fence_leases_tokens(set)) == NULL)
	{
		fprintf(stderr, "%s: out of memory; giving the leases back\n", progname);
		release_and_close(ctx, set, NULL);	/* nobody could release it */
		return EXIT_FAIL;
	}
	else
	{
		print_set(o, set, tokens);
		free(tokens);
	}
	if (fflush(stdout) != 0 || ferror(stdout))
	{
		fprintf(stderr, "%s: could not write the %s: %s; giving %s back\n", progname,
				o->nresources == 0 ? "lease" : "leases", strerror(errno),
				o->nresources == 0 ? "it" : "them");
		/* nobody learnt the owner: nobody could release it */
		release_and_close(ctx, set, NULL);
		return EXIT_IOERR;
	}
	return 0;
}

int
cmd_acquire(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	fence_leases *set;
	stop_guard	g;
	struct timespec now = {0, 0};
	int			code = 0,
				sig;

	if (o->nresources == 0 && argc != 1)
		return usage_error("acquire needs exactly one argument: RESOURCE%s", "");
	/* the lease is the script's that started fence: its name and pid */
	if ((code = name_owner(ctx, o, NULL)) != 0)
		return code;
	/* a closed pipe must not kill fence with the lock taken and unsaid */
	signal(SIGPIPE, SIG_IGN);
	set = take_set(ctx, o, o->nresources > 0 ? o->resources : (const char *const *) argv,
				   o->nresources > 0 ? (size_t) o->nresources : 1, NULL, 1, &code, &g);
	if (g.sig != 0)
		return give_back_on_signal(ctx, set, NULL, g.sig);
	if (set == NULL)
		return code;
	if ((code = print_taken(ctx, o, set)) != 0)
		return code;
	/* until printed, a signal means "not acquired": exit 128+N */
	if ((sig = sigtimedwait(&g.set, NULL, &now)) > 0)
		return give_back_on_signal(ctx, set, NULL, sig);
	pthread_sigmask(SIG_SETMASK, &g.old, NULL);
	fence_leases_free(set);		/* the locks stay in Redis until their TTL */
	return 0;
}

/*
 * Give back every lease of the set (one RESOURCE, or -R) held by OWNER:
 * all are tried, last first; exit 76 when one was not held by it.
 */
int
cmd_release(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	const char *const *resources = o->nresources > 0 ? o->resources : (const char *const *) argv;
	int			n = o->nresources > 0 ? o->nresources : 1,
				i,
				code = 0;

	if (o->nresources == 0 && argc != 2)
		return usage_error("release needs two arguments: RESOURCE OWNER%s", "");
	for (i = n; i-- > 0;)
		if (fence_release_owner(ctx, resources[i], argv[argc - 1]) != FENCE_OK)
		{
			int			c = fail(ctx);

			if (code == 0)
				code = c;
		}
	if (code == 0 && o->json)
		printf("{\"released\":true}\n");
	return code;
}

/* Extend every lease of the set held by OWNER; the first failure ends it. */
int
cmd_extend(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	const char *const *resources = o->nresources > 0 ? o->resources : (const char *const *) argv;
	int			n = o->nresources > 0 ? o->nresources : 1,
				i;

	if (o->nresources == 0 && argc != 2)
		return usage_error("extend needs two arguments: RESOURCE OWNER%s", "");
	for (i = 0; i < n; i++)
		if (fence_extend_owner(ctx, resources[i], argv[argc - 1], o->ttl_ms) != FENCE_OK)
			return fail(ctx);
	if (o->json)
		printf("{\"extended\":true,\"ttl_ms\":%lld}\n", o->ttl_ms);
	return 0;
}
