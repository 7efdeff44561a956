/*
 * client/heartbeat.c
 *	  The heartbeat: a thread that keeps a lease alive and notices when it
 *	  is gone.
 *
 * Every ttl/3 it sends a compare-and-PEXPIRE on a Redis connection of its
 * own (so it never waits behind the application's commands).  The lease is:
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

#include "fence_int.h"

static void
wait_until(fence_lease *l, int64_t when_ns)
{
	struct timespec ts;

	ts.tv_sec = when_ns / 1000000000;
	ts.tv_nsec = when_ns % 1000000000;
	pthread_cond_timedwait(&l->cv, &l->mu, &ts);
}

static void *
heartbeat_main(void *arg)
{
	fence_lease *l = arg;
	fence_ctx  *hc = l->hb_ctx;
	int			lost = 0;
	int64_t		interval,
				next;

	pthread_mutex_lock(&l->mu);
	interval = l->ttl_ms * 1000000 / 3;
	next = fence_now_ns() + interval;
	for (;;)
	{
		int64_t		now = fence_now_ns();
		int64_t		t0;
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
		if (now < next)
		{
			wait_until(l, next < l->deadline_ns ? next : l->deadline_ns);
			continue;
		}

		ttl = l->ttl_ms;
		pthread_mutex_unlock(&l->mu);
		t0 = fence_now_ns();
		rc = fence_extend_raw(hc, l->lock_key, l->owner, ttl);
		pthread_mutex_lock(&l->mu);

		now = fence_now_ns();
		if (rc == 1 && l->state != FENCE_LEASE_LOST)
		{
			l->state = FENCE_LEASE_HELD;
			l->deadline_ns = t0 + (ttl - fence_drift_ms(ttl)) * 1000000;
			interval = ttl * 1000000 / 3;
			next = t0 + interval;
		}
		else if (rc == 0)
		{
			l->state = FENCE_LEASE_LOST;
			lost = 1;
			break;
		}
		else
		{
			/* Redis unreachable: suspect, and try again soon. */
			if (l->state == FENCE_LEASE_HELD)
				l->state = FENCE_LEASE_SUSPECT;
			next = now + (interval / 4 > 10000000 ? interval / 4 : 10000000);
		}
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
	/* An unreachable Redis now only makes the lease suspect. */
	(void) fence_store_connect(l->hb_ctx);

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
