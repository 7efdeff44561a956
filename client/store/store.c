/*
 * client/store/store.c
 *	  Picks the topology a URL names and passes lease operations to it.
 *
 * lease.c, pg.c and heartbeat.c speak of leases only: take, extend, give
 * back, heal, show.  How those reach Redis depends on the topology, one
 * file each: single.c (one node), sentinel.c (the master Sentinel names),
 * cluster.c (the node owning the slot) and quorum.c (a majority of
 * independent nodes).  Every operation gets its own deadline here
 * (node.c), so that a topology's retries stay within the command timeout.
 *
 * A value with whitespace in it is a quorum: each word must be a redis://,
 * rediss:// or unix:// URL of an independent node.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

/*
 * Split "spec" at whitespace into at most "max" words (malloc'd copies).
 * Returns how many, max + 1 when there are more, -1 when out of memory;
 * nothing is left to free unless it returns 0..max.
 */
static int
split_words(const char *spec, char **words, int max)
{
	const char *p = spec;
	int			n = 0;

	for (;;)
	{
		const char *start;

		while (isspace((unsigned char) *p))
			p++;
		if (*p == '\0')
			return n;
		start = p;
		while (*p != '\0' && !isspace((unsigned char) *p))
			p++;
		if (n == max || (words[n] = strndup(start, p - start)) == NULL)
		{
			int			failed = n == max ? max + 1 : -1;

			while (n > 0)
				free(words[--n]);
			return failed;
		}
		n++;
	}
}

/* A context whose URL was refused has no topology to talk to. */
static int
no_store(fence_ctx *ctx)
{
	if (ctx->conn->ops != NULL)
		return 0;
	fence_set_error(ctx, FENCE_ERR_ARG, "no Redis topology: the URL was refused");
	return 1;
}

/*
 * Parse "spec": one URL, or several separated by whitespace (a quorum,
 * every one a redis://, rediss:// or unix:// URL).  Fills urls[0..*n-1], which the
 * caller frees with fence_url_free even on failure.  FENCE_OK, or
 * FENCE_ERR with a message in "errbuf" and "*oom" set when that is why.
 */
static int
parse_spec(const char *spec, fence_url *urls, int *n, char *errbuf, size_t errlen,
		   int *oom)
{
	char	   *words[FENCE_MAX_QUORUM_NODES];
	int			i,
				rc = FENCE_OK;

	*oom = 0;
	memset(urls, 0, FENCE_MAX_QUORUM_NODES * sizeof(fence_url));
	*n = split_words(spec, words, FENCE_MAX_QUORUM_NODES);
	if (*n < 0)
	{
		*oom = 1;
		snprintf(errbuf, errlen, "out of memory");
		*n = 0;
		return FENCE_ERR;
	}
	if (*n > FENCE_MAX_QUORUM_NODES)
	{
		snprintf(errbuf, errlen, "a quorum has at most %d nodes", FENCE_MAX_QUORUM_NODES);
		*n = 0;
		return FENCE_ERR;
	}
	if (*n == 0)
	{
		snprintf(errbuf, errlen, "empty Redis URL");
		return FENCE_ERR;
	}
	for (i = 0; i < *n && rc == FENCE_OK; i++)
	{
		if (fence_parse_url(words[i], &urls[i], errbuf, errlen) != FENCE_OK)
		{
			/* the only failure that is not the URL's fault */
			*oom = strcmp(errbuf, "out of memory") == 0;
			rc = FENCE_ERR;
		}
		else if (*n > 1 && urls[i].kind != FENCE_URL_NODE)
		{
			char		shown[512];

			fence_mask_url(words[i], shown, sizeof(shown));
			snprintf(errbuf, errlen,
					 "quorum member \"%s\" must be a redis://, rediss:// or unix:// URL of one independent node",
					 shown);
			rc = FENCE_ERR;
		}
	}
	for (i = 0; i < *n; i++)
		free(words[i]);
	return rc;
}

/*
 * Is "url" something fence_connect() takes: one URL, or a quorum of them?
 * On failure a message goes into "errbuf".  Nothing is contacted.
 */
int
fence_check_url(const char *url, char *errbuf, size_t errlen)
{
	fence_url	urls[FENCE_MAX_QUORUM_NODES];
	int			n,
				i,
				oom,
				rc;

	rc = parse_spec(url ? url : FENCE_DEFAULT_URL, urls, &n, errbuf, errlen, &oom);
	for (i = 0; i < n; i++)
		fence_url_free(&urls[i]);
	return rc;
}

/*
 * Does a URL of "url" (one, or a quorum of them) turn TLS verification
 * off (tls-insecure-skip-verify=yes)?  0 for a URL fence_check_url
 * refuses.  The command warns about it before connecting.
 */
int
fence_url_skips_verify(const char *url)
{
	fence_url	urls[FENCE_MAX_QUORUM_NODES];
	char		err[256];
	int			n,
				i,
				oom,
				found = 0;

	if (parse_spec(url ? url : FENCE_DEFAULT_URL, urls, &n, err, sizeof(err), &oom) == FENCE_OK)
		for (i = 0; i < n; i++)
			found |= urls[i].tls.insecure_skip_verify;
	for (i = 0; i < n; i++)
		fence_url_free(&urls[i]);
	return found;
}

/*
 * Set up the topology that "spec" names, and connect when "connect" is
 * set.  Errors: FENCE_ERR_ARG for a bad URL, else what connecting says.
 */
int
fence_store_open(fence_ctx *ctx, const char *spec, int connect)
{
	fence_url	urls[FENCE_MAX_QUORUM_NODES];
	int			n,
				i,
				oom,
				rc;

	rc = parse_spec(spec, urls, &n, ctx->errstr, sizeof(ctx->errstr), &oom);
	if (rc != FENCE_OK)
		ctx->err = oom ? FENCE_ERR_OOM : FENCE_ERR_ARG;
	else
	{
		if (n > 1)
		{
			ctx->conn->ops = &fence_quorum_ops;
			ctx->conn->store = fence_quorum_new(ctx, n, urls);
		}
		else if (urls[0].kind == FENCE_URL_SENTINEL)
		{
			ctx->conn->ops = &fence_sentinel_ops;
			ctx->conn->store = fence_sentinel_new(ctx, &urls[0]);
		}
		else if (urls[0].kind == FENCE_URL_CLUSTER)
		{
			ctx->conn->ops = &fence_cluster_ops;
			ctx->conn->store = fence_cluster_new(ctx, &urls[0]);
		}
		else
		{
			ctx->conn->ops = &fence_single_ops;
			ctx->conn->store = fence_single_new(ctx, &urls[0]);
		}
		if (ctx->conn->store == NULL)
		{
			ctx->conn->ops = NULL;
			fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
			rc = FENCE_ERR;
		}
	}
	for (i = 0; i < n; i++)
		fence_url_free(&urls[i]);
	if (rc == FENCE_OK && connect)
		rc = fence_store_connect(ctx);
	return rc;
}

/* Connect now, rather than on the first operation. */
int
fence_store_connect(fence_ctx *ctx)
{
	if (no_store(ctx))
		return FENCE_ERR;
	fence_op_begin(ctx);
	return ctx->conn->ops->open(ctx);
}

void
fence_store_close(fence_ctx *ctx)
{
	if (ctx->conn->ops != NULL && ctx->conn->store != NULL)
		ctx->conn->ops->free(ctx->conn->store);
	ctx->conn->store = NULL;
	ctx->conn->ops = NULL;
}

int
fence_store_acquire(fence_ctx *ctx, fence_lease *l, int64_t t0, enum fence_attempt how)
{
	if (no_store(ctx))
		return -1;
	fence_op_begin(ctx);
	return ctx->conn->ops->acquire(ctx, l, t0, how);
}

int
fence_store_extend(fence_ctx *ctx, const char *lock_key, const char *owner,
				   long long ttl_ms)
{
	if (no_store(ctx))
		return -1;
	fence_op_begin(ctx);
	return ctx->conn->ops->extend(ctx, lock_key, owner, ttl_ms);
}

int
fence_store_release(fence_ctx *ctx, const char *lock_key, const char *owner)
{
	if (no_store(ctx))
		return -1;
	fence_op_begin(ctx);
	return ctx->conn->ops->release(ctx, lock_key, owner);
}

/*
 * A waiter blocks until a release wakes it, "block_ms" at most, and then
 * makes an attempt "how".
 */
int
fence_store_wait(fence_ctx *ctx, fence_lease *l, int64_t *t0, long block_ms,
				 enum fence_attempt how, int *refused)
{
	int			rc;

	*refused = 0;
	if (no_store(ctx))
		return -1;
	fence_op_begin_block(ctx, block_ms);
	rc = ctx->conn->ops->wait(ctx, l, t0, block_ms, how, refused);
	ctx->conn->block_ms = 0;
	return rc;
}

int
fence_store_heal(fence_ctx *ctx, fence_lease *l, long long mark, long long ttl_ms,
				 int64_t until_ns)
{
	if (no_store(ctx))
		return -1;
	fence_op_begin(ctx);
	return ctx->conn->ops->heal(ctx, l, mark, ttl_ms, until_ns);
}

int
fence_store_show(fence_ctx *ctx, const char *lock_key, const char *token_key,
				 fence_info *info)
{
	if (no_store(ctx))
		return -1;
	fence_op_begin(ctx);
	return ctx->conn->ops->show(ctx, lock_key, token_key, info);
}

/*
 * Is the topology a quorum: every node holds its own copy of every key,
 * and a majority of them decides?
 */
int
fence_store_is_quorum(const fence_ctx *ctx)
{
	return ctx->conn->ops == &fence_quorum_ops;
}

/*
 * Send "cmds" to node "node" of those that hold keys (the topology's
 * node_exec), within an operation's deadline of its own.
 */
int
fence_store_node_exec(fence_ctx *ctx, int node, int ncmds, const fence_cmd *cmds,
					  redisReply **replies)
{
	if (no_store(ctx))
		return FENCE_NODE_UNREACHABLE;
	fence_op_begin(ctx);
	return ctx->conn->ops->node_exec(ctx, node, ncmds, cmds, replies);
}

/*
 * Send "cmds" to copy "copy" of the keys that share "key"'s hash tag: on
 * one master (single node, Sentinel, Cluster) there is one, where the key
 * lives; on a quorum each node holds one.  As fence_store_node_exec, and
 * FENCE_NODE_PAST past the last copy.
 */
int
fence_store_key_exec(fence_ctx *ctx, const char *key, int copy, int ncmds,
					 const fence_cmd *cmds, redisReply **replies)
{
	if (no_store(ctx))
		return FENCE_NODE_UNREACHABLE;
	if (fence_store_is_quorum(ctx))
		return fence_store_node_exec(ctx, copy, ncmds, cmds, replies);
	if (copy > 0)
		return FENCE_NODE_PAST;
	fence_op_begin(ctx);
	return ctx->conn->ops->exec(ctx, key, ncmds, cmds, replies);
}

/*
 * One attempt "how" at each of the "n" leases of a set, in one pipeline
 * (the topology's acquire_many), within one operation's deadline; rcs[i]
 * as fence_store_acquire.  FENCE_STORE_ONE_AT_A_TIME when the topology has
 * no such pipeline or replicas are asked for: nothing was sent.
 */
int
fence_store_acquire_many(fence_ctx *ctx, int n, fence_lease **ls, enum fence_attempt how,
						 int *rcs)
{
	if (no_store(ctx))
		return FENCE_ERR;
	if (ctx->conn->ops->acquire_many == NULL || ctx->conn->min_replicas > 0)
		return FENCE_STORE_ONE_AT_A_TIME;
	fence_op_begin(ctx);
	return ctx->conn->ops->acquire_many(ctx, n, ls, how, rcs);
}

/*
 * Give back "n" locks of "owner" in one pipeline (the topology's
 * release_many), rcs[i] as fence_store_release; FENCE_STORE_ONE_AT_A_TIME
 * when the topology has no such pipeline.
 */
int
fence_store_release_many(fence_ctx *ctx, int n, const char **lock_keys, const char *owner,
						 int *rcs)
{
	if (no_store(ctx))
		return FENCE_ERR;
	if (ctx->conn->ops->release_many == NULL)
		return FENCE_STORE_ONE_AT_A_TIME;
	fence_op_begin(ctx);
	return ctx->conn->ops->release_many(ctx, n, lock_keys, owner, rcs);
}

/*
 * Give back a lock and make an attempt at "l" in one write (the
 * topology's release_acquire), within one operation's deadline;
 * FENCE_STORE_ONE_AT_A_TIME, with nothing sent, when the topology cannot
 * (a quorum, a Cluster whose two keys live on two masters) or replicas
 * are asked for (the acquire then needs its WAIT).
 */
int
fence_store_release_acquire(fence_ctx *ctx, const char *lock_key, const char *owner,
							fence_lease *l, enum fence_attempt how, int *release_err)
{
	if (no_store(ctx))
		return -1;
	if (ctx->conn->ops->release_acquire == NULL || ctx->conn->min_replicas > 0)
		return FENCE_STORE_ONE_AT_A_TIME;
	fence_op_begin(ctx);
	return ctx->conn->ops->release_acquire(ctx, lock_key, owner, l, how, release_err);
}

/*
 * Wait for "replicas" replicas after each acquire and heal, for at most
 * "timeout_ms" (which must leave time within the command timeout).
 */
int
fence_set_min_replicas(fence_ctx *ctx, int replicas, long timeout_ms)
{
	fence_clear_error(ctx);
	if (replicas < 0 || (replicas > 0 && (timeout_ms <= 0 || timeout_ms >= ctx->conn->command_ms)))
	{
		fence_set_error(ctx, FENCE_ERR_ARG,
						"replicas must be 0 or more, and their timeout between 1 ms and the command timeout (%ld ms)",
						ctx->conn->command_ms);
		return FENCE_ERR;
	}
	if (replicas > 0 && ctx->conn->ops == &fence_quorum_ops)
	{
		fence_set_error(ctx, FENCE_ERR_ARG,
						"waiting for replicas needs one master (single node, Sentinel or Cluster), not a quorum");
		return FENCE_ERR;
	}
	ctx->conn->min_replicas = replicas;
	ctx->conn->replica_timeout_ms = timeout_ms;
	return FENCE_OK;
}
