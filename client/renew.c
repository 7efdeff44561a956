/*
 * client/renew.c
 *	  A lease's local deadline and its state (HELD, SUSPECT, LOST): the
 *	  one path that extends a lease, for fence_extend and the heartbeat.
 *
 * The deadline is the time of the last successful acquire or extend,
 * taken before the command was sent, plus the TTL, minus the drift margin
 * (fence_drift_ms); after it the lease is lost whatever Redis might still
 * say.  lease.c (the public API) and heartbeat.c (the renewing thread)
 * both stand on this file, so that neither has to call the other to keep
 * a lease.
 */
#include <time.h>

#include "store/store.h"

/*
 * The local deadline after an extend (or acquire) sent at "t0" with
 * "ttl_ms" succeeded.  An extend whose outcome is unknown may still be
 * delivered and run later than this one, and set its own, shorter TTL
 * then (no sooner than "t0", since it runs after this one): the deadline
 * allows for the shortest such TTL, "unsure_ms", for as long as the lease
 * lasts.
 */
int64_t
fence_deadline_after(int64_t t0, long long ttl_ms, long long unsure_ms)
{
	long long	ttl = unsure_ms > 0 && unsure_ms < ttl_ms ? unsure_ms : ttl_ms;

	return t0 + (ttl - fence_drift_ms(ttl)) * 1000000;
}

/* Compare-and-PEXPIRE.  Returns 1 extended, 0 not ours, -1 error. */
int
fence_extend_raw(fence_ctx *ctx, const char *lock_key, const char *owner,
				 long long ttl_ms)
{
	return fence_store_extend(ctx, lock_key, owner, ttl_ms);
}

/*
 * Wait on the lease's condition variable (its mutex held) until "until_ns"
 * at the latest; it is created on CLOCK_MONOTONIC.
 */
void
fence_lease_wait(fence_lease *l, int64_t until_ns)
{
	struct timespec ts;

	ts.tv_sec = until_ns / 1000000000;
	ts.tv_nsec = until_ns % 1000000000;
	pthread_cond_timedwait(&l->cv, &l->mu, &ts);
}

/*
 * Compare-and-PEXPIRE the lease for "ttl_ms" on "ctx", and update its state
 * and local deadline: the one path of fence_extend and of the heartbeat.
 * Returns 1 when extended, 0 when the lease is lost (not ours any more, or
 * the deadline passed), -1 on error; ctx->err says which.
 *
 * Extends of one lease go out one at a time.  Each runs on Redis before the
 * next is sent, so the last answer to arrive belongs to the extend Redis
 * ran last, and the deadline follows the TTL Redis holds.  (Two extends in
 * flight at once, the heartbeat's on its connection and the application's
 * on another, could run in one order and be answered in the other.)
 *
 * No answer is any use after the lease's deadline, so the call is bounded
 * by it: the loss is then declared on time, not whenever a call that
 * started before the deadline gives up.
 */
int
fence_lease_renew(fence_ctx *ctx, fence_lease *l, long long ttl_ms)
{
	int64_t		t0,
				deadline;
	int			rc;

	pthread_mutex_lock(&l->mu);
	while (l->extending && l->state != FENCE_LEASE_LOST && fence_now_ns() < l->deadline_ns)
		fence_lease_wait(l, l->deadline_ns);
	if (l->state == FENCE_LEASE_LOST || fence_now_ns() >= l->deadline_ns)
	{
		l->state = FENCE_LEASE_LOST;
		pthread_mutex_unlock(&l->mu);
		fence_set_error(ctx, FENCE_ERR_LOST, "lease on \"%s\" is lost", l->resource);
		return 0;
	}
	l->extending = 1;
	deadline = l->deadline_ns;
	pthread_mutex_unlock(&l->mu);

	fence_conn_set_deadline(ctx, deadline);
	t0 = fence_op_t0(ctx);
	rc = fence_extend_raw(ctx, l->keys.lock, l->owner, ttl_ms);
	fence_conn_set_deadline(ctx, 0);

	pthread_mutex_lock(&l->mu);
	l->extending = 0;
	pthread_cond_broadcast(&l->cv);
	if (rc == 1 && l->state != FENCE_LEASE_LOST && fence_now_ns() < l->deadline_ns)
	{
		l->state = FENCE_LEASE_HELD;
		l->ttl_ms = ttl_ms;
		l->renewed_ns = t0;
		l->deadline_ns = fence_deadline_after(t0, ttl_ms, l->unsure_ttl_ms);
	}
	else if (rc >= 0)
	{
		/* not ours, or answered too late: lost is final, whatever Redis ran */
		l->state = FENCE_LEASE_LOST;
		rc = 0;
	}
	else if (ctx->err == FENCE_ERR_IO || ctx->err == FENCE_ERR_PROTOCOL)
	{
		/* sent, maybe run, maybe still to run: allow for its TTL from now on */
		if (l->unsure_ttl_ms == 0 || ttl_ms < l->unsure_ttl_ms)
			l->unsure_ttl_ms = ttl_ms;
		if (fence_deadline_after(t0, ttl_ms, 0) < l->deadline_ns)
			l->deadline_ns = fence_deadline_after(t0, ttl_ms, 0);
		if (l->state == FENCE_LEASE_HELD)
			l->state = FENCE_LEASE_SUSPECT;
	}
	pthread_mutex_unlock(&l->mu);
	if (rc == 0)
		fence_set_error(ctx, FENCE_ERR_LOST, "lease on \"%s\" is no longer held by this owner",
						l->resource);
	return rc;
}

/* The lease's state now; a passed local deadline makes it LOST. */
int
fence_lease_state(fence_lease *l)
{
	int			state;

	pthread_mutex_lock(&l->mu);
	if (l->state != FENCE_LEASE_LOST && fence_now_ns() >= l->deadline_ns)
		l->state = FENCE_LEASE_LOST;
	state = l->state;
	pthread_mutex_unlock(&l->mu);
	return state;
}

/* Mark the lease lost for good (a heal found the lock gone). */
void
fence_lease_set_lost(fence_lease *l)
{
	pthread_mutex_lock(&l->mu);
	l->state = FENCE_LEASE_LOST;
	pthread_mutex_unlock(&l->mu);
}

/* May fenced SQL run under this lease?  Sets LOST / SUSPECT errors. */
int
fence_lease_usable(fence_ctx *ctx, fence_lease *l)
{
	switch (fence_lease_state(l))
	{
		case FENCE_LEASE_HELD:
			return FENCE_OK;
		case FENCE_LEASE_SUSPECT:
			fence_set_error(ctx, FENCE_ERR_SUSPECT,
							"lease on \"%s\" is suspect: Redis unreachable since the last extend",
							l->resource);
			return FENCE_ERR;
		default:
			fence_set_error(ctx, FENCE_ERR_LOST, "lease on \"%s\" is lost", l->resource);
			return FENCE_ERR;
	}
}

/*
 * The lease's TTL and local deadline now, read together under its mutex:
 * the heartbeat's extends change both.  A heal on a quorum must fit in
 * that window (fence_store_heal).
 */
void
fence_lease_window(fence_lease *l, long long *ttl_ms, int64_t *until_ns)
{
	pthread_mutex_lock(&l->mu);
	*ttl_ms = l->ttl_ms;
	*until_ns = l->deadline_ns;
	pthread_mutex_unlock(&l->mu);
}
