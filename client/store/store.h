/*
 * client/store/store.h
 *	  A store is one Redis topology: a single node, Sentinel, Cluster or a
 *	  quorum of independent nodes.  This is the interface between the
 *	  leases above and the topologies in this folder.
 *
 * The files here include this header only.  They reach the layers below
 * (nodes, replies, scripts, clocks: fence_int.h) and each other through
 * it, and never the lease's own state: what a lease operation needs of it
 * (its keys, owner, TTL and deadline) comes in the call.
 */
#ifndef FENCE_STORE_H
#define FENCE_STORE_H

#include "fence_int.h"

/* What an acquire attempt does when it cannot have the lock now. */
enum fence_attempt
{
	FENCE_ATTEMPT_TRY,			/* nothing: fence_acquire */
	FENCE_ATTEMPT_WAIT,			/* take, or keep, a place in the queue */
	FENCE_ATTEMPT_LAST			/* give up its place: the deadline passed */
};

/*
 * A topology: how lease operations reach Redis (store.c dispatches).  Each
 * returns 1 when it did what was asked, 0 when the lock is not ours (for
 * acquire: busy, with the PTTL in busy_pttl), -1 on error (ctx->err set).
 *
 * Single node, Sentinel and Cluster have one master per key: they only say
 * how to send commands for a key ("exec") and share the lease operations of
 * master.c.  Quorum (quorum.c) has operations of its own.
 */
typedef struct fence_store_ops
{
	const char *kind;
	/* 1: a failover moves the master (Sentinel, Cluster), and a waiter
	 * rides it: an attempt that finds no master goes on waiting (lease.c) */
	int			fails_over;
	/* open the connection(s) now; FENCE_OK or FENCE_ERR */
	int			(*open) (fence_ctx *ctx);
	/* send "cmds" pipelined to the master of "key"; FENCE_OK with every
	 * reply in "replies", or a FENCE_NODE_* code (ctx->err set) */
	int			(*exec) (fence_ctx *ctx, const char *key, int ncmds,
						 const fence_cmd *cmds, redisReply **replies);
	int			(*acquire) (fence_ctx *ctx, fence_lease *l, int64_t t0,
							enum fence_attempt how);
	int			(*extend) (fence_ctx *ctx, const char *lock_key,
						   const char *owner, long long ttl_ms);
	int			(*release) (fence_ctx *ctx, const char *lock_key,
							const char *owner);
	/* block until a release wakes the waiter "l" (at most "block_ms"), then
	 * make an attempt, as acquire; "*t0" becomes the time before the
	 * attempt was sent (or earlier), "*refused" says Redis would not block */
	int			(*wait) (fence_ctx *ctx, fence_lease *l, int64_t *t0, long block_ms,
						 enum fence_attempt how, int *refused);
	/* raise the counter above "mark" and take the next token into l->token */
	/* ... within the lease's window: its TTL "ttl_ms" and local deadline
	 * "until_ns", which the caller reads (the lease's state is not the
	 * topology's to lock) */
	int			(*heal) (fence_ctx *ctx, fence_lease *l, long long mark,
						 long long ttl_ms, int64_t until_ns);
	int			(*show) (fence_ctx *ctx, const char *lock_key,
						 const char *token_key, fence_info *info);
	void		(*free) (void *state);
	/* send "cmds" pipelined to node "node" of those that hold keys,
	 * numbered from 0: each master (a Cluster's, from its slot map), each
	 * node of a quorum; FENCE_OK with every reply, a FENCE_NODE_* code,
	 * FENCE_NODE_PAST past the last, FENCE_NODE_SKIP for one that holds no
	 * keys now (list.c scans each, and reads a quorum's queues on each) */
	int			(*node_exec) (fence_ctx *ctx, int node, int ncmds,
							  const fence_cmd *cmds, redisReply **replies);

	/*
	 * The members of a set of leases (lease_set.c) in one pipeline, where
	 * one master holds every key (single node, Sentinel); NULL where the
	 * keys live on several nodes (Cluster, quorum), and the set takes and
	 * gives back its members one at a time.  Each returns FENCE_OK with a
	 * result per lease in "rcs" (as acquire and release return them), or
	 * FENCE_ERR when the pipeline broke (ctx->err set): any of its scripts
	 * may have run then.
	 */
	/* one attempt "how" at each of "n" leases, in the order given */
	int			(*acquire_many) (fence_ctx *ctx, int n, fence_lease **ls,
								 enum fence_attempt how, int *rcs);
	/* compare-and-DEL of "n" locks of one owner, in the order given */
	int			(*release_many) (fence_ctx *ctx, int n, const char **lock_keys,
								 const char *owner, int *rcs);

	/*
	 * Give back the lock "lock_key" of "owner" and make one attempt "how"
	 * at "l" in one write, where one master holds both resources' keys;
	 * returns as acquire, the release's outcome in "*release_err" (0, or
	 * a FENCE_ERR_* kind: FENCE_ERR_LOST when the lock was not the
	 * owner's), or FENCE_STORE_ONE_AT_A_TIME when the keys are on two
	 * nodes (a Cluster's): nothing was sent.  NULL on a quorum.
	 */
	int			(*release_acquire) (fence_ctx *ctx, const char *lock_key,
									const char *owner, fence_lease *l,
									enum fence_attempt how, int *release_err);
} fence_store_ops;

/* fence_store_acquire_many and _release_many: the topology has no pipeline
 * for a set (acquire_many, release_many NULL), or replicas are asked for
 * (each acquire then needs its WAIT): take the leases one at a time */
#define FENCE_STORE_ONE_AT_A_TIME (-2)

/* What node_exec returns besides FENCE_OK and FENCE_NODE_*. */
#define FENCE_NODE_PAST		(-3)	/* no node of that number */
#define FENCE_NODE_SKIP		(-4)	/* a node that holds no keys now */

/* store.c: the operations of the context's topology */
int			fence_store_open(fence_ctx *ctx, const char *spec, int connect);
int			fence_store_connect(fence_ctx *ctx);
void		fence_store_close(fence_ctx *ctx);
int			fence_store_acquire(fence_ctx *ctx, fence_lease *l, int64_t t0,
								enum fence_attempt how);
int			fence_store_extend(fence_ctx *ctx, const char *lock_key,
							   const char *owner, long long ttl_ms);
int			fence_store_release(fence_ctx *ctx, const char *lock_key,
								const char *owner);
int			fence_store_wait(fence_ctx *ctx, fence_lease *l, int64_t *t0, long block_ms,
							 enum fence_attempt how, int *refused);
int			fence_store_heal(fence_ctx *ctx, fence_lease *l, long long mark,
							 long long ttl_ms, int64_t until_ns);
int			fence_store_show(fence_ctx *ctx, const char *lock_key,
							 const char *token_key, fence_info *info);
int			fence_store_is_quorum(const fence_ctx *ctx);
int			fence_store_node_exec(fence_ctx *ctx, int node, int ncmds,
								  const fence_cmd *cmds, redisReply **replies);
int			fence_store_key_exec(fence_ctx *ctx, const char *key, int copy, int ncmds,
								 const fence_cmd *cmds, redisReply **replies);
int			fence_store_acquire_many(fence_ctx *ctx, int n, fence_lease **ls,
									 enum fence_attempt how, int *rcs);
int			fence_store_release_many(fence_ctx *ctx, int n, const char **lock_keys,
									 const char *owner, int *rcs);
int			fence_store_release_acquire(fence_ctx *ctx, const char *lock_key,
										const char *owner, fence_lease *l,
										enum fence_attempt how, int *release_err);

/* master.c: lease operations on the one master that holds a key, and the
 * way to run a script there (FENCE_WAIT_REFUSED: the ACL refused the WAIT
 * for replicas) */
#define FENCE_WAIT_REFUSED (-2)
redisReply *fence_script_run(fence_ctx *ctx, enum fence_script which,
							 int nkeys, const char **keys,
							 int nargs, const char **args, long long *acked);
int			fence_master_acquire(fence_ctx *ctx, fence_lease *l, int64_t t0,
								 enum fence_attempt how);
int			fence_master_extend(fence_ctx *ctx, const char *lock_key,
								const char *owner, long long ttl_ms);
int			fence_master_release(fence_ctx *ctx, const char *lock_key,
								 const char *owner);
int			fence_master_wait_acquire(fence_ctx *ctx, fence_lease *l, int64_t *t0,
									  long block_ms, enum fence_attempt how,
									  int *refused);
int			fence_master_heal(fence_ctx *ctx, fence_lease *l, long long mark,
							  long long ttl_ms, int64_t until_ns);
int			fence_master_show(fence_ctx *ctx, const char *lock_key,
							  const char *token_key, fence_info *info);
int			fence_master_acquire_many(fence_ctx *ctx, int n, fence_lease **ls,
									  enum fence_attempt how, int *rcs);
int			fence_master_release_many(fence_ctx *ctx, int n, const char **lock_keys,
									  const char *owner, int *rcs);
int			fence_master_release_acquire(fence_ctx *ctx, const char *lock_key,
										 const char *owner, fence_lease *l,
										 enum fence_attempt how, int *release_err);

/* the topologies: single.c, sentinel.c, cluster.c, quorum.c (with
 * quorum_round.c) */
extern const fence_store_ops fence_single_ops;
extern const fence_store_ops fence_sentinel_ops;
extern const fence_store_ops fence_cluster_ops;
extern const fence_store_ops fence_quorum_ops;
void	   *fence_single_new(fence_ctx *ctx, const fence_url *url);
void	   *fence_sentinel_new(fence_ctx *ctx, const fence_url *url);
void	   *fence_cluster_new(fence_ctx *ctx, const fence_url *url);
void	   *fence_quorum_new(fence_ctx *ctx, int n, const fence_url *urls);
unsigned int fence_key_slot(const char *key, size_t len);

/* fanout.c: one request to each of several nodes, in parallel */
typedef struct fence_fan
{
	fence_node *node;			/* the node (a non-blocking connection) */
	int			send;			/* 1: send "cmd" to this node */
	fence_cmd	cmd;			/* an EVALSHA (EVAL on NOSCRIPT) */
	enum fence_script script;
	redisReply *reply;			/* the reply, NULL when none came */
	char		why[160];		/* why there is no reply */
} fence_fan;
void		fence_fanout(fence_ctx *ctx, int n, fence_fan *fan, long timeout_ms,
						 int enough);
void		fence_fan_why(fence_fan *f, const char *why);

/*
 * quorum_round.c: a quorum's rounds, for quorum.c (the algorithm), which
 * alone reads the store's fields
 */
typedef struct quorum_store
{
	int			n;
	fence_node *nodes;
	fence_fan  *fan;			/* one per node, reused by every round */
	int		   *ours;			/* scratch: lock taken on node i */
	long long  *claimed;		/* scratch: token claimed on node i */
	/* the highest counter seen for the resource of "seen_key" (its token
	 * key): the next acquire of it guesses one more (quorum_acquire) */
	char	   *seen_key;
	long long	seen;
} quorum_store;

#define QUORUM_MAJORITY(s) ((s)->n / 2 + 1)

void		fence_quorum_free(void *state);
long		fence_quorum_node_ms(fence_ctx *ctx, long long ttl_ms);
void		fence_quorum_clear(quorum_store *s);
void		fence_quorum_round(fence_ctx *ctx, quorum_store *s, const int *mask,
							   enum fence_script which, int nkeys, const char **keys,
							   int nargs, const char **args, long timeout_ms);
void		fence_quorum_error(fence_ctx *ctx, quorum_store *s, const char *what,
							   int got);
int			fence_quorum_compare(fence_ctx *ctx, quorum_store *s,
								 enum fence_script which, int nkeys,
								 const char **keys, int nargs, const char **args,
								 long timeout_ms, const char *what);

#endif							/* FENCE_STORE_H */
