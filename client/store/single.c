/*
 * client/store/single.c
 *	  The single-node topology: redis:// and unix:// URLs.
 *
 * One server holds every key; the lease operations are those of master.c.
 * A transport error fails the operation at hand (the next one reconnects):
 * with one node there is nowhere else to go.
 */
#include <stdlib.h>

#include "store.h"

typedef struct single_store
{
	fence_node	node;
} single_store;

void *
fence_single_new(fence_ctx *ctx, const fence_url *url)
{
	single_store *s = calloc(1, sizeof(single_store));

	(void) ctx;
	if (s == NULL)
		return NULL;
	if (fence_url_copy(&s->node.addr, url) != FENCE_OK)
	{
		free(s);
		return NULL;
	}
	return s;
}

static int
single_open(fence_ctx *ctx)
{
	single_store *s = ctx->conn->store;

	return fence_node_connect(ctx, &s->node);
}

static int
single_exec(fence_ctx *ctx, const char *key, int ncmds, const fence_cmd *cmds,
			redisReply **replies)
{
	single_store *s = ctx->conn->store;

	(void) key;
	return fence_node_pipeline(ctx, &s->node, ncmds, cmds, replies);
}

/* The one node holds every key: node 0. */
static int
single_node_exec(fence_ctx *ctx, int node, int ncmds, const fence_cmd *cmds,
				 redisReply **replies)
{
	if (node > 0)
		return FENCE_NODE_PAST;
	return single_exec(ctx, NULL, ncmds, cmds, replies);
}

static void
single_free(void *state)
{
	single_store *s = state;

	fence_node_free(&s->node);
	free(s);
}

const fence_store_ops fence_single_ops = {
	"single",
	0,
	single_open,
	single_exec,
	fence_master_acquire,
	fence_master_extend,
	fence_master_release,
	fence_master_wait_acquire,
	fence_master_heal,
	fence_master_show,
	single_free,
	single_node_exec,
	fence_master_acquire_many,
	fence_master_release_many,
	fence_master_release_acquire
};
