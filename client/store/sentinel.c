/*
 * client/store/sentinel.c
 *	  The Sentinel topology:
 *	  redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/MASTER[?db=N]
 *
 * Sentinels watch a master and its replicas and promote a replica when the
 * master fails.  This follows the Sentinel clients guide:
 *
 *	 1. ask the sentinels in turn, starting with the one that answered last,
 *	    SENTINEL get-master-addr-by-name MASTER, until one names an address
 *	    (a sentinel that cannot be reached or does not know MASTER is
 *	    skipped);
 *	 2. connect there (AUTH and SELECT as the URL says; the sentinels are
 *	    asked without credentials) and check with ROLE that the server
 *	    really is a master: during a failover the sentinels' view lags;
 *	 3. do it all again on every reconnect: a connection is dropped on any
 *	    transport error, and on a READONLY reply (the server was demoted to
 *	    a replica) or a LOADING one (it is loading its data);
 *	 4. before each extend, ask again: after a failover the old master goes
 *	    on accepting writes, as a master, until Sentinel converts it into a
 *	    replica (about ten seconds later), and a heartbeat that stayed
 *	    connected to it would extend a lock nobody else can see.  Extends
 *	    come from the heartbeat every TTL/3, so the extra round trip to a
 *	    sentinel (whose connection is kept open) is cheap.  Every other
 *	    operation asks again too when the sentinels' last answer is older
 *	    than SENTINEL_RECHECK_MS: a waiter, whose attempts come every half
 *	    second at most, would otherwise take a lock on the old master
 *	    there, once the holder's copy of it expires, while the holder
 *	    renews it on the new one; a release there would find its own lock
 *	    gone (or still there) and leave the real one behind.  A burst of
 *	    operations on one context asks once.  The sentinels may take only
 *	    a third of the time left to the operation's deadline, all of them
 *	    together: silent sentinels (frozen, or cut off) must not starve the
 *	    extend to a healthy master, or the lease would be lost for nothing.
 *	    When none answers in that time the operation goes to the master
 *	    known last, connecting to it again if need be (ROLE still checks
 *	    it).
 *
 * A sentinel or master whose ACL refuses what is asked (NOPERM for ROLE or
 * SENTINEL, NOAUTH at a sentinel) is a configuration error, reported at
 * once (FENCE_ERR_AUTH) rather than retried until the deadline.
 *
 * Steps that sent nothing are retried with a short sleep until the
 * operation's deadline (node.c), so an acquire made during a failover
 * waits for the new master rather than failing.  A command that was sent
 * but got no reply is not sent again, since it may have run: the caller
 * sees an I/O error, the heartbeat simply tries again at its next beat,
 * and a waiter goes on waiting (lease.c), as it does when no master is
 * found before the operation's deadline.
 * The lease operations are those of master.c.
 *
 * What a failover does to leases: the new master has the lock and the
 * counter as far as replication had carried them.  A lease whose lock the
 * new master lacks is lost at the holder's next extend.  A counter behind
 * hands out a token again; PostgreSQL refuses it for the second owner
 * (LF001) and the client heals (pg.c).  fence_set_min_replicas() makes an
 * acquire wait until replicas have both, so that the failover keeps them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

/* Before an operation, the sentinels get 1/SENTINEL_FOLLOW_SHARE of the
 * time left, each at most a share of it (fence_share_ms); the operation
 * keeps the rest. */
#define SENTINEL_FOLLOW_SHARE 3
/* Operations other than extends ask again when the sentinels were last
 * asked longer ago than this (a waiter's beat, FENCE_WAIT_BEAT_MS). */
#define SENTINEL_RECHECK_MS 500
#define RETRY_MIN_MS 20
#define RETRY_MAX_MS 250

typedef struct sentinel_store
{
	fence_url	login;			/* master name, credentials, db, sentinels */
	int			nsentinels;
	fence_node *sentinels;
	int			first;			/* the sentinel that answered last */
	int64_t		asked_ns;		/* when the sentinels were last asked */
	fence_node	master;			/* addr valid once resolved */
	int			unknown;		/* the last round's answer: no such master */
} sentinel_store;

void *
fence_sentinel_new(fence_ctx *ctx, const fence_url *url)
{
	sentinel_store *s = calloc(1, sizeof(sentinel_store));
	fence_url	anonymous;
	int			i;

	(void) ctx;
	if (s == NULL)
		return NULL;
	if (fence_url_copy(&s->login, url) != FENCE_OK)
	{
		free(s);
		return NULL;
	}
	s->sentinels = calloc(url->nhosts, sizeof(fence_node));
	if (s->sentinels == NULL)
	{
		fence_sentinel_ops.free(s);
		return NULL;
	}
	/* no credentials for the sentinels, but TLS as for the master: where
	 * the master speaks TLS, so do the sentinels (tls-replication) */
	memset(&anonymous, 0, sizeof(anonymous));
	anonymous.tls = url->tls;
	for (; s->nsentinels < url->nhosts; s->nsentinels++)
	{
		i = s->nsentinels;
		if (fence_url_node(&s->sentinels[i].addr, &anonymous, url->hosts[i].host,
						   url->hosts[i].port) != FENCE_OK)
		{
			fence_sentinel_ops.free(s);
			return NULL;
		}
	}
	return s;
}

static void
sentinel_free(void *state)
{
	sentinel_store *s = state;
	int			i;

	for (i = 0; i < s->nsentinels; i++)
		fence_node_free(&s->sentinels[i]);
	free(s->sentinels);
	fence_node_free(&s->master);
	fence_url_free(&s->login);
	free(s);
}

/*
 * Ask the sentinels for the master's address, once round, within
 * "budget_ms" for all of them.  Returns 1 with s->master.addr set, 0 when
 * none knew it in time (ctx->err says why: FENCE_ERR_AUTH when one
 * refused to tell, the others being silent or ignorant).
 */
static int
ask_sentinels(fence_ctx *ctx, sentinel_store *s, long budget_ms)
{
	const char *argv[3] = {"SENTINEL", "get-master-addr-by-name", s->login.master};
	int64_t		end = fence_now_ns() + (int64_t) budget_ms * 1000000;
	char		refusal[FENCE_ERRSTR_LEN] = "";
	char		unknown[FENCE_ERRSTR_LEN] = "";
	int			k;

	s->unknown = 0;
	s->asked_ns = fence_now_ns();
	for (k = 0; k < s->nsentinels; k++)
	{
		int			i = (s->first + k) % s->nsentinels;
		fence_node *sn = &s->sentinels[i];
		redisReply *r;
		char		name[300];
		long		port;
		long		left_ms = (long) ((end - fence_now_ns()) / 1000000);

		if (left_ms <= 0)
		{
			fence_set_error(ctx, FENCE_ERR_IO, "no Sentinel named master \"%s\" in %ld ms",
							s->login.master, budget_ms);
			break;
		}
		sn->max_ms = fence_share_ms(ctx, left_ms, s->nsentinels - k);
		r = fence_node_command(ctx, sn, 3, argv);
		if (r == NULL)
		{
			/* start with the next one next time */
			s->first = (i + 1) % s->nsentinels;
			continue;
		}
		if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
			r->element[0]->type == REDIS_REPLY_STRING &&
			r->element[1]->type == REDIS_REPLY_STRING &&
			(port = strtol(r->element[1]->str, NULL, 10)) >= 1 && port <= 65535)
		{
			if (s->master.addr.host == NULL || strcmp(s->master.addr.host, r->element[0]->str) != 0 ||
				s->master.addr.port != port)
			{
				fence_node_free(&s->master);
				if (fence_url_node(&s->master.addr, &s->login, r->element[0]->str, (int) port) != FENCE_OK)
				{
					freeReplyObject(r);
					fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
					return 0;
				}
			}
			freeReplyObject(r);
			s->first = i;
			return 1;
		}
		fence_node_name(sn, name, sizeof(name));
		fence_node_drop(sn);
		if (r->type == REDIS_REPLY_NIL)
			snprintf(unknown, sizeof(unknown), "Sentinel %.80s knows no master named \"%.120s\"",
					 name, s->login.master);
		else if (r->type == REDIS_REPLY_ERROR && fence_reply_refused(r->str))
			snprintf(refusal, sizeof(refusal), "Sentinel %.100s refused SENTINEL get-master-addr-by-name: %s",
					 name, r->str);
		else
			fence_set_error(ctx, FENCE_ERR_IO, "Sentinel %s did not name master \"%s\": %s",
							name, s->login.master,
							r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
		freeReplyObject(r);
	}
	/*
	 * A sentinel's answer says more than the silence of the others, or the
	 * budget running out after it (a loaded machine): a master named
	 * wrong stays named so.
	 */
	if (refusal[0] != '\0')
		fence_set_error(ctx, FENCE_ERR_AUTH, "%s", refusal);
	else if (unknown[0] != '\0')
	{
		fence_set_error(ctx, FENCE_ERR_IO, "%s", unknown);
		s->unknown = 1;
	}
	return 0;
}

/* Connect to the master and check its ROLE.  FENCE_OK, or FENCE_ERR. */
static int
connect_master(fence_ctx *ctx, sentinel_store *s)
{
	const char *argv[1] = {"ROLE"};
	redisReply *r = fence_node_command(ctx, &s->master, 1, argv);
	char		name[300];
	int			ok;

	if (r == NULL)
		return FENCE_ERR;
	if (r->type == REDIS_REPLY_ERROR && fence_reply_refused(r->str))
	{
		/* asking again, or another master, cannot help: the ACL is wrong */
		fence_set_error(ctx, FENCE_ERR_AUTH, "Redis at %s, named master \"%s\" by Sentinel, refused ROLE: %s",
						fence_node_name(&s->master, name, sizeof(name)), s->login.master, r->str);
		freeReplyObject(r);
		fence_node_drop(&s->master);
		return FENCE_ERR;
	}
	ok = r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
		r->element[0]->type == REDIS_REPLY_STRING && strcmp(r->element[0]->str, "master") == 0;
	if (!ok)
	{
		fence_set_error(ctx, FENCE_ERR_IO, "%s, named master \"%s\" by Sentinel, is not a master (%s)",
						fence_node_name(&s->master, name, sizeof(name)), s->login.master,
						r->type == REDIS_REPLY_ERROR ? r->str :
						r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
						r->element[0]->type == REDIS_REPLY_STRING ? r->element[0]->str : "?");
		fence_node_drop(&s->master);
	}
	freeReplyObject(r);
	return ok ? FENCE_OK : FENCE_ERR;
}

/* Find the master and connect to it, retrying until the deadline. */
static int
resolve(fence_ctx *ctx, sentinel_store *s)
{
	long		wait_ms = RETRY_MIN_MS;
	char		answer[FENCE_ERRSTR_LEN] = "";
	int			found;

	fence_node_drop(&s->master);
	for (;;)
	{
		found = ask_sentinels(ctx, s, fence_op_left_ms(ctx, ctx->conn->command_ms));
		if (found && connect_master(ctx, s) == FENCE_OK)
			return FENCE_OK;
		/*
		 * A sentinel that knows no such master says more than a last
		 * round that found no time left to ask (a loaded machine): its
		 * answer is the error, unless a later round named the master.
		 */
		if (found)
			answer[0] = '\0';
		else if (s->unknown)
			snprintf(answer, sizeof(answer), "%s", ctx->errstr);
		/* a refused login will be refused again: no point waiting */
		if (fence_err_refused(ctx))
			return FENCE_ERR;
		if (!fence_op_back_off(ctx, &wait_ms, RETRY_MAX_MS))
		{
			if (answer[0] != '\0')
				fence_set_error(ctx, FENCE_ERR_IO, "%s", answer);
			return FENCE_ERR;
		}
	}
}

static int
sentinel_open(fence_ctx *ctx)
{
	sentinel_store *s = ctx->conn->store;

	if (resolve(ctx, s) != FENCE_OK)
		return FENCE_ERR;
	fence_clear_error(ctx);
	return FENCE_OK;
}

static int
sentinel_exec(fence_ctx *ctx, const char *key, int ncmds, const fence_cmd *cmds,
			  redisReply **replies)
{
	sentinel_store *s = ctx->conn->store;
	long		wait_ms = RETRY_MIN_MS;
	int			rc;

	(void) key;
	for (;;)
	{
		if (s->master.link == NULL && resolve(ctx, s) != FENCE_OK)
			return FENCE_NODE_UNREACHABLE;
		rc = fence_node_pipeline(ctx, &s->master, ncmds, cmds, replies);
		if (rc == FENCE_NODE_BROKEN)
			return rc;
		if (rc == FENCE_NODE_UNREACHABLE)
		{
			fence_node_drop(&s->master);
			if (fence_op_back_off(ctx, &wait_ms, RETRY_MAX_MS))
				continue;
			return rc;
		}
		if (fence_reply_is(replies[0], "READONLY") || fence_reply_is(replies[0], "LOADING"))
		{
			/* demoted, or still loading: nothing ran; find the master again */
			fence_set_error(ctx, FENCE_ERR_IO, "Redis master \"%s\" not available: %s",
							s->login.master, replies[0]->str);
			fence_free_replies(ncmds, replies);
			fence_node_drop(&s->master);
			if (fence_op_back_off(ctx, &wait_ms, RETRY_MAX_MS))
				continue;
			return FENCE_NODE_UNREACHABLE;
		}
		fence_clear_error(ctx);
		return FENCE_OK;
	}
}

/*
 * Go to the master the sentinels name now (step 4 above), asking them for
 * at most a share of the time left; with "always" unset, only when they
 * were last asked more than SENTINEL_RECHECK_MS ago.  When none answers in
 * that time, the master known last is still the best guess: connect to it
 * again if the connection was lost, rather than wait for the sentinels
 * until the operation has no time left.  Before the first resolve there is
 * nothing to follow: exec resolves.
 */
static void
follow_master(fence_ctx *ctx, int always)
{
	sentinel_store *s = ctx->conn->store;

	if (s->master.addr.host == NULL && s->master.addr.path == NULL)
		return;
	if (!always && fence_now_ns() - s->asked_ns < (int64_t) SENTINEL_RECHECK_MS * 1000000)
		return;
	/* a new address drops the connection to the old one */
	(void) ask_sentinels(ctx, s, fence_op_left_ms(ctx, ctx->conn->command_ms) /
						 SENTINEL_FOLLOW_SHARE);
	if (s->master.link == NULL)
		(void) connect_master(ctx, s);
	/* whatever failed, exec says so again if it matters */
	fence_clear_error(ctx);
}

static int
sentinel_acquire(fence_ctx *ctx, fence_lease *l, int64_t t0, enum fence_attempt how)
{
	follow_master(ctx, 0);
	return fence_master_acquire(ctx, l, t0, how);
}

static int
sentinel_extend(fence_ctx *ctx, const char *lock_key, const char *owner,
				long long ttl_ms)
{
	follow_master(ctx, 1);
	return fence_master_extend(ctx, lock_key, owner, ttl_ms);
}

static int
sentinel_release(fence_ctx *ctx, const char *lock_key, const char *owner)
{
	follow_master(ctx, 0);
	return fence_master_release(ctx, lock_key, owner);
}

static int
sentinel_acquire_many(fence_ctx *ctx, int n, fence_lease **ls, enum fence_attempt how,
					  int *rcs)
{
	follow_master(ctx, 0);
	return fence_master_acquire_many(ctx, n, ls, how, rcs);
}

static int
sentinel_release_many(fence_ctx *ctx, int n, const char **lock_keys, const char *owner,
					  int *rcs)
{
	follow_master(ctx, 0);
	return fence_master_release_many(ctx, n, lock_keys, owner, rcs);
}

static int
sentinel_release_acquire(fence_ctx *ctx, const char *lock_key, const char *owner,
						 fence_lease *l, enum fence_attempt how, int *release_err)
{
	follow_master(ctx, 0);
	return fence_master_release_acquire(ctx, lock_key, owner, l, how, release_err);
}

static int
sentinel_wait(fence_ctx *ctx, fence_lease *l, int64_t *t0, long block_ms,
			  enum fence_attempt how, int *refused)
{
	follow_master(ctx, 0);
	return fence_master_wait_acquire(ctx, l, t0, block_ms, how, refused);
}

static int
sentinel_heal(fence_ctx *ctx, fence_lease *l, long long mark, long long ttl_ms,
			  int64_t until_ns)
{
	follow_master(ctx, 0);
	return fence_master_heal(ctx, l, mark, ttl_ms, until_ns);
}

static int
sentinel_show(fence_ctx *ctx, const char *lock_key, const char *token_key,
			  fence_info *info)
{
	follow_master(ctx, 0);
	return fence_master_show(ctx, lock_key, token_key, info);
}

/* The master holds every key: node 0, the one the sentinels name now. */
static int
sentinel_node_exec(fence_ctx *ctx, int node, int ncmds, const fence_cmd *cmds,
				   redisReply **replies)
{
	if (node > 0)
		return FENCE_NODE_PAST;
	follow_master(ctx, 0);
	return sentinel_exec(ctx, NULL, ncmds, cmds, replies);
}

const fence_store_ops fence_sentinel_ops = {
	"sentinel",
	1,
	sentinel_open,
	sentinel_exec,
	sentinel_acquire,
	sentinel_extend,
	sentinel_release,
	sentinel_wait,
	sentinel_heal,
	sentinel_show,
	sentinel_free,
	sentinel_node_exec,
	sentinel_acquire_many,
	sentinel_release_many,
	sentinel_release_acquire
};
