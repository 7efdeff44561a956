/*
 * client/cli/exec.c
 *	  fence exec: take the lease (one RESOURCE is a set of one; -R, a set),
 *	  run one fenced SQL statement under its tokens (libfence's
 *	  fence_leases_exec, whose fence.advance is the announce: no separate
 *	  one before it; the heartbeat renews the leases meanwhile), give the
 *	  leases back.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/*
 * exec: a signal during the statement cancels it (PQcancel is safe in a
 * signal handler), so that the lease is given back and fence exits 128+N
 * rather than leave the lock behind.
 */
static PGcancel *volatile exec_cancel;
static volatile sig_atomic_t exec_signal;

static void
on_exec_signal(int sig)
{
	int			saved = errno;
	char		errbuf[256];

	if (exec_signal == 0)
		exec_signal = sig;
	if (exec_cancel != NULL)
		(void) PQcancel(exec_cancel, errbuf, sizeof(errbuf));
	errno = saved;
}

int
cmd_exec(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	fence_leases *set;
	fence_lease *l;
	int			first = o->nresources > 0 ? 0 : 1;	/* the SQL */
	PGconn	   *pg = NULL;
	PGresult   *res;
	stop_guard	g;
	struct sigaction sa;
	int			code = 0,
				i;

	if (o->pg == NULL)
		return usage_error("exec needs --pg CONNINFO%s", "");
	if (argc < first + 1)
		return usage_error("exec needs RESOURCE and SQL%s", "");
	/* named for the script that asked for the statement */
	if ((code = name_owner(ctx, o, NULL)) != 0)
		return code;
	/* a closed pipe must not kill fence before it gives the lease back */
	signal(SIGPIPE, SIG_IGN);
	/* one RESOURCE is a set of one; -R, a set */
	set = take_set(ctx, o, first ? (const char *const *) argv : o->resources,
				   first ? 1 : (size_t) o->nresources, &pg, 0, &code, &g);
	if (g.sig != 0)
		return give_back_on_signal(ctx, set, pg, g.sig);
	if (set == NULL)
		return code;
	l = fence_leases_member(set, 0);

	/* From here a signal cancels the statement; the lease is given back. */
	exec_cancel = PQgetCancel(pg);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_exec_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < NFORWARDED; i++)
		if (sigismember(&g.set, forwarded[i]))
			sigaction(forwarded[i], &sa, NULL);
	pthread_sigmask(SIG_SETMASK, &g.old, NULL);

	/* A long statement must not outlive the lease unnoticed. */
	if (fence_leases_heartbeat_start(ctx, set, NULL, NULL) != FENCE_OK)
	{
		code = fail(ctx);
		goto done;
	}
	/* a signal while the heartbeat started: there is nothing to cancel yet */
	if (exec_signal != 0)
	{
		code = 128 + exec_signal;
		goto done;
	}
	res = fence_leases_exec(ctx, set, pg, argv[first], argc - first - 1,
							(const char *const *) argv + first + 1);
	if (res == NULL)
	{
		code = exec_signal != 0 ? 128 + exec_signal : pg_fail(ctx, pg);
		goto done;
	}
	print_result(o, res, fence_lease_token(l));
	PQclear(res);
	if (fflush(stdout) != 0 || ferror(stdout))
	{
		fprintf(stderr, "%s: could not write the result: %s\n", progname, strerror(errno));
		code = EXIT_IOERR;
	}
done:
	/* the handler must not use the cancel object once it is freed */
	pthread_sigmask(SIG_BLOCK, &g.set, NULL);
	PQfreeCancel(exec_cancel);
	exec_cancel = NULL;
	if (fence_leases_release(ctx, set) != FENCE_OK && code == 0)
		note("warning: %s", ctx->errstr);
	fence_leases_free(set);
	PQfinish(pg);
	return code;
}
