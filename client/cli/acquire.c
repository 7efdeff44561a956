/*
 * client/cli/acquire.c
 *	  fence acquire, release and extend: a lease held across commands of a
 *	  shell script, by its owner string: one family of verbs in one file,
 *	  as git keeps log, show and whatchanged together.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

int
cmd_acquire(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	fence_lease *l;
	stop_guard	g;
	struct timespec now = {0, 0};
	int			code = 0,
				sig;

	if (o->nresources > 0)
		return cmd_acquire_set(ctx, o, argc, argv);
	if (argc != 1)
		return usage_error("acquire needs exactly one argument: RESOURCE%s", "");
	/* the lease is the script's that started fence: its name and pid */
	if ((code = name_owner(ctx, o, NULL)) != 0)
		return code;
	/* a closed pipe must not kill fence with the lock taken and unsaid */
	signal(SIGPIPE, SIG_IGN);
	l = take_lease(ctx, o, argv[0], NULL, &code, &g);
	if (g.sig != 0)
		return give_back(ctx, l, NULL, g.sig);
	if (l == NULL)
		return code;
	print_lease(o, l);
	if (fflush(stdout) != 0 || ferror(stdout))
	{
		/* nobody learnt the owner: nobody could release it */
		fprintf(stderr, "%s: could not write the lease: %s; giving it back\n",
				progname, strerror(errno));
		if (fence_release(ctx, l) != FENCE_OK)
			note("warning: %s", ctx->errstr);
		fence_lease_free(l);
		return EXIT_IOERR;
	}
	/* until printed, a signal means "not acquired": exit 128+N */
	if ((sig = sigtimedwait(&g.set, NULL, &now)) > 0)
		return give_back(ctx, l, NULL, sig);
	pthread_sigmask(SIG_SETMASK, &g.old, NULL);
	fence_lease_free(l);		/* the lock stays in Redis until its TTL */
	return 0;
}

int
cmd_release(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	if (o->nresources > 0)
		return cmd_release_set(ctx, o, argc, argv);
	if (argc != 2)
		return usage_error("release needs two arguments: RESOURCE OWNER%s", "");
	if (fence_release_owner(ctx, argv[0], argv[1]) != FENCE_OK)
		return fail(ctx);
	if (o->json)
		printf("{\"released\":true}\n");
	return 0;
}

int
cmd_extend(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	if (o->nresources > 0)
		return cmd_extend_set(ctx, o, argc, argv);
	if (argc != 2)
		return usage_error("extend needs two arguments: RESOURCE OWNER%s", "");
	if (fence_extend_owner(ctx, argv[0], argv[1], o->ttl_ms) != FENCE_OK)
		return fail(ctx);
	if (o->json)
		printf("{\"extended\":true,\"ttl_ms\":%lld}\n", o->ttl_ms);
	return 0;
}
