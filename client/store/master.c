/*
 * client/store/master.c
 *	  Lease operations on the one master that holds a resource: a single
 *	  node, the master Sentinel names, or the Cluster node owning the slot.
 *
 * Each operation is one script (scripts.c), sent by the topology's "exec"
 * to the right node: acquire, extend, release and heal are one round trip
 * each, plus the WAIT that rides in the same write when replicas were
 * asked for (fence_set_min_replicas).  A release hands the lock to the
 * first waiter, if any, who is blocked in fence_master_wait_acquire (BLPOP
 * on its wake list) and whose acquire, sent with the BLPOP, takes it
 * (scripts.c).
 *
 * With WAIT, a lease (or a healed token) counts only once "min_replicas"
 * replicas have its lock and its counter: a failover to one of them then
 * keeps both.  When fewer acknowledge in time the lock is given back and
 * the call fails with FENCE_ERR_REPLICAS; the token it took is simply never
 * used (tokens only have to grow, not to be dense).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

/* Did fewer replicas than asked acknowledge (WAIT said "acked")? */
static int
too_few(fence_ctx *ctx, long long acked)
{
	return acked == FENCE_WAIT_REFUSED || (acked >= 0 && acked < ctx->conn->min_replicas);
}

/*
 * Fewer replicas than asked acknowledged the write "what" made, or the ACL
 * refused to ask them (the error says so): give the lock back and say so.
 * Returns -1.
 */
static int
too_few_replicas(fence_ctx *ctx, fence_lease *l, long long acked, const char *what)
{
	struct fence_conn *c = ctx->conn;
	char		refused[FENCE_ERRSTR_LEN];

	memcpy(refused, ctx->errstr, sizeof(refused));
	/* handed on to the next waiter, if any */
	(void) fence_master_release(ctx, l->keys.lock, l->owner);
	if (acked == FENCE_WAIT_REFUSED)
		fence_set_error(ctx, FENCE_ERR_AUTH, "%s; lease given back", refused);
	else
		fence_set_error(ctx, FENCE_ERR_REPLICAS,
						"%s on \"%s\" reached %lld of the %d replicas asked for within %ld ms; lease given back",
						what, l->resource, acked < 0 ? 0 : acked, c->min_replicas,
						c->replica_timeout_ms);
	return -1;
}

/* Say which resource's keys are in a state fence never writes. */
static void
state_error(fence_ctx *ctx, const fence_lease *l)
{
	char		msg[FENCE_ERRSTR_LEN];

	memcpy(msg, ctx->errstr, sizeof(msg));
	fence_set_error(ctx, FENCE_ERR_STATE, "resource \"%.80s\": %s", l->resource, msg);
}

/* The keys and arguments of an ACQUIRE of "l" (scripts.c). */
typedef struct acquire_args
{
	char		ttl[24];
	const char *keys[4];
	const char *args[3];
} acquire_args;

static void
acquire_setup(acquire_args *a, const fence_lease *l, enum fence_attempt how)
{
	static const char *const hows[] = {"0", "1", "2"};

	snprintf(a->ttl, sizeof(a->ttl), "%lld", l->ttl_ms);
	a->keys[0] = l->keys.lock;
	a->keys[1] = l->keys.token;
	a->keys[2] = l->keys.queue;
	a->keys[3] = l->keys.alive;
	a->args[0] = l->owner;
	a->args[1] = a->ttl;
	a->args[2] = hows[how];
}

/*
 * Read an ACQUIRE reply (freed here) into l->token; "acked" is what WAIT
 * said (-1: not asked).  Returns as fence_master_acquire does.
 */
static int
acquire_reply(fence_ctx *ctx, fence_lease *l, redisReply *r, long long acked)
{
	if (r->type == REDIS_REPLY_STRING)
	{
		if (fence_parse_token(r->str, r->len, &l->token) != 0)
		{
			fence_set_error(ctx, FENCE_ERR_STATE, "token counter %s holds \"%.40s\", not a positive integer",
							l->keys.token, r->str);
			freeReplyObject(r);
			return -1;
		}
	}
	else if (r->type == REDIS_REPLY_INTEGER && r->integer > 0)
		l->token = r->integer;
	else if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
			 r->element[0]->type == REDIS_REPLY_INTEGER)
	{
		ctx->conn->busy_pttl = r->element[0]->integer;
		freeReplyObject(r);
		return 0;
	}
	else
	{
		fence_reply_error(ctx, r);
		if (ctx->err == FENCE_ERR_STATE)
			state_error(ctx, l);
		return -1;
	}
	freeReplyObject(r);
	if (too_few(ctx, acked))
		return too_few_replicas(ctx, l, acked, "lease");
	return 1;
}

/*
 * One attempt at the lock and a token.  Returns 1 with l->token set, 0
 * when the caller cannot have it now (PTTL in busy_pttl), -1 on error.
 * "how" says what a waiter does with its place in the queue.  "t0" is not
 * needed: one script on one master is all there is.
 */
int
fence_master_acquire(fence_ctx *ctx, fence_lease *l, int64_t t0,
					 enum fence_attempt how)
{
	acquire_args a;
	long long	acked;
	redisReply *r;

	(void) t0;
	acquire_setup(&a, l, how);
	r = fence_script_run(ctx, FENCE_SCRIPT_ACQUIRE, 4, a.keys, 3, a.args, &acked);
	if (r == NULL)
		return -1;
	return acquire_reply(ctx, l, r, acked);
}

/* Did Redis refuse the BLPOP for good (not for a failover under way)? */
static int
blpop_refused(const redisReply *r)
{
	return r->type == REDIS_REPLY_ERROR && !fence_reply_transient(r);
}

/*
 * Wait for a release, then make an attempt, in one round trip: BLPOP on the
 * waiter's wake list (at most "block_ms") and the ACQUIRE go out in one
 * write.  Redis holds back the commands a client sent after one that
 * blocks, and runs the ACQUIRE the moment the BLPOP returns: when a
 * release woke the waiter, right after it, before anyone else's next
 * command.  So a handover costs the release and the wake-up only.  "*t0"
 * stays the time before the write, which the ACQUIRE surely ran after.
 *
 * Returns as fence_master_acquire.  "*refused" is set when Redis refused
 * to block (an ACL without BLPOP, a server before 6.0 that wants whole
 * seconds): the attempt still ran, at once.  A BLPOP that a failover or a
 * resharding ends (UNBLOCKED: the master turned into a replica; READONLY,
 * LOADING, a Cluster redirect) is no refusal: the waiter blocks again on
 * the next master.  An attempt that did not run (NOSCRIPT, and those same
 * replies) is made again on its own, which the topology sends to the
 * master it finds now; so is every attempt when replicas are asked for,
 * since WAIT must follow the script.  A server turned replica closes the
 * connection of a client it unblocks: that is an I/O error, which a
 * waiter on a topology that fails over rides (lease.c).
 */
int
fence_master_wait_acquire(fence_ctx *ctx, fence_lease *l, int64_t *t0, long block_ms,
						  enum fence_attempt how, int *refused)
{
	acquire_args a;
	fence_cmd	cmds[2];
	redisReply *replies[2];
	char		secs[32];
	redisReply *r;

	*refused = 0;
	fence_blpop_cmd(&cmds[0], l->wake_key, block_ms, secs, sizeof(secs));
	if (ctx->conn->min_replicas > 0)
	{
		if (ctx->conn->ops->exec(ctx, l->wake_key, 1, cmds, replies) != FENCE_OK)
			return -1;
		*refused = blpop_refused(replies[0]);
		freeReplyObject(replies[0]);
		goto alone;
	}
	acquire_setup(&a, l, how);
	fence_script_cmd(&cmds[1], FENCE_SCRIPT_ACQUIRE, 0, 4, a.keys, 3, a.args);
	if (ctx->conn->ops->exec(ctx, l->wake_key, 2, cmds, replies) != FENCE_OK)
		return -1;
	*refused = blpop_refused(replies[0]);
	freeReplyObject(replies[0]);
	r = replies[1];
	if (!fence_reply_is(r, "NOSCRIPT") && !fence_reply_transient(r))
		return acquire_reply(ctx, l, r, -1);
	freeReplyObject(r);
alone:
	/* a command timeout of its own, from now */
	fence_op_begin(ctx);
	*t0 = fence_now_ns();
	return fence_master_acquire(ctx, l, *t0, how);
}

/*
 * Run a compare-and-act script on "nkeys" keys, the lock first (its first
 * argument is the owner).  Returns 1 when it acted, 0 when the lock is not
 * the owner's, -1 on error.
 */
static int
compare_script(fence_ctx *ctx, enum fence_script which, int nkeys,
			   const char **keys, int nargs, const char **args)
{
	redisReply *r;
	int			rc;

	r = fence_script_run(ctx, which, nkeys, keys, nargs, args, NULL);
	if (r == NULL)
		return -1;
	if (r->type != REDIS_REPLY_INTEGER)
	{
		fence_reply_error(ctx, r);
		return -1;
	}
	rc = r->integer == 1 ? 1 : 0;
	freeReplyObject(r);
	return rc;
}

/* Compare-and-PEXPIRE.  Returns 1 extended, 0 not ours, -1 error. */
int
fence_master_extend(fence_ctx *ctx, const char *lock_key, const char *owner,
					long long ttl_ms)
{
	char		ttl[24];
	const char *keys[1] = {lock_key};
	const char *args[2] = {owner, ttl};

	snprintf(ttl, sizeof(ttl), "%lld", ttl_ms);
	return compare_script(ctx, FENCE_SCRIPT_EXTEND, 1, keys, 2, args);
}

/*
 * Compare-and-DEL, and the lock goes to the first waiter, if any.  Returns
 * 1 released, 0 not ours, -1 error.
 */
int
fence_master_release(fence_ctx *ctx, const char *lock_key, const char *owner)
{
	const char *keys[1] = {lock_key};
	const char *args[2] = {owner, "1"};

	return compare_script(ctx, FENCE_SCRIPT_RELEASE, 1, keys, 2, args);
}

/*
 * Lift the counter to "mark" (never lower it) and take the next token,
 * while the lock is ours.  Returns 1 with l->token set, 0 when the lock is
 * not ours any more, -1 on error.
 */
int
fence_master_heal(fence_ctx *ctx, fence_lease *l, long long mark,
				  long long ttl_ms, int64_t until_ns)
{
	char		m[24];
	const char *keys[2] = {l->keys.lock, l->keys.token};
	const char *args[2] = {l->owner, m};
	long long	acked,
				token;
	redisReply *r;

	/* one script, bounded by the command timeout like any other: the
	 * lease's window matters only to a quorum's claim (quorum_heal) */
	(void) ttl_ms;
	(void) until_ns;

	snprintf(m, sizeof(m), "%lld", mark);
	r = fence_script_run(ctx, FENCE_SCRIPT_HEAL, 2, keys, 2, args, &acked);
	if (r == NULL)
		return -1;
	if (r->type == REDIS_REPLY_INTEGER)
	{
		freeReplyObject(r);
		return 0;
	}
	if (r->type != REDIS_REPLY_STRING)
		return fence_reply_error(ctx, r);
	if (fence_parse_token(r->str, r->len, &token) != 0 || token <= mark)
	{
		fence_set_error(ctx, FENCE_ERR_STATE, "token counter %s holds \"%.40s\" after healing",
						l->keys.token, r->str);
		freeReplyObject(r);
		return -1;
	}
	freeReplyObject(r);
	if (too_few(ctx, acked))
		return too_few_replicas(ctx, l, acked, "healed token");
	l->token = token;
	return 1;
}

/*
 * The members of a set on one master (single node, Sentinel): n scripts in
 * one write, n replies in one read, where the set would otherwise wait for
 * each reply before sending the next script.  The scripts are the same as
 * one lease's, and Redis runs them in the order sent, each on its own: the
 * pipeline saves round trips, it does not make the set atomic (the caller
 * sees each script's result and decides).  A script the server has lost
 * (NOSCRIPT: a restart, SCRIPT FLUSH) is sent again on its own, with its
 * source (fence_script_run).
 */

/* ctx's error, kept across later ones: the first failure is what a set
 * reports */
typedef struct first_error
{
	int			err;
	char		errstr[FENCE_ERRSTR_LEN];
} first_error;

static void
note_error(fence_ctx *ctx, first_error *first)
{
	if (first->err == 0 && ctx->err != 0)
	{
		first->err = ctx->err;
		memcpy(first->errstr, ctx->errstr, sizeof(first->errstr));
	}
}

static void
restore_error(fence_ctx *ctx, const first_error *first)
{
	if (first->err == 0)
		return;
	ctx->err = first->err;
	memcpy(ctx->errstr, first->errstr, sizeof(ctx->errstr));
}

/*
 * One attempt "how" at each of the "n" leases "ls", in that order, in one
 * pipeline; rcs[i] is what fence_master_acquire would have returned for
 * ls[i] (1 with its token set, 0 busy, -1 error).  Replicas are not asked
 * for here (store.c sends a set one lease at a time when they are).
 * FENCE_OK, or FENCE_ERR when the pipeline broke.
 */
int
fence_master_acquire_many(fence_ctx *ctx, int n, fence_lease **ls, enum fence_attempt how,
						  int *rcs)
{
	acquire_args *a = malloc(n * sizeof(*a));
	fence_cmd  *cmds = calloc(n, sizeof(*cmds));
	redisReply **replies = malloc(n * sizeof(*replies));
	first_error first = {0};
	int			rc = FENCE_ERR,
				i;

	if (a == NULL || cmds == NULL || replies == NULL)
	{
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
		goto done;
	}
	for (i = 0; i < n; i++)
	{
		acquire_setup(&a[i], ls[i], how);
		fence_script_cmd(&cmds[i], FENCE_SCRIPT_ACQUIRE, 0, 4, a[i].keys, 3, a[i].args);
	}
	if (ctx->conn->ops->exec(ctx, ls[0]->keys.lock, n, cmds, replies) != FENCE_OK)
		goto done;
	for (i = 0; i < n; i++)
	{
		if (fence_reply_is(replies[i], "NOSCRIPT"))
		{
			freeReplyObject(replies[i]);
			rcs[i] = fence_master_acquire(ctx, ls[i], 0, how);
		}
		else
			rcs[i] = acquire_reply(ctx, ls[i], replies[i], -1);
		if (rcs[i] < 0)
			note_error(ctx, &first);
	}
	restore_error(ctx, &first);
	rc = FENCE_OK;
done:
	free(a);
	free(cmds);
	free(replies);
	return rc;
}

/*
 * Compare-and-DEL of the "n" locks "lock_keys" of "owner", each handed to
 * its first waiter, in that order, in one pipeline; rcs[i] is what
 * fence_master_release would have returned (1 released, 0 not ours, -1
 * error: the error is the first one's).  FENCE_OK, or FENCE_ERR when the
 * pipeline broke.
 */
int
fence_master_release_many(fence_ctx *ctx, int n, const char **lock_keys, const char *owner,
						  int *rcs)
{
	const char *args[2] = {owner, "1"};
	fence_cmd  *cmds = calloc(n, sizeof(*cmds));
	redisReply **replies = malloc(n * sizeof(*replies));
	first_error first = {0};
	int			rc = FENCE_ERR,
				i;

	if (cmds == NULL || replies == NULL)
	{
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
		goto done;
	}
	for (i = 0; i < n; i++)
		fence_script_cmd(&cmds[i], FENCE_SCRIPT_RELEASE, 0, 1, &lock_keys[i], 2, args);
	if (ctx->conn->ops->exec(ctx, lock_keys[0], n, cmds, replies) != FENCE_OK)
		goto done;
	for (i = 0; i < n; i++)
	{
		redisReply *r = replies[i];

		if (fence_reply_is(r, "NOSCRIPT"))
		{
			freeReplyObject(r);
			rcs[i] = fence_master_release(ctx, lock_keys[i], owner);
		}
		else if (r->type == REDIS_REPLY_INTEGER)
		{
			rcs[i] = r->integer == 1 ? 1 : 0;
			freeReplyObject(r);
		}
		else
			rcs[i] = fence_reply_error(ctx, r);
		if (rcs[i] < 0)
			note_error(ctx, &first);
	}
	restore_error(ctx, &first);
	rc = FENCE_OK;
done:
	free(cmds);
	free(replies);
	return rc;
}

/*
 * Give back the lock "lock_key" of "owner" and make one attempt "how" at
 * "l", in one write: the release script, then the acquire script, as a
 * worker that moves from one resource to the next would send them one
 * after the other, but without waiting for the first reply.  Redis runs
 * them in that order, each on its own, so the release is done (and its
 * lock handed to its first waiter) before the acquire runs, whatever the
 * resources.  "*release_err" gets 0 when the lock was given back,
 * FENCE_ERR_LOST when it was not the owner's (nothing touched), or the
 * error the release met; the return value and ctx->err are the
 * acquire's, as fence_master_acquire's.  A script the server has lost
 * (NOSCRIPT), and an acquire that did not run (a Cluster redirect) or
 * was busy behind a release that has to be sent again, go again on their
 * own, in that order.  When the write broke, both outcomes are unknown
 * and both are that error.
 */
int
fence_master_release_acquire(fence_ctx *ctx, const char *lock_key, const char *owner,
							 fence_lease *l, enum fence_attempt how, int *release_err)
{
	const char *rargs[2] = {owner, "1"};
	acquire_args a;
	fence_cmd	cmds[2];
	redisReply *replies[2];
	redisReply *r;
	int			again = 0,
				rc;

	acquire_setup(&a, l, how);
	fence_script_cmd(&cmds[0], FENCE_SCRIPT_RELEASE, 0, 1, &lock_key, 2, rargs);
	fence_script_cmd(&cmds[1], FENCE_SCRIPT_ACQUIRE, 0, 4, a.keys, 3, a.args);
	if (ctx->conn->ops->exec(ctx, lock_key, 2, cmds, replies) != FENCE_OK)
	{
		*release_err = ctx->err;
		return -1;
	}
	r = replies[0];
	if (fence_reply_is(r, "NOSCRIPT"))
	{
		freeReplyObject(r);
		again = 1;
		rc = fence_master_release(ctx, lock_key, owner);
	}
	else if (r->type == REDIS_REPLY_INTEGER)
	{
		rc = r->integer == 1 ? 1 : 0;
		freeReplyObject(r);
	}
	else
		rc = fence_reply_error(ctx, r);
	*release_err = rc == 1 ? 0 : rc == 0 ? FENCE_ERR_LOST : ctx->err;
	fence_clear_error(ctx);

	r = replies[1];
	if (fence_reply_is(r, "NOSCRIPT") || fence_reply_transient(r))
	{
		freeReplyObject(r);
		return fence_master_acquire(ctx, l, 0, how);
	}
	rc = acquire_reply(ctx, l, r, -1);
	/* busy, maybe with the lock the release had not given back yet */
	if (rc == 0 && again)
		return fence_master_acquire(ctx, l, 0, how);
	return rc;
}

/* Owner, remaining TTL and counter of one resource, in one round trip. */
int
fence_master_show(fence_ctx *ctx, const char *lock_key, const char *token_key,
				  fence_info *info)
{
	const char *keys[2] = {lock_key, token_key};
	redisReply *r;

	r = fence_script_run(ctx, FENCE_SCRIPT_SHOW, 2, keys, 0, NULL, NULL);
	if (r == NULL)
		return -1;
	return fence_parse_show(ctx, r, token_key, info) == FENCE_OK ? 1 : -1;
}

/*
 * Run script "which" with "nkeys" keys (at most 4; the first one routes
 * the command) and "nargs" arguments (at most 3) on the master of the
 * keys.  Returns the reply (which may be an error reply), or NULL on a
 * transport error.
 *
 * With "acked" not NULL and replicas asked for (fence_set_min_replicas), a
 * WAIT goes out in the same write, right behind the script, and "*acked"
 * receives how many replicas acknowledged the script's writes (-1 when not
 * asked; FENCE_WAIT_REFUSED, with the error set, when the ACL refused
 * WAIT: the script ran all the same).
 *
 * A script the ACL refuses (EVALSHA, EVAL, or a command or key inside it)
 * fails here with FENCE_ERR_AUTH and a message that names it: Redis names
 * neither the command nor the key a script was refused.
 */
redisReply *
fence_script_run(fence_ctx *ctx, enum fence_script which,
				 int nkeys, const char **keys, int nargs, const char **args,
				 long long *acked)
{
	struct fence_conn *c = ctx->conn;
	fence_cmd	cmds[2];
	redisReply *replies[2];
	char		nrep[16],
				wait_ms[24];
	int			ncmds = 1,
				eval;

	if (acked != NULL)
		*acked = -1;
	if (nkeys > 4 || nargs > 3)
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "too many script arguments");
		return NULL;
	}
	if (acked != NULL && c->min_replicas > 0)
	{
		snprintf(nrep, sizeof(nrep), "%d", c->min_replicas);
		snprintf(wait_ms, sizeof(wait_ms), "%ld", c->replica_timeout_ms);
		cmds[1].argc = 3;
		cmds[1].argv[0] = "WAIT";
		cmds[1].argv[1] = nrep;
		cmds[1].argv[2] = wait_ms;
		cmds[1].argvlen = NULL;
		ncmds = 2;
	}
	for (eval = 0; eval <= 1; eval++)
	{
		fence_script_cmd(&cmds[0], which, eval, nkeys, keys, nargs, args);
		if (c->ops->exec(ctx, keys[0], ncmds, cmds, replies) != FENCE_OK)
			return NULL;
		/* Script cache flushed under us: send the source instead. */
		if (!eval && fence_reply_is(replies[0], "NOSCRIPT"))
		{
			fence_free_replies(ncmds, replies);
			continue;
		}
		break;
	}
	if (replies[0]->type == REDIS_REPLY_ERROR && fence_reply_refused(replies[0]->str))
	{
		/*
		 * Redis appends " script: SHA, on @user_script:N.": cut at its last
		 * " script: ", as Redis 7.2's own words hold one ("ACL failure in
		 * script: User u has no permissions to run the 'set' command").
		 */
		const char *cut = NULL,
				   *p;

		for (p = replies[0]->str; (p = strstr(p, " script: ")) != NULL; p++)
			cut = p;

		fence_set_error(ctx, FENCE_ERR_AUTH, "Redis refused fence's %s script (%s): %.*s",
						fence_script_name(which), eval ? "EVAL" : "EVALSHA",
						cut ? (int) (cut - replies[0]->str) : (int) strlen(replies[0]->str),
						replies[0]->str);
		fence_free_replies(ncmds, replies);
		return NULL;
	}
	if (ncmds == 2)
	{
		/* a WAIT refused (say, on a server without replication) counts as
		 * no acknowledgement at all: the caller gives the lease back */
		*acked = replies[1]->type == REDIS_REPLY_INTEGER ? replies[1]->integer : 0;
		if (replies[1]->type == REDIS_REPLY_ERROR && fence_reply_refused(replies[1]->str))
		{
			fence_set_error(ctx, FENCE_ERR_AUTH, "Redis refused WAIT: %s", replies[1]->str);
			*acked = FENCE_WAIT_REFUSED;
		}
		freeReplyObject(replies[1]);
	}
	return replies[0];
}
