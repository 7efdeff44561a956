/*
 * client/store/quorum.c
 *	  The quorum topology: N independent Redis nodes, a majority decides.
 *
 * Locks follow the Redlock algorithm: every request goes to all nodes in
 * parallel, each with a timeout far below the TTL (a round: quorum_round.c,
 * which says how a round travels and how its answers are counted, while
 * this file says what each round asks and what follows); a lock is
 * ours once a majority has it and its validity, TTL - elapsed - drift, is
 * still positive (lease.c turns that into the same local deadline as on one
 * node); on failure it is released everywhere, and the next attempt comes
 * after a random delay (lease.c's jittered backoff).  Extends need a
 * majority too.
 *
 * Waiting: a waiter keeps a place in each node's queue while the lock is
 * busy there (QLOCK, scripts.c) and blocks on its wake list on every node
 * at once (quorum_wait_acquire); a release wakes the first waiter of each node's
 * queue, and the woken take the lock with the ordinary acquire below.
 * The lock is not handed over node by node, which could split it between
 * waiters that the nodes' queues put first in different orders: a quorum
 * promises wake-ups, not first come, first served.
 *
 * Tokens stay strictly increasing across holders without any clock:
 *
 *	 1. lock round (QLOCK): each node takes the lock if free and returns its
 *	    counter, taken or not; the token T is the largest counter any node
 *	    returned, plus one;
 *	 2. claim round (QCLAIM): on every node where the lock was taken, raise
 *	    the counter to T if it is lower, only while the lock is still ours
 *	    there.  T is ours once a majority raised it.  A node whose counter
 *	    is already T or more refuses; the claim is tried again with that
 *	    counter plus one, after a short random sleep.
 *
 *	 A worker that takes the same resource again knows the counter it saw
 *	 last, C, and sends a guess G = C + 1 with the lock round: each node that
 *	 takes the lock raises its counter to G in the same step if it is
 *	 lower (QLOCK), which is the claim round done early.  When the lock is
 *	 taken on a majority and every counter returned (read before the raise)
 *	 is below G, both rounds' conditions hold, T = G, and the acquire took
 *	 one round, as Redlock's does.  Otherwise the claim round follows as
 *	 above, with T above every counter returned and so above G too; the
 *	 nodes that raised to G hold a counter that was never a token, which
 *	 costs nothing (tokens must grow, not be dense).
 *
 * Why that works (client/README.md has the proof in full): a successful
 * claim leaves T on a majority, and a node never raises a counter to a
 * value it already holds.  Two holders' claim majorities share a node, so
 * two holders never get the same token while that node keeps its data; and
 * a holder that starts after another one's claim finished reads, or must
 * raise past, a counter of at least that token.  A node that restarted
 * empty is repaired by the next claim that reaches it.  When too many nodes
 * lost their data the assumption fails and a token may repeat:
 * PostgreSQL's check (LF001) stays the backstop, and healing (pg.c) claims
 * a token above PostgreSQL's mark on a majority.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"
/* Tries of a claim before it gives up (each after a random pause). */
#define CLAIM_ATTEMPTS 16


/*
 * The keys and arguments of a release: compare-and-DEL, then wake the
 * first waiter without handing it the lock (see the top of the file).
 */
#define RELEASE_SETUP(lock_key, owner) \
	const char *keys[1] = {(lock_key)}; \
	const char *args[2] = {(owner), "0"}

/* Give the lock back on every node, whatever each one says. */
static void
release_all(fence_ctx *ctx, quorum_store *s, const char *lock_key, const char *owner,
			long timeout_ms)
{
	RELEASE_SETUP(lock_key, owner);
	fence_quorum_round(ctx, s, NULL, FENCE_SCRIPT_RELEASE, 1, keys, 2, args, timeout_ms);
	fence_quorum_clear(s);
}

static int
count(const int *v, int n)
{
	int			i,
				c = 0;

	for (i = 0; i < n; i++)
		c += v[i] != 0;
	return c;
}

/* Sleep a random 1..max_ms milliseconds (never past "until_ns"). */
static void
jitter(fence_ctx *ctx, long max_ms, int64_t until_ns)
{
	int64_t		ns = (int64_t) (1 + fence_rand(ctx) % (uint64_t) max_ms) * 1000000;
	int64_t		left = until_ns - fence_now_ns();

	fence_sleep_ns(ns < left ? ns : left);
}

/*
 * Claim a token of at least "t" on a majority of the nodes flagged in
 * s->ours (where the lock is ours), before "until_ns".  Returns 1 with
 * "*token", 0 when the lock is ours on too few nodes now, -1 on error.
 */
static int
claim(fence_ctx *ctx, quorum_store *s, const char *lock_key, const char *token_key,
	  const char *owner, long long t, int64_t until_ns, long timeout_ms,
	  long long *token)
{
	const char *keys[2] = {lock_key, token_key};
	char		tbuf[24];
	const char *args[2] = {owner, tbuf};
	int			send[FENCE_MAX_QUORUM_NODES];
	int			attempt,
				won = 0,
				i;

	for (i = 0; i < s->n; i++)
		s->claimed[i] = 0;
	for (attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++)
	{
		long long	high = -1;

		if (fence_now_ns() >= until_ns)
		{
			fence_set_error(ctx, FENCE_ERR_IO, "lease ran out while claiming a token on a majority");
			return -1;
		}
		/* the same token again only where it is not claimed yet */
		for (i = 0; i < s->n; i++)
			send[i] = s->ours[i] && s->claimed[i] != t;
		snprintf(tbuf, sizeof(tbuf), "%lld", t);
		fence_quorum_round(ctx, s, send, FENCE_SCRIPT_QCLAIM, 2, keys, 2, args, timeout_ms);
		for (i = 0; i < s->n; i++)
		{
			redisReply *r = s->fan[i].reply;

			if (!send[i] || r == NULL)
				continue;
			switch (fence_reply_int_at(r, 0))
			{
				case 1:
					s->claimed[i] = t;
					break;
				case 0:
					s->ours[i] = 0;
					break;
				case 2:
					if (fence_reply_counter_at(r, 1) > high)
						high = fence_reply_counter_at(r, 1);
					break;
				default:
					fence_fan_why(&s->fan[i], r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
					freeReplyObject(r);
					s->fan[i].reply = NULL;
			}
		}
		won = 0;
		for (i = 0; i < s->n; i++)
			won += s->ours[i] && s->claimed[i] == t;
		if (won >= QUORUM_MAJORITY(s))
		{
			fence_quorum_clear(s);
			*token = t;
			return 1;
		}
		if (count(s->ours, s->n) < QUORUM_MAJORITY(s))
		{
			fence_quorum_clear(s);
			return 0;
		}
		if (high >= t)
		{
			/* someone got there first: go above it, after a random pause */
			if (high == INT64_MAX)
			{
				fence_quorum_clear(s);
				fence_set_error(ctx, FENCE_ERR_OVERFLOW, "token counter overflow on key %s", token_key);
				return -1;
			}
			t = high + 1;
		}
		jitter(ctx, 2L << (attempt < 5 ? attempt : 5), until_ns);
	}
	fence_quorum_error(ctx, s, "could not claim a token", won);
	fence_quorum_clear(s);
	return -1;
}

static int
quorum_open(fence_ctx *ctx)
{
	quorum_store *s = ctx->conn->store;
	const char *argv[1] = {"PING"};
	int			i,
				got = 0;

	fence_quorum_clear(s);
	for (i = 0; i < s->n; i++)
	{
		s->fan[i].send = 1;
		s->fan[i].cmd.argc = 1;
		s->fan[i].cmd.argv[0] = argv[0];
		s->fan[i].cmd.argvlen = NULL;
	}
	/* a majority is enough: the others are connected by the first round */
	fence_fanout(ctx, s->n, s->fan, fence_quorum_node_ms(ctx, 0), QUORUM_MAJORITY(s));
	for (i = 0; i < s->n; i++)
	{
		redisReply *r = s->fan[i].reply;

		if (r != NULL && r->type == REDIS_REPLY_ERROR)
		{
			/* PING refused (NOPERM): say so, as for a node that is down */
			char		why[sizeof(s->fan[i].why)];

			snprintf(why, sizeof(why), "PING: %s", r->str);
			fence_fan_why(&s->fan[i], why);
			freeReplyObject(r);
			s->fan[i].reply = NULL;
		}
		got += s->fan[i].reply != NULL;
	}
	if (got < QUORUM_MAJORITY(s))
	{
		fence_quorum_error(ctx, s, "could not connect to Redis", got);
		fence_quorum_clear(s);
		return FENCE_ERR;
	}
	fence_quorum_clear(s);
	return FENCE_OK;
}

/* The guess for the next token of "token_key": one above what was seen. */
static long long
guess_for(const quorum_store *s, const char *token_key)
{
	if (s->seen_key == NULL || strcmp(s->seen_key, token_key) != 0 || s->seen == INT64_MAX)
		return 0;
	return s->seen + 1;
}

/* Remember "counter" as seen for "token_key" (out of memory: forget). */
static void
saw(quorum_store *s, const char *token_key, long long counter)
{
	if (s->seen_key == NULL || strcmp(s->seen_key, token_key) != 0)
	{
		free(s->seen_key);
		s->seen = 0;
		if ((s->seen_key = strdup(token_key)) == NULL)
			return;
	}
	if (counter > s->seen)
		s->seen = counter;
}

/*
 * Lock round, then claim round (or the lock round alone when its guess
 * holds: see the top of the file).  Returns 1 with l->token set, 0 busy (or
 * lost in a race: try again), -1 on error.  "how" says what a waiter does
 * with its places in the nodes' queues.
 */
static int
quorum_acquire(fence_ctx *ctx, fence_lease *l, int64_t t0, enum fence_attempt how)
{
	static const char *const hows[] = {"0", "1", "2"};
	quorum_store *s = ctx->conn->store;
	const char *keys[4] = {l->keys.lock, l->keys.token, l->keys.queue, l->keys.alive};
	char		ttl[24],
				mode[32];
	const char *args[3] = {l->owner, ttl, mode};
	long		nms = fence_quorum_node_ms(ctx, l->ttl_ms);
	long long	guess = guess_for(s, l->keys.token);
	int64_t		until = t0 + (l->ttl_ms - fence_drift_ms(l->ttl_ms)) * 1000000;
	/* the id without a suffix: an owner id holds no '.' (owner.c) */
	size_t		base = strcspn(l->owner, ".");
	long long	pttl[FENCE_MAX_QUORUM_NODES];
	long long	high = 0;
	int			busy = 0,
				answered = 0,
				guessed = 0,
				i,
				rc;

	/*
	 * Every attempt locks under an owner of its own, the lease's id plus
	 * ".N".  A request that timed out is not over: its connection is
	 * dropped, but a node may still run it, later than the next attempt's
	 * lock round on a new connection.  Were the owner the same, an earlier
	 * attempt's late release would delete a later attempt's lock, and two
	 * clients could each count that node in their majority.  The queues
	 * know the waiter by the id without the suffix (QLOCK).
	 */
	snprintf(l->owner + base, sizeof(l->owner) - base, ".%u", ++l->attempts);
	snprintf(ttl, sizeof(ttl), "%lld", l->ttl_ms);
	if (guess > 0)
		snprintf(mode, sizeof(mode), "%s/%lld", hows[how], guess);
	else
		snprintf(mode, sizeof(mode), "%s", hows[how]);
	fence_quorum_round(ctx, s, NULL, FENCE_SCRIPT_QLOCK, 4, keys, 3, args, nms);
	for (i = 0; i < s->n; i++)
	{
		redisReply *r = s->fan[i].reply;
		long long	c = fence_reply_counter_at(r, 1);

		s->ours[i] = 0;
		if (r == NULL)
			continue;
		if (c < 0)
		{
			fence_fan_why(&s->fan[i], r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
			freeReplyObject(r);
			s->fan[i].reply = NULL;
			continue;
		}
		/* every counter read counts, lock taken or not */
		answered++;
		if (c > high)
			high = c;
		if (fence_reply_int_at(r, 0) == 1)
		{
			s->ours[i] = 1;
			guessed += fence_reply_int_at(r, 2) == 1;
		}
		else
			pttl[busy++] = fence_reply_int_at(r, 2);
	}
	saw(s, l->keys.token, high);

	if (count(s->ours, s->n) < QUORUM_MAJORITY(s))
	{
		int			free_nodes = s->n - busy;
		int			need = QUORUM_MAJORITY(s) - free_nodes;

		if (answered < QUORUM_MAJORITY(s))
			fence_quorum_error(ctx, s, "could not acquire", answered);
		release_all(ctx, s, l->keys.lock, l->owner, nms);
		if (answered < QUORUM_MAJORITY(s))
			return -1;

		/*
		 * Busy.  The lock can be had once "need" more of the busy nodes let
		 * it go: wake after the need-th shortest PTTL.  need <= 0 is a
		 * split between contenders: a random delay (lease.c) breaks it.
		 */
		ctx->conn->busy_pttl = -1;
		if (need > 0 && need <= busy)
		{
			int			j,
						k;

			for (j = 1; j < busy; j++)
				for (k = j; k > 0 && pttl[k - 1] > pttl[k]; k--)
				{
					long long	tmp = pttl[k];

					pttl[k] = pttl[k - 1];
					pttl[k - 1] = tmp;
				}
			ctx->conn->busy_pttl = pttl[need - 1];
		}
		fence_quorum_clear(s);
		return 0;
	}
	fence_quorum_clear(s);
	if (high == INT64_MAX)
	{
		release_all(ctx, s, l->keys.lock, l->owner, nms);
		fence_set_error(ctx, FENCE_ERR_OVERFLOW, "token counter overflow on key %s", l->keys.token);
		return -1;
	}

	/* every node that took the lock raised its counter to the guess, and
	 * no node answered with a counter at or above it: the claim is done */
	if (guess > high && guessed == count(s->ours, s->n))
	{
		l->token = guess;
		rc = 1;
	}
	else
		rc = claim(ctx, s, l->keys.lock, l->keys.token, l->owner, high + 1, until, nms, &l->token);
	if (rc == 1)
		saw(s, l->keys.token, l->token);
	if (rc == 1 && fence_now_ns() < until)
		return 1;
	/* lost on the way, too slow, or an error: let go everywhere */
	release_all(ctx, s, l->keys.lock, l->owner, nms);
	if (rc == 1)
	{
		fence_set_error(ctx, FENCE_ERR_IO, "acquire on a quorum took longer than the lease's validity");
		return -1;
	}
	if (rc == 0)
		ctx->conn->busy_pttl = -1;
	return rc;
}

static int
quorum_extend(fence_ctx *ctx, const char *lock_key, const char *owner, long long ttl_ms)
{
	char		ttl[24];
	const char *keys[1] = {lock_key};
	const char *args[2] = {owner, ttl};

	snprintf(ttl, sizeof(ttl), "%lld", ttl_ms);
	return fence_quorum_compare(ctx, ctx->conn->store, FENCE_SCRIPT_EXTEND,
								1, keys, 2, args,
								fence_quorum_node_ms(ctx, ttl_ms), "could not extend");
}

static int
quorum_release(fence_ctx *ctx, const char *lock_key, const char *owner)
{
	RELEASE_SETUP(lock_key, owner);
	return fence_quorum_compare(ctx, ctx->conn->store, FENCE_SCRIPT_RELEASE,
								1, keys, 2, args,
								fence_quorum_node_ms(ctx, 0), "could not release");
}

/*
 * Block on the waiter's wake list on every node at once until the first
 * node answers (a release there woke it, or "block_ms" passed), then make
 * an ordinary attempt, "*t0" the time before it.  Returns as
 * quorum_acquire; "*refused" when the nodes refused to block.  The nodes
 * still blocked lose their connection (fanout.c), and the attempt's round
 * connects them again.
 */
static int
quorum_wait_acquire(fence_ctx *ctx, fence_lease *l, int64_t *t0, long block_ms,
					enum fence_attempt how, int *refused)
{
	quorum_store *s = ctx->conn->store;
	char		secs[32];
	int			i,
				errors = 0,
				answered = 0;

	fence_quorum_clear(s);
	for (i = 0; i < s->n; i++)
	{
		s->fan[i].send = 1;
		fence_blpop_cmd(&s->fan[i].cmd, l->wake_key, block_ms, secs, sizeof(secs));
	}
	fence_fanout(ctx, s->n, s->fan, block_ms + fence_quorum_node_ms(ctx, 0), 1);
	for (i = 0; i < s->n; i++)
	{
		if (s->fan[i].reply == NULL)
			continue;
		answered++;
		errors += s->fan[i].reply->type == REDIS_REPLY_ERROR;
	}
	fence_quorum_clear(s);
	*refused = answered > 0 && errors == answered;
	/* a node answered: only our own pause can have made us late */
	if (answered > 0 && ctx->conn->deadline_ns != 0 && fence_now_ns() >= ctx->conn->deadline_ns)
		fence_conn_grace(ctx);
	fence_op_begin(ctx);
	*t0 = fence_now_ns();
	return quorum_acquire(ctx, l, *t0, how);
}

/*
 * PostgreSQL has accepted "mark" already: claim a token above it on a
 * majority (and above any counter that refuses), lock held.  The claim
 * must be over by "until" (the lease's local deadline) and may ask each
 * node for "ttl_ms" (the lease's TTL): the caller reads both, as the
 * heartbeat's extends change them.
 */
static int
quorum_heal(fence_ctx *ctx, fence_lease *l, long long mark, long long ttl_ms, int64_t until)
{
	quorum_store *s = ctx->conn->store;
	int			i;

	for (i = 0; i < s->n; i++)
		s->ours[i] = 1;			/* QCLAIM tells where it is not */
	if (mark == INT64_MAX)
	{
		fence_set_error(ctx, FENCE_ERR_OVERFLOW, "token counter overflow on key %s", l->keys.token);
		return -1;
	}
	if (claim(ctx, s, l->keys.lock, l->keys.token, l->owner, mark + 1, until,
			  fence_quorum_node_ms(ctx, ttl_ms), &l->token) != 1)
		return -1 + (ctx->err == 0);
	saw(s, l->keys.token, l->token);
	return 1;
}

/*
 * The owner a majority agrees on (with the PTTL for which a majority
 * still has it), and the highest counter of any node.
 */
static int
quorum_show(fence_ctx *ctx, const char *lock_key, const char *token_key, fence_info *info)
{
	quorum_store *s = ctx->conn->store;
	const char *keys[2] = {lock_key, token_key};
	fence_info	node[FENCE_MAX_QUORUM_NODES];
	int			got = 0,
				i,
				j,
				rc = -1;

	memset(node, 0, sizeof(node));
	fence_quorum_round(ctx, s, NULL, FENCE_SCRIPT_SHOW, 2, keys, 0, NULL,
					   fence_quorum_node_ms(ctx, 0));
	for (i = 0; i < s->n; i++)
	{
		redisReply *r = s->fan[i].reply;

		if (r == NULL)
			continue;
		s->fan[i].reply = NULL;
		/* fence_parse_show frees the reply; a node it cannot read is one
		 * that did not answer */
		if (fence_parse_show(ctx, r, token_key, &node[got]) == FENCE_OK)
			got++;
		else
		{
			fence_fan_why(&s->fan[i], ctx->errstr);
			fence_info_free(&node[got]);
			if (ctx->err == FENCE_ERR_OOM)
				goto done;
		}
	}
	if (got < QUORUM_MAJORITY(s))
	{
		fence_quorum_error(ctx, s, "could not read the lock", got);
		goto done;
	}
	fence_clear_error(ctx);
	for (i = 0; i < got; i++)
	{
		long long	pttls[FENCE_MAX_QUORUM_NODES];
		int			same = 0,
					k;

		if (node[i].token > info->token)
			info->token = node[i].token;
		if (node[i].owner == NULL || info->owner != NULL)
			continue;
		for (j = 0; j < got; j++)
			if (node[j].owner != NULL && strcmp(node[j].owner, node[i].owner) == 0)
				pttls[same++] = node[j].pttl_ms;
		if (same < QUORUM_MAJORITY(s))
			continue;
		/* a majority holds it until the majority-th longest PTTL runs out */
		for (j = 1; j < same; j++)
			for (k = j; k > 0 && pttls[k - 1] < pttls[k]; k--)
			{
				long long	tmp = pttls[k];

				pttls[k] = pttls[k - 1];
				pttls[k - 1] = tmp;
			}
		if ((info->owner = strdup(node[i].owner)) == NULL)
		{
			fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
			goto done;
		}
		info->pttl_ms = pttls[QUORUM_MAJORITY(s) - 1];
	}
	rc = 1;
done:
	for (i = 0; i < got; i++)
		fence_info_free(&node[i]);
	fence_quorum_clear(s);
	return rc;
}

/* Node "node" of the quorum on its own, within a node's timeout. */
static int
quorum_node_exec(fence_ctx *ctx, int node, int ncmds, const fence_cmd *cmds,
				 redisReply **replies)
{
	quorum_store *s = ctx->conn->store;
	int			rc;

	if (node >= s->n)
		return FENCE_NODE_PAST;
	s->nodes[node].max_ms = fence_quorum_node_ms(ctx, 0);
	rc = fence_node_pipeline(ctx, &s->nodes[node], ncmds, cmds, replies);
	s->nodes[node].max_ms = 0;
	return rc;
}

const fence_store_ops fence_quorum_ops = {
	"quorum",
	0,
	quorum_open,
	NULL,						/* no one master to send commands to */
	quorum_acquire,
	quorum_extend,
	quorum_release,
	quorum_wait_acquire,
	quorum_heal,
	quorum_show,
	fence_quorum_free,
	quorum_node_exec,
	NULL,						/* each member needs a majority of its own */
	NULL,
	NULL						/* a release round, then the acquire's */
};
