/*
 * client/cli/sets.c
 *	  -R RESOURCE, given once or more: acquire, release and extend of a set
 *	  of leases (a transfer holds both accounts'), and the usage rules of
 *	  -R for every verb.  run takes its set in run.c, what its command
 *	  carries in carry.c.
 *
 * The leases of a set share one owner id (lease_set.c), so release and
 * extend take the set's resources with -R and that one OWNER:
 *
 *	 eval "$(fence acquire -R acct:1 -R acct:2)"
 *	 fence release -R acct:1 -R acct:2 "$FENCE_OWNER_1"
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

/* A set as acquire prints it: numbered shell assignments, or JSON. */
static void
print_set(const options *o, fence_leases *set, const char *tokens)
{
	size_t		i,
				n = fence_leases_count(set);
	char		name[40],
				value[24];

	if (o->json)
	{
		printf("{\"tokens\":");
		json_string(stdout, tokens);
		printf(",\"leases\":[");
		for (i = 0; i < n; i++)
		{
			fence_lease *l = fence_leases_member(set, i);

			printf("%s{\"resource\":", i ? "," : "");
			json_string(stdout, fence_lease_resource(l));
			printf(",\"token\":%lld,\"owner\":", fence_lease_token(l));
			json_string(stdout, fence_lease_owner(l));
			printf(",\"ttl_ms\":%lld}", fence_lease_ttl(l));
		}
		printf("]}\n");
		return;
	}
	shell_assign("FENCE_TOKENS", tokens);
	snprintf(value, sizeof(value), "%zu", n);
	shell_assign("FENCE_COUNT", value);
	for (i = 0; i < n; i++)
	{
		fence_lease *l = fence_leases_member(set, i);

		snprintf(name, sizeof(name), "FENCE_RESOURCE_%zu", i + 1);
		shell_assign(name, fence_lease_resource(l));
		snprintf(name, sizeof(name), "FENCE_TOKEN_%zu", i + 1);
		snprintf(value, sizeof(value), "%lld", fence_lease_token(l));
		shell_assign(name, value);
		snprintf(name, sizeof(name), "FENCE_OWNER_%zu", i + 1);
		shell_assign(name, fence_lease_owner(l));
	}
	if (n == 1)
		print_lease(o, fence_leases_member(set, 0));
}

/* Nobody learnt the owner: nobody could release the set.  Exit "code". */
static int
give_back_status(fence_ctx *ctx, fence_leases *set, int code)
{
	if (fence_leases_release(ctx, set) != FENCE_OK)
		note("warning: %s", ctx->errstr);
	fence_leases_free(set);
	return code;
}

int
cmd_acquire_set(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	fence_leases *set;
	stop_guard	g;
	struct timespec now = {0, 0};
	char	   *tokens;
	int			code = 0,
				sig;

	(void) argc;
	(void) argv;
	if ((code = name_owner(ctx, o, NULL)) != 0)
		return code;
	signal(SIGPIPE, SIG_IGN);
	set = take_set(ctx, o, o->resources, (size_t) o->nresources, NULL, &code, &g);
	if (g.sig != 0)
		return give_back_set(ctx, set, NULL, g.sig);
	if (set == NULL)
		return code;
	if ((tokens = fence_leases_tokens(set)) == NULL)
	{
		fprintf(stderr, "%s: out of memory; giving the leases back\n", progname);
		return give_back_status(ctx, set, EXIT_FAIL);
	}
	print_set(o, set, tokens);
	free(tokens);
	if (fflush(stdout) != 0 || ferror(stdout))
	{
		fprintf(stderr, "%s: could not write the leases: %s; giving them back\n",
				progname, strerror(errno));
		return give_back_status(ctx, set, EXIT_IOERR);
	}
	if ((sig = sigtimedwait(&g.set, NULL, &now)) > 0)
		return give_back_set(ctx, set, NULL, sig);
	pthread_sigmask(SIG_SETMASK, &g.old, NULL);
	fence_leases_free(set);		/* the locks stay in Redis until their TTL */
	return 0;
}

/*
 * Give back every lease of the set held by OWNER (all are tried, last
 * first); exit 76 when one was not held by it.
 */
int
cmd_release_set(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	int			i,
				code = 0;

	(void) argc;
	for (i = o->nresources; i-- > 0;)
		if (fence_release_owner(ctx, o->resources[i], argv[0]) != FENCE_OK)
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
cmd_extend_set(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	int			i;

	(void) argc;
	for (i = 0; i < o->nresources; i++)
		if (fence_extend_owner(ctx, o->resources[i], argv[0], o->ttl_ms) != FENCE_OK)
			return fail(ctx);
	if (o->json)
		printf("{\"extended\":true,\"ttl_ms\":%lld}\n", o->ttl_ms);
	return 0;
}
