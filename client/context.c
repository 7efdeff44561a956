/*
 * client/context.c
 *	  The fence_ctx: a Redis endpoint, its timeouts, and the last error.
 *
 * A context is returned even when connecting fails, so that the caller can
 * read ctx->err and ctx->errstr, as with hiredis.  It reconnects by itself
 * on the next command after a transport error, which is what a long-lived
 * worker wants when Redis restarts.  Only the context's life is here: it
 * stands above the topologies (store/), which it opens and closes, and
 * below the leases that use it.
 */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

static fence_ctx *
ctx_new(void)
{
	fence_ctx  *ctx = calloc(1, sizeof(fence_ctx));

	if (ctx == NULL)
		return NULL;
	ctx->conn = calloc(1, sizeof(struct fence_conn));
	if (ctx->conn == NULL)
	{
		free(ctx);
		return NULL;
	}
	if (fence_random_bytes(&ctx->conn->rng, sizeof(ctx->conn->rng)) != 0 ||
		ctx->conn->rng == 0)
		ctx->conn->rng = (uint64_t) fence_now_ns() | 1;
	return ctx;
}

/*
 * Connect to the Redis topology "url" names (NULL: FENCE_DEFAULT_URL),
 * giving up after "connect_ms"; each command may take at most
 * "command_ms".  Several URLs separated by whitespace make a quorum.
 */
fence_ctx *
fence_connect_timeout(const char *url, long connect_ms, long command_ms)
{
	fence_ctx  *ctx = ctx_new();

	if (ctx == NULL)
		return NULL;
	if (connect_ms <= 0 || command_ms <= 0)
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "timeouts must be positive");
		return ctx;
	}
	ctx->conn->connect_ms = connect_ms;
	ctx->conn->command_ms = command_ms;
	ctx->conn->spec = strdup(url ? url : FENCE_DEFAULT_URL);
	if (ctx->conn->spec == NULL)
	{
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
		return ctx;
	}
	fence_store_open(ctx, ctx->conn->spec, 1);
	return ctx;
}

fence_ctx *
fence_connect(const char *url)
{
	return fence_connect_timeout(url, FENCE_DEFAULT_CONNECT_TIMEOUT_MS,
								 FENCE_DEFAULT_COMMAND_TIMEOUT_MS);
}

/*
 * A second context for the same topology, not yet connected: the
 * heartbeat thread's own.  It shares the TLS settings already loaded.
 */
fence_ctx *
fence_ctx_clone(fence_ctx *src, long command_ms)
{
	fence_ctx  *ctx = ctx_new();

	if (ctx == NULL)
		return NULL;
	ctx->conn->connect_ms = src->conn->connect_ms;
	ctx->conn->command_ms = command_ms;
	ctx->conn->min_replicas = src->conn->min_replicas;
	ctx->conn->replica_timeout_ms = src->conn->replica_timeout_ms;
	if ((ctx->conn->spec = strdup(src->conn->spec)) == NULL ||
		fence_tls_share(ctx, src) != FENCE_OK ||
		fence_store_open(ctx, ctx->conn->spec, 0) != FENCE_OK)
	{
		fence_free(ctx);
		return NULL;
	}
	return ctx;
}

void
fence_free(fence_ctx *ctx)
{
	if (ctx == NULL)
		return;
	if (ctx->conn != NULL)
	{
		fence_park_clear(ctx);
		fence_store_close(ctx);
		fence_tls_free_all(ctx);
		if (ctx->conn->spec != NULL)
		{
			/* the URL may hold a password */
			memset(ctx->conn->spec, 0, strlen(ctx->conn->spec));
			free(ctx->conn->spec);
		}
		free(ctx->conn);
	}
	free(ctx);
}

/*
 * The reply bound (fence.h; node.c, "Cut calls").  Setting it also ends
 * the cut state of the last call, so that the same call can be made again.
 */
int
fence_set_reply_bound(fence_ctx *ctx, long bound_ms)
{
	/* ctx->err stays: it may be a cut call's, made again, still to be read */
	ctx->conn->cut = 0;
	if (bound_ms < 0)
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "reply bound must not be negative");
		return FENCE_ERR;
	}
	if (bound_ms > 0 && fence_store_is_quorum(ctx))
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "a quorum's calls cannot be bounded");
		return FENCE_ERR;
	}
	/* a bound again: the call made again is over, and what it did not take
	 * up is no one's (its connection is dropped at its next use) */
	if (bound_ms > 0)
		fence_park_clear(ctx);
	ctx->conn->bound_ms = bound_ms;
	return FENCE_OK;
}

int
fence_call_cut(const fence_ctx *ctx)
{
	return ctx->conn->cut;
}
