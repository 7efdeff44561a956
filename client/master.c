/*
 * client/master.c
 *	  Lease operations on the one master that holds a resource: a single
 *	  node, the master Sentinel names, or the Cluster node owning the slot.
 *
 * Each operation is one script (scripts.c), sent by the topology's "exec"
 * to the right node: acquire, extend, release and heal are one round trip
 * each, plus the WAIT that rides in the same write when replicas were
 * asked for (fence_set_min_replicas).
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

#include "fence_int.h"

/*
 * Fewer replicas than asked acknowledged the write "what" made: give the
 * lock back and say so.  Returns -1.
 */
static int
too_few_replicas(fence_ctx *ctx, fence_lease *l, long long acked, const char *what)
{
	struct fence_conn *c = ctx->conn;

	(void) fence_master_release(ctx, l->lock_key, l->owner);
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

/*
 * One attempt at the lock and a token.  Returns 1 with l->token set, 0
 * when busy (PTTL in busy_pttl), -1 on error.  "t0" is not needed: one
 * script on one master is all there is.
 */
int
fence_master_acquire(fence_ctx *ctx, fence_lease *l, int64_t t0)
{
	char		ttl[24];
	const char *keys[2] = {l->lock_key, l->token_key};
	const char *args[2] = {l->owner, ttl};
	long long	acked;
	redisReply *r;

	(void) t0;
	snprintf(ttl, sizeof(ttl), "%lld", l->ttl_ms);
	r = fence_script_run(ctx, FENCE_SCRIPT_ACQUIRE, 2, keys, 2, args, &acked);
	if (r == NULL)
		return -1;
	if (r->type == REDIS_REPLY_STRING)
	{
		if (fence_parse_token(r->str, r->len, &l->token) != 0)
		{
			fence_set_error(ctx, FENCE_ERR_STATE, "token counter %s holds \"%.40s\", not a positive integer",
							l->token_key, r->str);
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
	if (acked >= 0 && acked < ctx->conn->min_replicas)
		return too_few_replicas(ctx, l, acked, "lease");
	return 1;
}

/*
 * Run a compare-and-act script on "lock_key" (its first argument is the
 * owner).  Returns 1 when it acted, 0 when the lock is not the owner's, -1
 * on error.
 */
static int
compare_script(fence_ctx *ctx, enum fence_script which, const char *lock_key,
			   int nargs, const char **args)
{
	const char *keys[1] = {lock_key};
	redisReply *r;
	int			rc;

	r = fence_script_run(ctx, which, 1, keys, nargs, args, NULL);
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
	const char *args[2] = {owner, ttl};

	snprintf(ttl, sizeof(ttl), "%lld", ttl_ms);
	return compare_script(ctx, FENCE_SCRIPT_EXTEND, lock_key, 2, args);
}

/* Compare-and-DEL.  Returns 1 deleted, 0 not ours, -1 error. */
int
fence_master_release(fence_ctx *ctx, const char *lock_key, const char *owner)
{
	const char *args[1] = {owner};

	return compare_script(ctx, FENCE_SCRIPT_RELEASE, lock_key, 1, args);
}

/*
 * Lift the counter to "mark" (never lower it) and take the next token,
 * while the lock is ours.  Returns 1 with l->token set, 0 when the lock is
 * not ours any more, -1 on error.
 */
int
fence_master_heal(fence_ctx *ctx, fence_lease *l, long long mark)
{
	char		m[24];
	const char *keys[2] = {l->lock_key, l->token_key};
	const char *args[2] = {l->owner, m};
	long long	acked,
				token;
	redisReply *r;

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
						l->token_key, r->str);
		freeReplyObject(r);
		return -1;
	}
	freeReplyObject(r);
	if (acked >= 0 && acked < ctx->conn->min_replicas)
		return too_few_replicas(ctx, l, acked, "healed token");
	l->token = token;
	return 1;
}

/*
 * Read a SHOW script's reply {owner, pttl, counter} into "info".  Frees
 * "r".  FENCE_OK or FENCE_ERR.
 */
int
fence_parse_show(fence_ctx *ctx, redisReply *r, const char *token_key, fence_info *info)
{
	redisReply *owner,
			   *counter;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
		r->element[1]->type != REDIS_REPLY_INTEGER)
		return fence_reply_error(ctx, r);
	owner = r->element[0];
	counter = r->element[2];
	if (owner->type == REDIS_REPLY_STRING && (info->owner = strdup(owner->str)) == NULL)
	{
		freeReplyObject(r);
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
		return FENCE_ERR;
	}
	info->pttl_ms = r->element[1]->integer;
	if (counter->type == REDIS_REPLY_STRING &&
		fence_parse_token(counter->str, counter->len, &info->token) != 0)
	{
		fence_set_error(ctx, FENCE_ERR_STATE, "token counter %s holds \"%.40s\", not a positive integer",
						token_key, counter->str);
		freeReplyObject(r);
		return FENCE_ERR;
	}
	freeReplyObject(r);
	return FENCE_OK;
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
