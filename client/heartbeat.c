/*
 * client/heartbeat.c
 *	  The heartbeat: a thread that keeps a lease alive and notices when it
 *	  is gone.
 *
 * ttl/3 after the last successful acquire or extend it sends a
 * compare-and-PEXPIRE on a Redis connection of its own (so it never waits
 * behind the application's commands), through fence_lease_renew, which
 * bounds every call by the lease's local deadline.  The lease is:
 *
 *	 HELD     while extends succeed;
 *	 SUSPECT  while Redis cannot be reached but the local deadline has not
 *	          passed: fenced SQL is refused until an extend succeeds again;
 *	 LOST     when the compare fails (someone else holds the lock, or it
 *	          expired) or the local deadline passes without a successful
 *	          extend.  Lost is final, and the callback runs once.
 *
 * All waiting is on CLOCK_MONOTONIC (the condition variable is created with
 * that clock), so a jump of the wall clock changes nothing.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/store.h"

static void *
heartbeat_main(void *arg)
{
	fence_lease *l = arg;
	fence_ctx  *hc = l->hb_ctx;
	int			lost = 0;
	int64_t		retry = 0;		/* after a failed extend: try again then */

	pthread_mutex_lock(&l->mu);
	for (;;)
	{
		int64_t		now = fence_now_ns();
		int64_t		interval = l->ttl_ms * 1000000 / 3;
		int64_t		next;
		long long	ttl;
		int			rc;

		if (l->hb_stop)
			break;
		if (l->state == FENCE_LEASE_LOST || now >= l->deadline_ns)
		{
			l->state = FENCE_LEASE_LOST;
			lost = 1;
			break;
		}
		/* ttl/3 after the last renewal, whoever made it (or a retry) */
		next = l->renewed_ns + interval;
		if (retry > next)
			next = retry;
		if (now < next || l->extending)
		{
			/* woken early when an extend ends or on stop */
			fence_lease_wait(l, next < l->deadline_ns && !l->extending ? next : l->deadline_ns);
			continue;
		}

		ttl = l->ttl_ms;
		pthread_mutex_unlock(&l->mu);
		rc = fence_lease_renew(hc, l, ttl);
		pthread_mutex_lock(&l->mu);
		if (rc == 1)
			retry = 0;
		else if (rc == 0)
		{
			lost = 1;
			break;
		}
		else					/* Redis unreachable: suspect, try again soon */
			retry = fence_now_ns() + (interval / 4 > 10000000 ? interval / 4 : 10000000);
	}
	pthread_mutex_unlock(&l->mu);
	if (lost && l->lost_cb != NULL)
		l->lost_cb(l, l->lost_arg);
	return NULL;
}

/*
 * Start the heartbeat of "lease".  "cb" (may be NULL) is called from the
 * heartbeat thread when the lease is lost; it must not stop the heartbeat
 * or free the lease.
 */
int
fence_heartbeat_start(fence_ctx *ctx, fence_lease *l, fence_lost_fn cb, void *arg)
{
	long		interval_ms;
	sigset_t	all,
				old;
	int			rc;

	fence_clear_error(ctx);
	if (l->hb_running)
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "heartbeat already running");
		return FENCE_ERR;
	}
	if (fence_lease_state(l) == FENCE_LEASE_LOST)
	{
		fence_set_error(ctx, FENCE_ERR_LOST, "lease on \"%s\" is lost", l->resource);
		return FENCE_ERR;
	}
	if (l->ttl_ms < 3)
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "TTL too short for a heartbeat");
		return FENCE_ERR;
	}
	/* Each extend must give up in time to check the deadline. */
	interval_ms = (long) (l->ttl_ms / 3);
	l->hb_ctx = fence_ctx_clone(ctx, interval_ms < ctx->conn->command_ms ? interval_ms : ctx->conn->command_ms);
	if (l->hb_ctx == NULL)
	{
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
		return FENCE_ERR;
	}
	if (l->hb_ctx->conn->connect_ms > interval_ms)
		l->hb_ctx->conn->connect_ms = interval_ms;

	/*
	 * Connect now, before the application forks anything; an unreachable
	 * Redis only makes the lease suspect later.
	 */
	pthread_mutex_lock(&l->mu);
	fence_conn_set_deadline(l->hb_ctx, l->deadline_ns);
	pthread_mutex_unlock(&l->mu);
	(void) fence_store_connect(l->hb_ctx);
	fence_conn_set_deadline(l->hb_ctx, 0);

	l->lost_cb = cb;
	l->lost_arg = arg;
	l->hb_stop = 0;

	/* Signals belong to the application's threads, not to this one. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&l->hb_thread, NULL, heartbeat_main, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
	{
		fence_set_error(ctx, FENCE_ERR_OOM, "could not start heartbeat thread: %s", strerror(rc));
		fence_free(l->hb_ctx);
		l->hb_ctx = NULL;
		return FENCE_ERR;
	}
	l->hb_running = 1;
	return FENCE_OK;
}

/* Stop the heartbeat (if running) and wait for its thread to end. */
void
fence_heartbeat_stop(fence_lease *l)
{
	if (!l->hb_running)
		return;
	pthread_mutex_lock(&l->mu);
	l->hb_stop = 1;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	if (pthread_equal(pthread_self(), l->hb_thread))
		pthread_detach(l->hb_thread);	/* misuse from the callback */
	else
		pthread_join(l->hb_thread, NULL);
	l->hb_running = 0;
	fence_free(l->hb_ctx);
	l->hb_ctx = NULL;
}
