/*
 * client/cli/hold.c
 *	  fence acquire --hold: take a lease, say so, and keep it alive until
 *	  told to stop.
 *
 * "eval $(fence acquire R)" hands a lease to a shell, but nobody renews
 * it: it lapses after its TTL whatever the script still does.  With
 * --hold, fence prints the same FENCE_* lines (or JSON), flushes them,
 * and stays: its heartbeat renews the lease every TTL/3 until SIGINT,
 * SIGTERM, SIGHUP or SIGQUIT, then it gives the lease back and exits 0.
 * If the lease is lost meanwhile (Redis unreachable past the lease's
 * deadline, the lock taken over), it exits 76 at once, so that whoever
 * waits for it learns that the lease is gone:
 *
 *	  fence acquire R --hold >lease.env &
 *	  ... wait until lease.env holds FENCE_OWNER, source it, work ...
 *	  kill $!; wait $!
 *
 * The lease-lost callback runs on the heartbeat's thread; it only sends
 * SIGUSR1 to the main thread, which waits for that and for the signals
 * that end fence, all blocked, with sigtimedwait.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static pthread_t hold_main;

static void
on_hold_lost(fence_leases *set, fence_lease *lease, void *arg)
{
	(void) set;
	(void) lease;
	(void) arg;
	pthread_kill(hold_main, SIGUSR1);
}

int
cmd_hold(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	fence_leases *set;
	fence_lease *l;
	stop_guard	g;
	sigset_t	waitset;
	char		msg[FENCE_ERRSTR_LEN + 64];
	int			code = 0,
				sig;

	if (argc != 1)
		return usage_error("acquire needs exactly one argument: RESOURCE%s", "");
	if ((code = name_owner(ctx, o, NULL)) != 0)
		return code;
	signal(SIGPIPE, SIG_IGN);
	/* one RESOURCE, a set of one (main.c refuses -R with --hold) */
	set = take_set(ctx, o, (const char *const *) argv, 1, NULL, 1, &code, &g);
	if (g.sig != 0)
		return give_back_on_signal(ctx, set, NULL, g.sig);
	if (set == NULL)
		return code;
	l = fence_leases_member(set, 0);
	print_lease(o, l);
	if (fflush(stdout) != 0 || ferror(stdout))
	{
		snprintf(msg, sizeof(msg), "could not write the lease: %s; giving it back", strerror(errno));
		release_and_close(ctx, set, NULL);
		return report_error(EXIT_IOERR, msg, NULL);
	}

	/* blocked in every thread, the heartbeat's too: sigtimedwait takes them */
	hold_main = pthread_self();
	waitset = g.set;
	sigaddset(&waitset, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &waitset, NULL);
	if (fence_leases_heartbeat_start(ctx, set, on_hold_lost, NULL) != FENCE_OK)
	{
		code = fail(ctx);
		release_and_close(ctx, set, NULL);
		return code;
	}
	trace("holding the lease on \"%s\": renewed every %lld ms until SIGINT or SIGTERM",
		  fence_lease_resource(l), fence_lease_ttl(l) / 3);
	for (;;)
	{
		long long	every = fence_lease_ttl(l) / 3;
		struct timespec ts = {every / 1000, (every % 1000) * 1000000};

		sig = sigtimedwait(&waitset, NULL, &ts);
		if (sig > 0)
			break;
		if (errno == EAGAIN)
			trace("lease on \"%s\" %s", fence_lease_resource(l),
				  fence_lease_state(l) == FENCE_LEASE_HELD ? "renewed" :
				  "suspect: Redis does not answer");
	}
	fence_leases_heartbeat_stop(set);
	if (sig == SIGUSR1 || fence_leases_state(set) == FENCE_LEASE_LOST)
	{
		snprintf(msg, sizeof(msg), "lease on \"%s\" lost", fence_lease_resource(l));
		fence_leases_free(set);
		return report_error(EXIT_LOST, msg, NULL);
	}
	trace("%s: giving the lease on \"%s\" back", strsignal(sig), fence_lease_resource(l));
	if (fence_leases_release(ctx, set) != FENCE_OK)
	{
		code = fail(ctx);
		fence_leases_free(set);
		return code;
	}
	fence_leases_free(set);
	return 0;
}
