/*
 * client/cli/take.c
 *	  Taking a lease for acquire, run and exec: connect to PostgreSQL, take
 *	  the lease, announce its token; guarded against the signals that end
 *	  fence.
 *
 * Signals during the acquire.  Until fence can act on SIGINT, SIGTERM,
 * SIGHUP or SIGQUIT, one of them would end it by default, and if the lock
 * was taken by then (or the script taking it was on its way) nobody gives
 * it back: it stays in Redis until its TTL, and "fence acquire" never says
 * whose it is.  So they are blocked from before the acquire, and the
 * acquire and announce run in a thread while the main thread waits for
 * either to end: the first signal is noted (the lease is given back once
 * the acquire returns, and fence exits 128+N), a second one ends fence at
 * once, as asked, whatever that strands.  Signals ignored when fence
 * started stay ignored.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/signalfd.h>
#endif

#include "cli.h"

/*
 * Take the leases of "resources" (one RESOURCE is a set of one), and
 * announce them when --pg was given (then "*pgp" is the open connection),
 * unless "announce" is 0: the caller's first statement is fenced, and
 * announces as it runs (fence_exec).  On failure nothing is held and the
 * exit status is returned in "*code".
 */
static fence_leases *
acquire_and_announce(fence_ctx *ctx, const options *o, const char *const *resources,
					 size_t n, PGconn **pgp, int announce, int *code)
{
	fence_leases *set;
	PGconn	   *pg = NULL;

	/* Connect first: no point holding a lease PostgreSQL cannot hear of. */
	if (o->pg != NULL && (pg = pg_connect_writer(o->pg, code)) == NULL)
		return NULL;
	set = fence_acquire_many_wait(ctx, resources, n, o->ttl_ms, o->wait_ms);
	if (set == NULL)
	{
		*code = fail(ctx);
		pq_finish(pg);
		return NULL;
	}
	/* a lease that ran out during the announce fails it: exit 76 */
	if (pg != NULL && announce && fence_leases_announce(ctx, set, pg) != FENCE_OK)
	{
		*code = pg_fail(ctx, pg);
		(void) fence_leases_release(ctx, set);
		fence_leases_free(set);
		pq_finish(pg);
		return NULL;
	}
	for (size_t i = 0; i < fence_leases_count(set); i++)
	{
		fence_lease *l = fence_leases_member(set, i);

		trace("took the lease on \"%s\": token %lld, owner %s, TTL %lld ms%s",
			  fence_lease_resource(l), fence_lease_token(l), fence_lease_owner(l),
			  fence_lease_ttl(l), pg != NULL && announce ? ", announced to PostgreSQL" : "");
	}
	if (pgp != NULL)
		*pgp = pg;
	else
		pq_finish(pg);
	return set;
}

typedef struct acquire_job
{
	fence_ctx  *ctx;
	const options *o;
	const char *const *resources;
	size_t		nresources;
	PGconn	  **pgp;
	int			announce;
	int			code;
	fence_leases *set;
	int			done_fd;		/* written to once done, if >= 0 */
} acquire_job;

static void *
acquire_thread(void *arg)
{
	acquire_job *j = arg;
	char		c = 1;

	j->set = acquire_and_announce(j->ctx, j->o, j->resources, j->nresources, j->pgp,
							  j->announce, &j->code);
	if (j->done_fd >= 0 && write(j->done_fd, &c, 1) != 1)
		j->done_fd = -1;		/* cannot happen with an empty pipe */
	return NULL;
}

#ifdef __linux__
/* Take the signals that came; "waiting": the acquire is still going on. */
static void
take_signals(int sfd, stop_guard *g, int waiting)
{
	struct signalfd_siginfo si;

	while (read(sfd, &si, sizeof(si)) == (ssize_t) sizeof(si))
	{
		int			sig = (int) si.ssi_signo;

		if (g->sig == 0)
		{
			g->sig = sig;
			if (waiting)
			{
				/* a --wait of hours must not keep the user waiting */
				fence_cancel_wait(g->ctx);
				note("%s: the lease will be given back once the acquire returns"
					 " (again to stop at once)", strsignal(sig));
			}
		}
		else if (waiting)
		{
			/* asked twice: now */
			signal(sig, SIG_DFL);
			pthread_sigmask(SIG_SETMASK, &g->old, NULL);
			raise(sig);
		}
	}
}
#endif

/*
 * acquire_and_announce, guarded against the signals that end fence (see
 * above).  Returns with them blocked, the first that came in g->sig.
 */
static void
take_guarded(acquire_job *j, stop_guard *g)
{
	struct sigaction cur;
	int			i;

	sigemptyset(&g->set);
	for (i = 0; i < NFORWARDED; i++)
		if (sigaction(forwarded[i], NULL, &cur) == 0 && cur.sa_handler != SIG_IGN)
			sigaddset(&g->set, forwarded[i]);
	g->sig = 0;
	g->ctx = j->ctx;
	pthread_sigmask(SIG_BLOCK, &g->set, &g->old);
#ifdef __linux__
	{
		int			done[2] = {-1, -1},
					sfd = -1;
		pthread_t	th;

		if (pipe2(done, O_CLOEXEC) == 0 &&
			(sfd = signalfd(-1, &g->set, SFD_CLOEXEC | SFD_NONBLOCK)) >= 0)
		{
			j->done_fd = done[1];
			if (pthread_create(&th, NULL, acquire_thread, j) == 0)
			{
				for (;;)
				{
					struct pollfd p[2] = {{done[0], POLLIN, 0}, {sfd, POLLIN, 0}};

					if (poll(p, 2, -1) < 0 && errno != EINTR)
						break;	/* pthread_join waits instead */
					if (p[1].revents)
						take_signals(sfd, g, 1);
					if (p[0].revents)
						break;
				}
				pthread_join(th, NULL);
			}
			else
			{
				j->done_fd = -1;
				acquire_thread(j);
			}
			take_signals(sfd, g, 0);
		}
		else
			acquire_thread(j);	/* blocked throughout, acted on after */
		if (sfd >= 0)
			close(sfd);
		if (done[0] >= 0)
		{
			close(done[0]);
			close(done[1]);
		}
	}
#else
	acquire_thread(j);
#endif
	/* one that came since, or without a signalfd */
	if (g->sig == 0)
	{
		struct timespec now = {0, 0};
		int			sig = sigtimedwait(&g->set, NULL, &now);

		if (sig > 0)
			g->sig = sig;
	}
}

/*
 * Take the leases of "resources" ("n" of them, any order: lease_set.c
 * sorts; one RESOURCE is a set of one) and announce them as
 * acquire_and_announce says, guarded against the signals that end fence:
 * NULL on failure, with the exit status in "*code".  Returns with those
 * signals blocked, the first that came in g->sig.
 */
fence_leases *
take_set(fence_ctx *ctx, const options *o, const char *const *resources, size_t n,
		 PGconn **pgp, int announce, int *code, stop_guard *g)
{
	acquire_job j = {ctx, o, resources, n, pgp, announce, 0, NULL, -1};

	take_guarded(&j, g);
	*code = j.code;
	return j.set;
}

/*
 * Give the leases back (a warning when that fails: they run out with their
 * TTL), free them and close "pg"; any of them may be NULL.
 */
void
release_and_close(fence_ctx *ctx, fence_leases *set, PGconn *pg)
{
	if (set != NULL)
	{
		if (fence_leases_release(ctx, set) != FENCE_OK)
			note("warning: %s", ctx->errstr);
		fence_leases_free(set);
	}
	pq_finish(pg);
}

/*
 * A signal came while the leases were taken (or before their owner was
 * printed): give them back; fence exits 128+N.
 */
int
give_back_on_signal(fence_ctx *ctx, fence_leases *set, PGconn *pg, int sig)
{
	release_and_close(ctx, set, pg);
	return 128 + sig;
}
