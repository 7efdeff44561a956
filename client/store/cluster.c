/*
 * client/store/cluster.c
 *	  The Redis Cluster topology: redis-cluster://host[:port][,host[:port]...]
 *
 * A cluster splits keys over 16384 hash slots, each owned by one master.
 * All keys of a resource (its lock, counter, queue, places and the wake
 * list of each waiter) carry the same hash tag (fence_key), so they share
 * a slot and every lease script runs whole on one master; the
 * lease operations are those of master.c, and this file only routes:
 *
 *	 slot      CRC16-XMODEM of the key's hash tag (or of the whole key when it
 *	           has none), modulo 16384: Redis's own rule, applied to the key
 *	           fence_key() made, so the two can never disagree;
 *	 map       which master owns which slot, read with CLUSTER SHARDS, or
 *	           CLUSTER SLOTS from servers older than Redis 7, from any node
 *	           that answers (the URL's hosts are only where to start),
 *	           starting with the one that answered last in this process;
 *	           each node asked gets a share of the time (fence_share_ms),
 *	           so that a frozen one (TCP accepted, nothing answered) costs
 *	           at most its share, once per process, not the operation;
 *	 MOVED     the slot has a new owner for good: send there, and read the
 *	           whole map again before the next operation (a resharding
 *	           rarely moves just one slot), in a third of its time: the
 *	           map it has, with the redirect, still routes it;
 *	 ASK       the slot is being migrated and the key is already on the
 *	           target: send ASKING and the command there, in one write,
 *	           for this command only;
 *	 TRYAGAIN  a migration splits the keys of one script for a moment;
 *	 CLUSTERDOWN  the cluster is failing over or lost slots;
 *	 LOADING   the node restarted and loads its data;
 *	           all are retried after a short sleep, as are nodes that cannot
 *	           be reached (with a fresh map), until the operation's deadline
 *	           (node.c), and then reported as unreachable (FENCE_ERR_IO).  A
 *	           command sent without a reply is never sent again: it may
 *	           have run.
 *
 * A master that a failover (CLUSTER FAILOVER, or the cluster's own) turns
 * into a replica answers MOVED to the new one, and closes the connections
 * of the clients it was blocking (a waiter's BLPOP): a waiter rides that
 * (lease.c).  An ACL that refuses CLUSTER SHARDS and SLOTS, or ASKING, is
 * reported at once (FENCE_ERR_AUTH): every node takes the same login.
 *
 * hiredis-cluster exists, but not for hiredis 0.14; this is the little of
 * it that leases need.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

#define CLUSTER_SLOTS 16384
#define MAX_REDIRECTS 16
#define RETRY_MIN_MS 10
#define RETRY_MAX_MS 200
/* A map read that is only due (after MOVED) gets 1/REFRESH_DUE_SHARE of
 * the operation's time; the operation keeps the rest. */
#define REFRESH_DUE_SHARE 3

typedef struct cluster_store
{
	fence_url	login;			/* credentials, and the seed addresses */
	char	   *seeds;			/* the seeds as "host:port,...", for
								 * answered_by */
	int			nnodes;
	int			cap;
	fence_node *nodes;			/* every node seen: seeds, masters */
	int			next_ask;		/* where the next map refresh starts */
	int			refresh_due;	/* read the map before the next operation */
	int16_t		slots[CLUSTER_SLOTS];	/* index into "nodes", -1 unknown */
} cluster_store;

/*
 * The node that gave the last slot map in this process, for the cluster
 * its seeds name: every store made later for those seeds (the heartbeat's
 * context, a worker's next connection) asks it first.  A frozen seed
 * listed first then costs its share of one operation once per process,
 * not once per context.  Nothing is kept across processes.
 */
static struct
{
	pthread_mutex_t mu;
	char	   *seeds;
	char	   *host;
	int			port;
}			answered_by = {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0};

/*
 * CRC16-XMODEM (polynomial 0x1021, initial value 0, no reflection), the
 * checksum Redis Cluster hashes keys with; bit by bit, since keys are short.
 */
static unsigned int
crc16(const char *buf, size_t len)
{
	unsigned int crc = 0;
	size_t		i;
	int			bit;

	for (i = 0; i < len; i++)
	{
		crc ^= (unsigned int) (unsigned char) buf[i] << 8;
		for (bit = 0; bit < 8; bit++)
			crc = (crc & 0x8000) ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
	}
	return crc;
}

/*
 * The slot of "key": if it has a '{' followed later by a '}' with at least
 * one byte between them, only those bytes (the first such pair) are hashed.
 */
unsigned int
fence_key_slot(const char *key, size_t len)
{
	size_t		open,
				close;

	for (open = 0; open < len && key[open] != '{'; open++)
		;
	if (open < len)
	{
		for (close = open + 1; close < len && key[close] != '}'; close++)
			;
		if (close < len && close > open + 1)
			return crc16(key + open + 1, close - open - 1) % CLUSTER_SLOTS;
	}
	return crc16(key, len) % CLUSTER_SLOTS;
}

/* The index of the node at "host":"port", added when unknown; -1 on OOM. */
static int
node_index(cluster_store *s, const char *host, int port)
{
	int			i;

	for (i = 0; i < s->nnodes; i++)
		if (s->nodes[i].addr.port == port && strcmp(s->nodes[i].addr.host, host) == 0)
			return i;
	if (s->nnodes == s->cap)
	{
		int			cap = s->cap ? s->cap * 2 : 8;
		fence_node *n = realloc(s->nodes, cap * sizeof(fence_node));

		if (n == NULL)
			return -1;
		s->nodes = n;
		s->cap = cap;
	}
	memset(&s->nodes[s->nnodes], 0, sizeof(fence_node));
	if (fence_url_node(&s->nodes[s->nnodes].addr, &s->login, host, port) != FENCE_OK)
		return -1;
	return s->nnodes++;
}

/* "host:port,host:port..." of the URL's seeds (malloc'd), or NULL. */
static char *
seed_list(const fence_url *url)
{
	size_t		len = 1;
	char	   *list;
	int			i;

	for (i = 0; i < url->nhosts; i++)
		len += strlen(url->hosts[i].host) + 8;
	if ((list = malloc(len)) == NULL)
		return NULL;
	list[0] = '\0';
	for (i = 0; i < url->nhosts; i++)
		snprintf(list + strlen(list), len - strlen(list), "%s%s:%d", i ? "," : "",
				 url->hosts[i].host, url->hosts[i].port);
	return list;
}

/* Start where this process was last answered, for these seeds. */
static int
ask_first_where_answered(cluster_store *s)
{
	int			rc = 0;

	pthread_mutex_lock(&answered_by.mu);
	if (answered_by.seeds != NULL && strcmp(answered_by.seeds, s->seeds) == 0)
	{
		int			i = node_index(s, answered_by.host, answered_by.port);

		if (i < 0)
			rc = -1;
		else
			s->next_ask = i;
	}
	pthread_mutex_unlock(&answered_by.mu);
	return rc;
}

/* Node "i" gave the map: remember it for the stores made later. */
static void
remember_answered(cluster_store *s, int i)
{
	char	   *seeds,
			   *host;

	pthread_mutex_lock(&answered_by.mu);
	if (answered_by.seeds == NULL || strcmp(answered_by.seeds, s->seeds) != 0 ||
		answered_by.port != s->nodes[i].addr.port ||
		strcmp(answered_by.host, s->nodes[i].addr.host) != 0)
	{
		seeds = strdup(s->seeds);
		host = strdup(s->nodes[i].addr.host);
		if (seeds != NULL && host != NULL)
		{
			free(answered_by.seeds);
			free(answered_by.host);
			answered_by.seeds = seeds;
			answered_by.host = host;
			answered_by.port = s->nodes[i].addr.port;
		}
		else
		{
			/* only a hint: without memory, start with the seeds */
			free(seeds);
			free(host);
		}
	}
	pthread_mutex_unlock(&answered_by.mu);
}

void *
fence_cluster_new(fence_ctx *ctx, const fence_url *url)
{
	cluster_store *s = calloc(1, sizeof(cluster_store));
	int			i;

	(void) ctx;
	if (s == NULL)
		return NULL;
	for (i = 0; i < CLUSTER_SLOTS; i++)
		s->slots[i] = -1;
	if (fence_url_copy(&s->login, url) != FENCE_OK)
	{
		free(s);
		return NULL;
	}
	for (i = 0; i < url->nhosts; i++)
	{
		if (node_index(s, url->hosts[i].host, url->hosts[i].port) < 0)
		{
			fence_cluster_ops.free(s);
			return NULL;
		}
	}
	if ((s->seeds = seed_list(url)) == NULL || ask_first_where_answered(s) != 0)
	{
		fence_cluster_ops.free(s);
		return NULL;
	}
	s->refresh_due = 1;
	return s;
}

static void
cluster_free(void *state)
{
	cluster_store *s = state;
	int			i;

	for (i = 0; i < s->nnodes; i++)
		fence_node_free(&s->nodes[i]);
	free(s->nodes);
	free(s->seeds);
	fence_url_free(&s->login);
	free(s);
}

/* The string value of field "name" in a RESP2 map (a flat array). */
static redisReply *
map_get(const redisReply *map, const char *name)
{
	size_t		i;

	if (map->type != REDIS_REPLY_ARRAY)
		return NULL;
	for (i = 0; i + 1 < map->elements; i += 2)
		if (map->element[i]->type == REDIS_REPLY_STRING &&
			strcmp(map->element[i]->str, name) == 0)
			return map->element[i + 1];
	return NULL;
}

/*
 * Where to reach a node: its announced endpoint, else its IP, else (empty
 * or "?": unknown to the cluster) the host we asked, as Redis documents.
 */
static const char *
endpoint(const redisReply *ep, const redisReply *ip, const char *asked)
{
	if (ep != NULL && ep->type == REDIS_REPLY_STRING && ep->len > 0 && strcmp(ep->str, "?") != 0)
		return ep->str;
	if (ip != NULL && ip->type == REDIS_REPLY_STRING && ip->len > 0 && strcmp(ip->str, "?") != 0)
		return ip->str;
	return asked;
}

/* Give slots [lo, hi] to the node at host:port in "map".  0 or -1. */
static int
assign(cluster_store *s, int16_t *map, long long lo, long long hi,
	   const char *host, long long port)
{
	int			idx;
	long long	i;

	if (lo < 0 || hi >= CLUSTER_SLOTS || lo > hi || port < 1 || port > 65535)
		return -1;
	if ((idx = node_index(s, host, (int) port)) < 0)
		return -1;
	for (i = lo; i <= hi; i++)
		map[i] = (int16_t) idx;
	return 0;
}

/* CLUSTER SHARDS (Redis 7): [{slots: [lo, hi, ...], nodes: [{...}]}...] */
static int
parse_shards(cluster_store *s, const redisReply *r, const char *asked, int16_t *map)
{
	size_t		i,
				j,
				k;

	if (r->type != REDIS_REPLY_ARRAY)
		return -1;
	for (i = 0; i < r->elements; i++)
	{
		redisReply *slots = map_get(r->element[i], "slots");
		redisReply *nodes = map_get(r->element[i], "nodes");

		if (slots == NULL || nodes == NULL || slots->type != REDIS_REPLY_ARRAY ||
			nodes->type != REDIS_REPLY_ARRAY || slots->elements % 2 != 0)
			return -1;
		for (j = 0; j < nodes->elements; j++)
		{
			redisReply *role = map_get(nodes->element[j], "role");
			/* over TLS, the node's TLS port (tls-cluster; Redis 7 names both) */
			redisReply *port = map_get(nodes->element[j], s->login.tls.enabled ? "tls-port" : "port");

			if (role == NULL || role->type != REDIS_REPLY_STRING || strcmp(role->str, "master") != 0)
				continue;
			if (port == NULL || port->type != REDIS_REPLY_INTEGER)
				return -1;
			for (k = 0; k < slots->elements; k += 2)
			{
				if (slots->element[k]->type != REDIS_REPLY_INTEGER ||
					slots->element[k + 1]->type != REDIS_REPLY_INTEGER ||
					assign(s, map, slots->element[k]->integer, slots->element[k + 1]->integer,
						   endpoint(map_get(nodes->element[j], "endpoint"),
									map_get(nodes->element[j], "ip"), asked),
						   port->integer) != 0)
					return -1;
			}
			break;
		}
	}
	return 0;
}

/* CLUSTER SLOTS (before Redis 7): [[lo, hi, [host, port, id], replicas...]...] */
static int
parse_slots(cluster_store *s, const redisReply *r, const char *asked, int16_t *map)
{
	size_t		i;

	if (r->type != REDIS_REPLY_ARRAY)
		return -1;
	for (i = 0; i < r->elements; i++)
	{
		redisReply *e = r->element[i];
		redisReply *m;

		if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
			e->element[0]->type != REDIS_REPLY_INTEGER ||
			e->element[1]->type != REDIS_REPLY_INTEGER)
			return -1;
		m = e->element[2];
		if (m->type != REDIS_REPLY_ARRAY || m->elements < 2 ||
			m->element[1]->type != REDIS_REPLY_INTEGER ||
			assign(s, map, e->element[0]->integer, e->element[1]->integer,
				   endpoint(NULL, m->element[0], asked), m->element[1]->integer) != 0)
			return -1;
	}
	return 0;
}

/*
 * Ask node "i" for the slot map; FENCE_OK with "map" filled.  An ACL that
 * refuses both commands is FENCE_ERR_AUTH (one of them is enough).
 */
static int
read_map(fence_ctx *ctx, cluster_store *s, int i, int16_t *map)
{
	const char *shards[2] = {"CLUSTER", "SHARDS"};
	const char *slots[2] = {"CLUSTER", "SLOTS"};
	redisReply *r;
	char	   *asked;
	int			old = 0,
				shards_refused = 0,
				rc,
				j;

	for (j = 0; j < CLUSTER_SLOTS; j++)
		map[j] = -1;
	r = fence_node_command(ctx, &s->nodes[i], 2, shards);
	if (r != NULL && r->type == REDIS_REPLY_ERROR && strstr(r->str, "cluster support disabled") == NULL)
	{
		/* a server before Redis 7 does not know SHARDS */
		shards_refused = fence_reply_refused(r->str);
		freeReplyObject(r);
		r = fence_node_command(ctx, &s->nodes[i], 2, slots);
		old = 1;
	}
	if (r == NULL)
		return FENCE_ERR;
	if (r->type == REDIS_REPLY_ERROR && fence_reply_refused(r->str))
	{
		char		name[300];

		fence_set_error(ctx, FENCE_ERR_AUTH, "Redis at %s refused %s: %s",
						fence_node_name(&s->nodes[i], name, sizeof(name)),
						shards_refused ? "CLUSTER SHARDS and CLUSTER SLOTS" : "CLUSTER SLOTS",
						r->str);
		freeReplyObject(r);
		return FENCE_ERR;
	}
	/* "asked" must survive node_index() growing the array */
	if ((asked = strdup(s->nodes[i].addr.host)) == NULL)
	{
		freeReplyObject(r);
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
		return FENCE_ERR;
	}
	rc = r->type != REDIS_REPLY_ARRAY ? -1 :
		old ? parse_slots(s, r, asked, map) : parse_shards(s, r, asked, map);
	if (rc != 0)
	{
		char		name[300];

		fence_set_error(ctx, FENCE_ERR_PROTOCOL, "unexpected slot map from %s%s%s",
						fence_node_name(&s->nodes[i], name, sizeof(name)),
						r->type == REDIS_REPLY_ERROR ? ": " : "",
						r->type == REDIS_REPLY_ERROR ? r->str : "");
	}
	free(asked);
	freeReplyObject(r);
	return rc == 0 ? FENCE_OK : FENCE_ERR;
}

/*
 * Read the slot map from the first node that gives one within "budget_ms",
 * trying every node known (seeds included), starting with the one that
 * answered last.  Each node gets a share of what is left (fence_share_ms):
 * a silent one must not take the time of those after it.  The next
 * refresh starts after a node that failed.
 */
static int
refresh(fence_ctx *ctx, cluster_store *s, long budget_ms)
{
	int16_t    *map = malloc(sizeof(s->slots));
	int64_t		end = fence_now_ns() + (int64_t) budget_ms * 1000000;
	int			tried,
				n = s->nnodes;

	if (map == NULL)
	{
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
		return FENCE_ERR;
	}
	for (tried = 0; tried < n; tried++)
	{
		int			i = (s->next_ask + tried) % n;
		long		left_ms = (long) ((end - fence_now_ns()) / 1000000);
		int			rc;

		if (left_ms <= 0 || fence_op_left_ms(ctx, 1) == 0)
		{
			if (tried == 0)
				fence_set_error(ctx, FENCE_ERR_IO, "no time left to read the Redis Cluster slot map");
			break;
		}
		s->nodes[i].max_ms = fence_share_ms(ctx, left_ms, n - tried);
		rc = read_map(ctx, s, i, map);
		s->nodes[i].max_ms = 0;
		if (rc == FENCE_OK)
		{
			memcpy(s->slots, map, sizeof(s->slots));
			free(map);
			s->next_ask = i;
			s->refresh_due = 0;
			remember_answered(s, i);
			fence_clear_error(ctx);
			return FENCE_OK;
		}
		s->next_ask = (i + 1) % n;
		/* every node takes the same login: a refusal is final */
		if (fence_err_refused(ctx))
			break;
	}
	free(map);
	return FENCE_ERR;
}

static int
cluster_open(fence_ctx *ctx)
{
	return refresh(ctx, ctx->conn->store, fence_op_left_ms(ctx, ctx->conn->command_ms));
}

/*
 * Parse "MOVED 3999 host:port" or "ASK 3999 host:port" into the index of
 * that node (the host may be empty: the node that replied).  -1 if bad.
 */
static int
redirect_target(cluster_store *s, const char *err, int from)
{
	const char *addr = strchr(err, ' ');
	const char *colon;
	char	   *host;
	long		port;
	int			idx;

	if (addr == NULL || (addr = strchr(addr + 1, ' ')) == NULL)
		return -1;
	addr++;
	colon = strrchr(addr, ':');
	if (colon == NULL || (port = strtol(colon + 1, NULL, 10)) < 1 || port > 65535)
		return -1;
	if (colon == addr)
		host = strdup(s->nodes[from].addr.host);
	else
		host = strndup(addr, colon - addr);
	if (host == NULL)
		return -1;
	idx = node_index(s, host, (int) port);
	free(host);
	return idx;
}

static int
cluster_exec(fence_ctx *ctx, const char *key, int ncmds, const fence_cmd *cmds,
			 redisReply **replies)
{
	cluster_store *s = ctx->conn->store;
	unsigned int slot = fence_key_slot(key, strlen(key));
	fence_cmd	asking_cmds[4];
	redisReply *asking_replies[4];
	long		wait_ms = RETRY_MIN_MS;
	int			ask = -1,
				redirects = 0,
				i,
				rc;

	if (ncmds > 3)
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "too many pipelined commands");
		return FENCE_NODE_UNREACHABLE;
	}
	/* on failure, the old map may still do: then it gets a share only */
	if (s->refresh_due &&
		refresh(ctx, s, fence_op_left_ms(ctx, ctx->conn->command_ms) /
				(s->slots[slot] >= 0 ? REFRESH_DUE_SHARE : 1)) != FENCE_OK &&
		ctx->err == FENCE_ERR_AUTH)
		return FENCE_NODE_UNREACHABLE;
	for (;;)
	{
		int			idx = ask >= 0 ? ask : s->slots[slot];
		redisReply *r;

		if (idx < 0)
		{
			if (refresh(ctx, s, fence_op_left_ms(ctx, ctx->conn->command_ms)) == FENCE_OK)
			{
				if (s->slots[slot] >= 0)
					continue;
				fence_set_error(ctx, FENCE_ERR_IO, "no Redis Cluster node serves slot %u", slot);
			}
			if (!fence_err_refused(ctx) && fence_op_back_off(ctx, &wait_ms, RETRY_MAX_MS))
				continue;
			return FENCE_NODE_UNREACHABLE;
		}
		if (ask >= 0)
		{
			/* ASKING is good for the one command right behind it */
			asking_cmds[0].argc = 1;
			asking_cmds[0].argv[0] = "ASKING";
			asking_cmds[0].argvlen = NULL;
			for (i = 0; i < ncmds; i++)
				asking_cmds[i + 1] = cmds[i];
			rc = fence_node_pipeline(ctx, &s->nodes[idx], ncmds + 1, asking_cmds, asking_replies);
			if (rc == FENCE_OK && asking_replies[0]->type == REDIS_REPLY_ERROR &&
				fence_reply_refused(asking_replies[0]->str))
			{
				char		name[300];

				fence_set_error(ctx, FENCE_ERR_AUTH, "Redis at %s refused ASKING: %s",
								fence_node_name(&s->nodes[idx], name, sizeof(name)),
								asking_replies[0]->str);
				fence_free_replies(ncmds + 1, asking_replies);
				return FENCE_NODE_UNREACHABLE;
			}
			if (rc == FENCE_OK)
			{
				freeReplyObject(asking_replies[0]);
				for (i = 0; i < ncmds; i++)
					replies[i] = asking_replies[i + 1];
			}
			ask = -1;
		}
		else
			rc = fence_node_pipeline(ctx, &s->nodes[idx], ncmds, cmds, replies);
		if (rc == FENCE_NODE_BROKEN)
		{
			s->refresh_due = 1;
			return rc;
		}
		if (rc == FENCE_NODE_UNREACHABLE)
		{
			/* a failover may have moved the slot: read the map again */
			s->refresh_due = 1;
			if (fence_err_refused(ctx) || !fence_op_back_off(ctx, &wait_ms, RETRY_MAX_MS))
				return rc;
			(void) refresh(ctx, s, fence_op_left_ms(ctx, ctx->conn->command_ms));
			continue;
		}

		r = replies[0];
		if (fence_reply_is(r, "MOVED") || fence_reply_is(r, "ASK"))
		{
			int			to = redirect_target(s, r->str, idx);

			if (to < 0 || ++redirects > MAX_REDIRECTS)
			{
				fence_set_error(ctx, FENCE_ERR_PROTOCOL, "%s from Redis Cluster: %s",
								to < 0 ? "unreadable redirect" : "too many redirects", r->str);
				fence_free_replies(ncmds, replies);
				return FENCE_NODE_UNREACHABLE;
			}
			if (fence_reply_is(r, "MOVED"))
			{
				s->slots[slot] = (int16_t) to;
				s->refresh_due = 1;
			}
			else
				ask = to;
			fence_free_replies(ncmds, replies);
			continue;
		}
		if (fence_reply_is(r, "TRYAGAIN") || fence_reply_is(r, "CLUSTERDOWN") ||
			fence_reply_is(r, "LOADING"))
		{
			char		name[300];

			if (!fence_reply_is(r, "TRYAGAIN"))
				s->refresh_due = 1;
			if (fence_op_back_off(ctx, &wait_ms, RETRY_MAX_MS))
			{
				fence_free_replies(ncmds, replies);
				if (s->refresh_due)
					(void) refresh(ctx, s, fence_op_left_ms(ctx, ctx->conn->command_ms));
				/* an ASK then TRYAGAIN per round is no redirect loop */
				redirects = 0;
				continue;
			}
			/* nothing ran, and nothing will in time: unreachable */
			fence_set_error(ctx, FENCE_ERR_IO, "Redis Cluster at %s cannot serve slot %u: %s",
							fence_node_name(&s->nodes[idx], name, sizeof(name)), slot, r->str);
			fence_free_replies(ncmds, replies);
			return FENCE_NODE_UNREACHABLE;
		}
		/* what went wrong on the way does not matter any more */
		fence_clear_error(ctx);
		return FENCE_OK;
	}
}

/*
 * Node "node" of those that hold keys: the nodes known, numbered as they
 * became known (the list only grows, so a number keeps its node across a
 * new map), each one that owns a slot in the map; another (a seed that is
 * a replica, a master that gave its slots away) is FENCE_NODE_SKIP.  One
 * try, no redirects: what is asked is the node's, not a key's.
 */
static int
cluster_node_exec(fence_ctx *ctx, int node, int ncmds, const fence_cmd *cmds,
				  redisReply **replies)
{
	cluster_store *s = ctx->conn->store;
	int			i;

	if (s->refresh_due && refresh(ctx, s, fence_op_left_ms(ctx, ctx->conn->command_ms)) != FENCE_OK)
		return FENCE_NODE_UNREACHABLE;
	if (node >= s->nnodes)
		return FENCE_NODE_PAST;
	for (i = 0; i < CLUSTER_SLOTS && s->slots[i] != node; i++)
		;
	if (i == CLUSTER_SLOTS)
		return FENCE_NODE_SKIP;
	return fence_node_pipeline(ctx, &s->nodes[node], ncmds, cmds, replies);
}

/*
 * A release and the next acquire in one write, when the slot map puts
 * both resources on one master; otherwise (or with no map yet) two calls.
 * Should the acquire's slot have moved meanwhile, its redirect makes it
 * go again on its own (master.c).
 */
static int
cluster_release_acquire(fence_ctx *ctx, const char *lock_key, const char *owner,
						fence_lease *l, enum fence_attempt how, int *release_err)
{
	cluster_store *s = ctx->conn->store;
	int			a = s->slots[fence_key_slot(lock_key, strlen(lock_key))],
				b = s->slots[fence_key_slot(l->keys.lock, strlen(l->keys.lock))];

	if (s->refresh_due || a < 0 || a != b)
		return FENCE_STORE_ONE_AT_A_TIME;
	return fence_master_release_acquire(ctx, lock_key, owner, l, how, release_err);
}

const fence_store_ops fence_cluster_ops = {
	"cluster",
	1,
	cluster_open,
	cluster_exec,
	fence_master_acquire,
	fence_master_extend,
	fence_master_release,
	fence_master_wait_acquire,
	fence_master_heal,
	fence_master_show,
	cluster_free,
	cluster_node_exec,
	NULL,						/* the members' keys are in different slots */
	NULL,
	cluster_release_acquire
};
