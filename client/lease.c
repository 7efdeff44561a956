/*
 * client/lease.c
 *	  Leases: a lock on Redis that expires, and the fencing token that came
 *	  with it.
 *
 * How acquire, extend and release reach Redis is the topology's business
 * (store.c); on one master each is one EVALSHA round trip (master.c).  A
 * lease also keeps a local deadline on CLOCK_MONOTONIC: the time of the
 * last successful acquire or extend, taken *before* the first command was
 * sent, plus the TTL, minus a margin for clock drift between this host and
 * Redis.  Before that deadline the lease is surely still ours; after it,
 * the library treats the lease as lost whatever Redis might still say,
 * because someone else may already hold it.  For that to hold, the deadline
 * must follow the TTL of the extend Redis ran *last*: fence_lease_renew
 * keeps extends of a lease one at a time and allows for extends whose
 * answer never came.
 *
 * The same deadline serves a quorum: Redlock's validity, TTL minus the
 * time the acquire took minus the drift, counted from the end of the
 * acquire, ends at that very instant.  Every node set its lock after "t0",
 * so each one holds it until at least t0 + TTL by its own clock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

/*
 * Is "resource" a name fence can take a lease on?  On failure a message
 * goes into "errbuf".  The CLI checks its arguments with this before it
 * connects anywhere.
 */
int
fence_check_resource(const char *resource, char *errbuf, size_t errlen)
{
	return fence_check_name_size("resource", resource, FENCE_MAX_RESOURCE_LEN, errbuf, errlen);
}

/*
 * Is "ttl_ms" a TTL a lease can have?  It must exceed the drift margin, or
 * the lease would be lost locally before it is held; FENCE_MAX_TTL_MS keeps
 * the arithmetic in ns far from overflow.
 */
int
fence_check_ttl(long long ttl_ms, char *errbuf, size_t errlen)
{
	if (ttl_ms < FENCE_MIN_TTL_MS || ttl_ms > FENCE_MAX_TTL_MS ||
		ttl_ms <= fence_drift_ms(ttl_ms))
	{
		snprintf(errbuf, errlen, "lease TTL must be between %lld ms and %lld ms, not %lld",
				 FENCE_MIN_TTL_MS, FENCE_MAX_TTL_MS, ttl_ms);
		return FENCE_ERR;
	}
	return FENCE_OK;
}

static int
check_resource(fence_ctx *ctx, const char *resource)
{
	if (fence_check_resource(resource, ctx->errstr, sizeof(ctx->errstr)) != FENCE_OK)
	{
		ctx->err = FENCE_ERR_ARG;
		return FENCE_ERR;
	}
	return FENCE_OK;
}

static int
check_ttl(fence_ctx *ctx, long long ttl_ms)
{
	if (fence_check_ttl(ttl_ms, ctx->errstr, sizeof(ctx->errstr)) != FENCE_OK)
	{
		ctx->err = FENCE_ERR_ARG;
		return FENCE_ERR;
	}
	return FENCE_OK;
}

/*
 * A lease not taken yet, with "owner" as its id (NULL: a new one); the
 * arguments are checked already.
 */
fence_lease *
fence_lease_new(fence_ctx *ctx, const char *resource, long long ttl_ms, const char *owner)
{
	fence_lease *l = calloc(1, sizeof(fence_lease));

	if (l == NULL)
		goto oom;
	l->resource = strdup(resource);
	if (l->resource == NULL || fence_keys_init(&l->keys, resource) != FENCE_OK)
		goto oom;
	if (owner == NULL && ctx->conn->park.active && ctx->conn->park.owner[0] != '\0' &&
		strcmp(ctx->conn->park.resource, resource) == 0)
	{
		/* the cut acquire made again: the same request (node.c, "Cut calls") */
		strcpy(l->owner, ctx->conn->park.owner);
		ctx->conn->park.owner[0] = '\0';
	}
	else if (owner != NULL && strlen(owner) < sizeof(l->owner))
		strcpy(l->owner, owner);
	else if (fence_owner_id(ctx, l->owner) != FENCE_OK)
	{
		fence_lease_free(l);
		return NULL;
	}
	if (ctx->conn->bounding)
	{
		/* what a cut of this acquire parks, to be asked again the same */
		strcpy(ctx->conn->last_owner, l->owner);
		strcpy(ctx->conn->last_resource, resource);
	}
	{
		char		wake[sizeof("wake:") + FENCE_OWNER_MAX];

		snprintf(wake, sizeof(wake), "wake:%s", l->owner);
		if ((l->wake_key = fence_key(resource, wake)) == NULL)
		{
			fence_lease_free(l);
			fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
			return NULL;
		}
	}
	l->ttl_ms = ttl_ms;
	l->state = FENCE_LEASE_LOST;	/* until acquired */
	pthread_mutex_init(&l->mu, NULL);
	{
		pthread_condattr_t ca;

		/* the heartbeat waits on this with monotonic deadlines */
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&l->cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	return l;

oom:
	if (l != NULL)
	{
		free(l->resource);
		free(l);
	}
	fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
	return NULL;
}

/* The lease was taken by an attempt sent at "t0": it is held. */
void
fence_lease_taken(fence_lease *l, int64_t t0)
{
	pthread_mutex_lock(&l->mu);
	l->state = FENCE_LEASE_HELD;
	l->renewed_ns = t0;
	l->deadline_ns = fence_deadline_after(t0, l->ttl_ms, 0);
	pthread_mutex_unlock(&l->mu);
}

/*
 * An attempt sent at "t0" took the lease: its local deadline counts from
 * then.  An attempt can take long with nothing wrong: a waiter's rides
 * behind its BLPOP (master.c), whose lock was handed over at a moment the
 * waiter cannot know and held for it for FENCE_HANDOFF_MS only until the
 * attempt set the TTL; and on a topology that fails over, one attempt
 * reconnects and asks the sentinels until the new master answers, which
 * can take longer than a short TTL.  When the attempt cost the lease more
 * than the drift margin, an extend gives it its whole TTL again from now;
 * should that extend fail, the earlier deadline still holds (an extend
 * with the same TTL that runs late only keeps the lock longer).
 *
 * Returns 1 when the lease is held.  A waiter ("how" not TRY) whose lease
 * is gone already, its lock expired or its deadline passed with no extend
 * answered, gets 0 and goes on waiting: handing its caller a lease lost
 * before its first use would end a wait that has time left on a failover
 * it was meant to ride.  Asking again is safe: the lock, if it is still
 * there, is its own, and its next attempt takes it again.  A single try
 * (FENCE_ATTEMPT_TRY) returns the lease as it is, its deadline counted
 * from t0, as it always has: its caller did not ask to wait.
 */
static int
taken_after(fence_ctx *ctx, fence_lease *l, int64_t t0, enum fence_attempt how)
{
	int64_t		t1;
	int			rc;

	fence_lease_taken(l, t0);
	t1 = fence_now_ns();
	if (how == FENCE_ATTEMPT_TRY || t1 - t0 <= fence_drift_ms(l->ttl_ms) * 1000000)
		return 1;
	rc = fence_extend_raw(ctx, l->keys.lock, l->owner, l->ttl_ms);
	fence_clear_error(ctx);
	if (rc == 1)
		fence_lease_taken(l, t1);
	else if (rc == 0)
		fence_lease_set_lost(l);	/* gone already: its TTL was shorter */
	if (fence_lease_state(l) == FENCE_LEASE_HELD)
		return 1;
	fence_lease_set_lost(l);
	ctx->conn->busy_pttl = -1;	/* no PTTL to wait for: back off (block_time) */
	return 0;
}

/*
 * One attempt.  Returns 1 with the lease filled in, 0 when busy (PTTL in
 * ctx->conn->busy_pttl), -1 on error.  "how" says what a waiter does with
 * its place in the queue when it cannot have the lock.
 */
static int
try_acquire(fence_ctx *ctx, fence_lease *l, enum fence_attempt how)
{
	int64_t		t0 = fence_op_t0(ctx);
	int			rc = fence_store_acquire(ctx, l, t0, how);

	return rc == 1 ? taken_after(ctx, l, t0, how) : rc;
}

/*
 * Block until a release wakes the waiter (at most "block_ms"), then make
 * an attempt; returns as try_acquire, and sets "*refused" when Redis
 * would not block.  The local deadline counts from before the BLPOP the
 * attempt rides behind (taken_after).
 */
static int
wait_acquire(fence_ctx *ctx, fence_lease *l, long block_ms, enum fence_attempt how,
			 int *refused)
{
	int64_t		t0 = fence_now_ns();
	int			rc = fence_store_wait(ctx, l, &t0, block_ms, how, refused);

	return rc == 1 ? taken_after(ctx, l, t0, how) : rc;
}

/*
 * Try once to take the lease on "resource" for "ttl_ms".  Fails with
 * FENCE_ERR_BUSY when another owner holds it (fence_busy_pttl() tells for
 * how much longer).  It never takes a lock that others wait for: a free
 * one goes to the first of them.
 */
fence_lease *
fence_acquire(fence_ctx *ctx, const char *resource, long long ttl_ms)
{
	return fence_acquire_wait(ctx, resource, ttl_ms, 0);
}

void
fence_cancel_wait(fence_ctx *ctx)
{
	__atomic_store_n(&ctx->conn->cancel_wait, 1, __ATOMIC_RELEASE);
}

long long
fence_busy_pttl(const fence_ctx *ctx)
{
	return ctx->conn->busy_pttl;
}

/*
 * How long a waiter may block before it asks again, in ms, with "left_ns"
 * to its deadline: until just after the holder's lease (or a lock handed
 * to someone else) would run out, since nobody wakes waiters when a lock
 * expires; at most FENCE_WAIT_BEAT_MS, which keeps its place in the queue.
 * A quorum that knows no PTTL (contenders split the nodes between them)
 * says -1: then a jittered, exponentially growing pause ("*backoff_ms", 10
 * ms doubling) breaks the tie, as Redlock does.
 */
static long
block_time(fence_ctx *ctx, int64_t *backoff_ms, int64_t left_ns)
{
	int64_t		pttl = ctx->conn->busy_pttl,
				ms;

	if (pttl >= 0)
		ms = pttl + 1 + (int64_t) (fence_rand(ctx) % 3);
	else
	{
		/* uniform in [b/2, b] */
		ms = *backoff_ms / 2 + (int64_t) (fence_rand(ctx) % (uint64_t) (*backoff_ms / 2 + 1));
		if (*backoff_ms < FENCE_WAIT_BEAT_MS)
			*backoff_ms *= 2;
	}
	if (ms > FENCE_WAIT_BEAT_MS)
		ms = FENCE_WAIT_BEAT_MS;
	if (ms * 1000000 > left_ns)
		ms = (left_ns + 999999) / 1000000;
	return ms < 1 ? 1 : (long) ms;
}

/*
 * A waiter rides a failover: on a topology whose master can move (Sentinel,
 * Cluster), an attempt that failed because no master could be reached or
 * would serve it (a connection the old master closed, READONLY, LOADING,
 * CLUSTERDOWN, no master named yet) is taken for a busy one, and the
 * waiter goes on waiting, until its deadline, for the topology to find the
 * new master: the next attempt asks there.  Asking again is safe even when
 * the failed attempt may have run: an acquire by the owner that holds the
 * lock takes it again.  Returns what the loop goes on with; "why" keeps
 * the failure (empty once an attempt got an answer), for the error when
 * the wait runs out without one.
 *
 * A single server has no master to move, but it drops connections (its
 * idle "timeout", CLIENT KILL, a restart, a proxy's reset) and answers
 * again at once: a waiter that has had an answer from it in this wait
 * ("*heard") rides that in the same way, reconnecting on its next
 * attempt.  One that never had an answer fails at once: that server is
 * not there (a wrong URL, a server down) and waiting would hide it.
 */
static int
ride_failover(fence_ctx *ctx, int rc, enum fence_attempt how, int *heard, char *why,
			  size_t whylen)
{
	if (rc >= 0)
	{
		why[0] = '\0';
		*heard = 1;
		return rc;
	}
	if (how == FENCE_ATTEMPT_TRY || ctx->conn->ops == NULL ||
		(!ctx->conn->ops->fails_over && !*heard) || ctx->err != FENCE_ERR_IO)
		return rc;
	snprintf(why, whylen, "%s", ctx->errstr);
	fence_clear_error(ctx);
	ctx->conn->busy_pttl = -1;	/* no PTTL: back off (block_time) */
	return 0;
}

/*
 * Give the last attempt of a wait its slack from now when the waiter
 * itself was late for it: a process paused (SIGSTOP, a VM paused, a
 * starved CPU) past its deadline plus the slack would otherwise fail that
 * attempt unsent ("no answer before the deadline") although Redis has been
 * answering all along, and leave a lock handed to it stranded.  Only while
 * the last answer came ("failing" empty): a server that does not answer
 * still ends the wait on time.  A deadline of the caller's holds.
 */
static void
last_chance(fence_ctx *ctx, int64_t caller_deadline, const char *failing)
{
	if (failing[0] != '\0' || (caller_deadline != 0 &&
								caller_deadline < fence_now_ns() + (int64_t) FENCE_WAIT_SLACK_MS * 1000000))
		return;
	fence_conn_grace(ctx);
}

/*
 * Take the lease on "resource", trying until "wait_ms" have passed.
 *
 * A busy attempt takes a place in the resource's queue, and the waiter
 * blocks in Redis (BLPOP, on the context's connection) until a release
 * wakes it.  On one master the release has handed it the lock already,
 * and the attempt sent along with the BLPOP takes it: a handover costs the
 * release and the wake-up, and waiters are served first come, first
 * served (scripts.c).  On a quorum the woken waiter competes with an
 * ordinary attempt.  Every wait is also bounded by the holder's PTTL (a
 * holder that died wakes nobody), by FENCE_WAIT_BEAT_MS (which keeps the
 * place) and by the deadline.  The attempt that ends the wait at the
 * deadline is the last: it takes the lock if it is free for this waiter,
 * or else gives up the place, so a lock handed over at the last moment is
 * taken, never stranded.  Fails with FENCE_ERR_TIMEOUT (or FENCE_ERR_BUSY
 * when "wait_ms" is 0).
 *
 * The deadline bounds every command of the wait too (connecting, logging
 * in, each attempt), give or take FENCE_WAIT_SLACK_MS: a Redis that
 * accepts and never answers fails the wait (FENCE_ERR_IO) when it runs
 * out, not a command timeout later.
 *
 * When Redis refuses to block (an ACL without BLPOP, a server before 6.0)
 * the waiter sleeps for the same time instead, and so only learns of a
 * release when it asks again.  A failover while it waits is ridden
 * (ride_failover); a wait that runs out while no master answers fails with
 * that error (FENCE_ERR_IO), not FENCE_ERR_TIMEOUT.
 */
fence_lease *
fence_acquire_wait(fence_ctx *ctx, const char *resource, long long ttl_ms,
				   long long wait_ms)
{
	fence_lease *l;
	int			was;

	if (wait_ms != 0)
		return fence_acquire_wait_as(ctx, resource, ttl_ms, wait_ms, 0, NULL);
	was = fence_bound_begin(ctx);
	l = fence_acquire_wait_as(ctx, resource, ttl_ms, wait_ms, 0, NULL);
	fence_bound_end(ctx, was);
	return l;
}

/*
 * Compare-and-DEL, handing the lock to the first waiter if any.  Returns 1
 * deleted, 0 not ours, -1 error.
 */
static int
release_raw(fence_ctx *ctx, const char *lock_key, const char *owner)
{
	return fence_store_release(ctx, lock_key, owner);
}

/*
 * The first attempt of an acquire, after giving "old" back when it is not
 * NULL: in the same write where the topology allows (one master holds
 * both resources), else first the release, then the attempt.  The
 * release's outcome goes into "*release_err" (0, FENCE_ERR_LOST, or the
 * error it met), the attempt's is returned as try_acquire's.  "old" is
 * given back once Redis answered: lost from then on, whatever it said.
 */
static int
first_attempt(fence_ctx *ctx, fence_lease *l, enum fence_attempt how, fence_lease *old,
			  int *release_err)
{
	int64_t		t0;
	int			rc;

	if (old == NULL)
		return try_acquire(ctx, l, how);
	fence_heartbeat_stop(old);
	t0 = fence_op_t0(ctx);
	rc = fence_store_release_acquire(ctx, old->keys.lock, old->owner, l, how, release_err);
	if (rc == FENCE_STORE_ONE_AT_A_TIME && ctx->conn->bounding)
	{
		/* two round trips, the second after the first: not one to cut */
		fence_cut(ctx, "release and acquire on two masters");
		return -1;
	}
	if (rc == FENCE_STORE_ONE_AT_A_TIME)
	{
		rc = release_raw(ctx, old->keys.lock, old->owner);
		*release_err = rc == 1 ? 0 : rc == 0 ? FENCE_ERR_LOST : ctx->err;
		fence_clear_error(ctx);
		rc = try_acquire(ctx, l, how);
	}
	else if (rc == 1)
		rc = taken_after(ctx, l, t0, how);
	if (*release_err == 0 || *release_err == FENCE_ERR_LOST)
		fence_lease_set_lost(old);
	return rc;
}

/*
 * fence_acquire_wait_as, whose first attempt gives "old" back too (when
 * not NULL; "*release_err" says how that went).
 */
static fence_lease *
acquire_after(fence_ctx *ctx, fence_lease *old, int *release_err, const char *resource,
			  long long ttl_ms, long long wait_ms, int64_t deadline, const char *owner)
{
	fence_lease *l;
	int64_t		caller_deadline = ctx->conn->deadline_ns;
	int64_t		backoff_ms = 10;
	enum fence_attempt how = wait_ms > 0 ? FENCE_ATTEMPT_WAIT : FENCE_ATTEMPT_TRY;
	char		failing[FENCE_ERRSTR_LEN] = "";
	int			refused = 0,
				heard = 0;
	int			rc;

	fence_clear_error(ctx);
	if (check_resource(ctx, resource) != FENCE_OK || check_ttl(ctx, ttl_ms) != FENCE_OK)
		return NULL;
	if (wait_ms < 0 || wait_ms > FENCE_MAX_TTL_MS)
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "wait must be between 0 and %lld ms",
						FENCE_MAX_TTL_MS);
		return NULL;
	}
	l = fence_lease_new(ctx, resource, ttl_ms, owner);
	if (l == NULL)
		return NULL;
	if (deadline == 0)
		deadline = fence_now_ns() + wait_ms * 1000000;
	/* a Redis that never answers must not stretch the wait by a command
	 * timeout: every command ends by the deadline, plus the slack */
	if (how != FENCE_ATTEMPT_TRY)
	{
		int64_t		bound = deadline + (int64_t) FENCE_WAIT_SLACK_MS * 1000000;

		if (caller_deadline == 0 || bound < caller_deadline)
			fence_conn_set_deadline(ctx, bound);
	}

	rc = ride_failover(ctx, first_attempt(ctx, l, how, old, release_err), how, &heard,
					   failing, sizeof(failing));
	while (rc == 0 && how != FENCE_ATTEMPT_TRY)
	{
		int64_t		left;
		long		block_ms;

		/* cancelled: the wait runs out now (every block is short) */
		if (__atomic_load_n(&ctx->conn->cancel_wait, __ATOMIC_ACQUIRE))
			deadline = fence_now_ns();
		left = deadline - fence_now_ns();

		if (how == FENCE_ATTEMPT_LAST)
		{
			if (left <= 0)
				break;
			/* woken early, and beaten to it (a quorum): queue up again */
			how = FENCE_ATTEMPT_WAIT;
			rc = ride_failover(ctx, try_acquire(ctx, l, how), how, &heard, failing, sizeof(failing));
			continue;
		}
		if (left <= 0)
		{
			how = FENCE_ATTEMPT_LAST;
			last_chance(ctx, caller_deadline, failing);
			rc = ride_failover(ctx, try_acquire(ctx, l, how), how, &heard, failing, sizeof(failing));
			continue;
		}
		block_ms = block_time(ctx, &backoff_ms, left);
		/* the attempt after a wait that reaches the deadline is the last */
		if ((int64_t) block_ms * 1000000 >= left)
			how = FENCE_ATTEMPT_LAST;
		if (!refused)
			rc = wait_acquire(ctx, l, block_ms, how, &refused);
		else
		{
			fence_sleep_ns((int64_t) block_ms * 1000000 < left ?
						   (int64_t) block_ms * 1000000 : left);
			rc = try_acquire(ctx, l, how);
		}
		rc = ride_failover(ctx, rc, how, &heard, failing, sizeof(failing));
	}
	__atomic_store_n(&ctx->conn->cancel_wait, 0, __ATOMIC_RELEASE);
	fence_conn_set_deadline(ctx, caller_deadline);
	if (rc == 1)
		return l;
	if (rc < 0)
	{
		/* a place in the queue lapses by itself */
		fence_lease_free(l);
		return NULL;
	}

	if (failing[0] != '\0')
		fence_set_error(ctx, FENCE_ERR_IO, "lease on \"%.80s\" not acquired within %lld ms: %s",
						resource, wait_ms, failing);
	else if (wait_ms == 0)
		fence_set_error(ctx, FENCE_ERR_BUSY, "lease on \"%s\" is held by another owner (expires in %lld ms)",
						resource, ctx->conn->busy_pttl);
	else
		fence_set_error(ctx, FENCE_ERR_TIMEOUT, "lease on \"%s\" not acquired within %lld ms (held by another owner, expires in %lld ms)",
						resource, wait_ms, ctx->conn->busy_pttl);
	fence_lease_free(l);
	return NULL;
}

/*
 * fence_acquire_wait with "owner" as the owner id (NULL: a new one): the
 * leases of a set share one (lease_set.c), so that one id names them all.
 * An id is unique to its lock key, which is all the scripts compare.
 * "deadline" (fence_now_ns's clock; 0: "wait_ms" from now) is when the
 * wait ends: a member of a set waits for what is left of the set's one
 * wait, and its error names the whole "wait_ms" the caller asked for, as
 * one lease's does.
 */
fence_lease *
fence_acquire_wait_as(fence_ctx *ctx, const char *resource, long long ttl_ms,
					  long long wait_ms, int64_t deadline, const char *owner)
{
	return acquire_after(ctx, NULL, NULL, resource, ttl_ms, wait_ms, deadline, owner);
}

/*
 * Give "old" back and take a lease on "resource" (as fence_acquire_wait),
 * the release and the first attempt in one write where one master holds
 * both (client/README.md, "Worker loops").  "*released" gets what the
 * release came to: FENCE_OK, FENCE_ERR_LOST when the lock had passed to
 * another owner or expired (nothing of theirs touched), or the error it
 * met (FENCE_ERR_IO: the outcome is unknown; FENCE_ERR_ARG: nothing was
 * sent).  "old" may be NULL (the first step of a loop: *released is
 * FENCE_OK); the caller frees it in any case.
 */
fence_lease *
fence_release_acquire(fence_ctx *ctx, fence_lease *old, const char *resource,
					  long long ttl_ms, long long wait_ms, int *released)
{
	int			release_err = old != NULL ? -1 : 0;	/* -1: not sent */
	fence_lease *l;
	int			was = 0;

	fence_clear_error(ctx);
	if (wait_ms == 0)
		was = fence_bound_begin(ctx);
	l = acquire_after(ctx, old, &release_err, resource, ttl_ms, wait_ms, 0, NULL);
	if (wait_ms == 0)
		fence_bound_end(ctx, was);
	/* made again after a cut that was not taken up: see fence_release */
	if (fence_park_dropped(ctx) && release_err == FENCE_ERR_LOST)
		release_err = FENCE_ERR_IO;
	if (released != NULL)
		*released = release_err < 0 ? ctx->err : release_err;
	return l;
}

/*
 * Extend the lease for "ttl_ms" (0: its current TTL), which becomes its
 * TTL from then on.
 */
int
fence_extend(fence_ctx *ctx, fence_lease *l, long long ttl_ms)
{
	int			was,
				rc;

	fence_clear_error(ctx);
	if (ttl_ms == 0)
		ttl_ms = fence_lease_ttl(l);
	if (check_ttl(ctx, ttl_ms) != FENCE_OK)
		return FENCE_ERR;
	was = fence_bound_begin(ctx);
	rc = fence_lease_renew(ctx, l, ttl_ms);
	fence_bound_end(ctx, was);
	return rc == 1 ? FENCE_OK : FENCE_ERR;
}

/*
 * Give the lease back (stopping its heartbeat first).  Fails with
 * FENCE_ERR_LOST when the lock had already passed to someone else or
 * expired; the other owner's lock is not touched.
 */
int
fence_release(fence_ctx *ctx, fence_lease *l)
{
	int			rc,
				was,
				dropped;

	fence_clear_error(ctx);
	fence_heartbeat_stop(l);
	was = fence_bound_begin(ctx);
	rc = release_raw(ctx, l->keys.lock, l->owner);
	fence_bound_end(ctx, was);
	dropped = fence_park_dropped(ctx);
	if (rc < 0)
		return FENCE_ERR;
	if (rc == 0 && dropped)
	{
		/*
		 * Made again after a cut whose request was not taken up (node.c,
		 * "Cut calls"): that request may be what gave the lock back.
		 * Nobody can say "lost" then; the lease is given up either way.
		 */
		pthread_mutex_lock(&l->mu);
		l->state = FENCE_LEASE_LOST;
		pthread_mutex_unlock(&l->mu);
		fence_set_error(ctx, FENCE_ERR_IO, "lease on \"%s\": release's outcome unknown (a release cut short by the reply bound may have given it back)", l->resource);
		return FENCE_ERR;
	}
	pthread_mutex_lock(&l->mu);
	l->state = FENCE_LEASE_LOST;
	pthread_mutex_unlock(&l->mu);
	if (rc == 0)
	{
		fence_set_error(ctx, FENCE_ERR_LOST, "lease on \"%s\" was no longer held by this owner", l->resource);
		return FENCE_ERR;
	}
	return FENCE_OK;
}

static int
check_owner(fence_ctx *ctx, const char *owner)
{
	if (owner == NULL || *owner == '\0')
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "owner must not be empty");
		return FENCE_ERR;
	}
	return FENCE_OK;
}

int
fence_extend_owner(fence_ctx *ctx, const char *resource, const char *owner,
				   long long ttl_ms)
{
	char	   *key;
	int			rc;

	fence_clear_error(ctx);
	if (check_resource(ctx, resource) != FENCE_OK || check_owner(ctx, owner) != FENCE_OK ||
		check_ttl(ctx, ttl_ms) != FENCE_OK)
		return FENCE_ERR;
	if ((key = fence_key(resource, "lock")) == NULL)
	{
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
		return FENCE_ERR;
	}
	rc = fence_extend_raw(ctx, key, owner, ttl_ms);
	free(key);
	if (rc == 0)
		fence_set_error(ctx, FENCE_ERR_LOST, "lease on \"%s\" is not held by owner %s", resource, owner);
	return rc == 1 ? FENCE_OK : FENCE_ERR;
}

int
fence_release_owner(fence_ctx *ctx, const char *resource, const char *owner)
{
	char	   *key;
	int			rc;

	fence_clear_error(ctx);
	if (check_resource(ctx, resource) != FENCE_OK || check_owner(ctx, owner) != FENCE_OK)
		return FENCE_ERR;
	if ((key = fence_key(resource, "lock")) == NULL)
	{
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
		return FENCE_ERR;
	}
	rc = release_raw(ctx, key, owner);
	free(key);
	if (rc == 0)
		fence_set_error(ctx, FENCE_ERR_LOST, "lease on \"%s\" is not held by owner %s", resource, owner);
	return rc == 1 ? FENCE_OK : FENCE_ERR;
}

void
fence_lease_free(fence_lease *l)
{
	if (l == NULL)
		return;
	fence_heartbeat_stop(l);
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cv);
	free(l->resource);
	fence_keys_free(&l->keys);
	free(l->wake_key);
	free(l);
}

const char *
fence_lease_resource(const fence_lease *l)
{
	return l->resource;
}

const char *
fence_lease_owner(const fence_lease *l)
{
	return l->owner;
}

long long
fence_lease_token(const fence_lease *l)
{
	return l->token;
}

long long
fence_lease_ttl(const fence_lease *l)
{
	long long	ttl;

	/* the heartbeat may be extending: "mu" guards ttl_ms */
	pthread_mutex_lock((pthread_mutex_t *) &l->mu);
	ttl = l->ttl_ms;
	pthread_mutex_unlock((pthread_mutex_t *) &l->mu);
	return ttl;
}

/*
 * Fill "info" with the current owner, the lock's remaining TTL and the
 * last token handed out for "resource".
 */
int
fence_show(fence_ctx *ctx, const char *resource, fence_info *info)
{
	char	   *lock = NULL,
			   *token = NULL;
	int			rc = FENCE_ERR;

	fence_clear_error(ctx);
	memset(info, 0, sizeof(*info));
	info->pttl_ms = -2;
	if (check_resource(ctx, resource) != FENCE_OK)
		return FENCE_ERR;
	lock = fence_key(resource, "lock");
	token = fence_key(resource, "token");
	if (lock == NULL || token == NULL)
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
	else if (fence_store_show(ctx, lock, token, info) == 1)
		rc = FENCE_OK;
	free(lock);
	free(token);
	if (rc != FENCE_OK)
		fence_info_free(info);
	return rc;
}
