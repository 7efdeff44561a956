/*
 * client/fence_int.h
 *	  Private declarations shared by the files of libfence.
 *
 * Nothing here is part of the public interface in fence.h.
 */
#ifndef FENCE_INT_H
#define FENCE_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include <hiredis/hiredis.h>

#include "fence.h"

/*
 * Of hiredis, libfence uses only the reply reader (redisReaderCreate,
 * redisReaderFeed, redisReaderGetReply) and the reply objects, which 0.14
 * and 1.x share; the sockets, TLS and deadlines are its own (link.c).
 */

#define FENCE_OWNER_BYTES 16	/* 128 bits of kernel randomness */
#define FENCE_OWNER_LEN (FENCE_OWNER_BYTES * 2)
/* room for a quorum attempt's suffix ".N" after the id (quorum.c) */
#define FENCE_OWNER_MAX (FENCE_OWNER_LEN + 12)

/* The Lua scripts, in scripts.c. */
enum fence_script
{
	FENCE_SCRIPT_ACQUIRE,
	FENCE_SCRIPT_RELEASE,
	FENCE_SCRIPT_EXTEND,
	FENCE_SCRIPT_HEAL,
	FENCE_SCRIPT_SHOW,
	FENCE_SCRIPT_QLOCK,			/* quorum: lock, and read the counter */
	FENCE_SCRIPT_QCLAIM,		/* quorum: raise the counter, lock held */
	FENCE_NSCRIPTS
};

/* A quorum of more nodes buys nothing but round-trip time. */
#define FENCE_MAX_QUORUM_NODES 15

/*
 * Most arguments any command of the library takes.  Redis refuses a command
 * of more than 10 from a client that has not logged in yet ("unauthenticated
 * multibulk length"), which would hide a missing password.
 */
#define FENCE_MAX_ARGS 10

/*
 * Waiting for a lease (lease.c, scripts.c).  A waiter keeps a place in the
 * resource's queue and is woken by the release that hands the lock to it.
 *
 * FENCE_HANDOFF_MS    a lock handed to a waiter is held for it this long,
 *                     until it takes it with its full TTL; a waiter that
 *                     died holds nobody up for longer than this
 * FENCE_WAIT_BEAT_MS  a waiter that nobody wakes asks again at least this
 *                     often, keeping its place
 * FENCE_WAIT_PLACE_MS a place not kept for this long lapses: a waiter that
 *                     died leaves the queue by itself
 */
#define FENCE_HANDOFF_MS 200
#define FENCE_WAIT_BEAT_MS 500
#define FENCE_WAIT_PLACE_MS 2000

/* What an acquire attempt does when it cannot have the lock now. */
enum fence_attempt
{
	FENCE_ATTEMPT_TRY,			/* nothing: fence_acquire */
	FENCE_ATTEMPT_WAIT,			/* take, or keep, a place in the queue */
	FENCE_ATTEMPT_LAST			/* give up its place: the deadline passed */
};

/* The Redis keys of one resource (keys.c); all share one hash tag. */
typedef struct fence_keys
{
	char	   *lock;			/* fence:{R}:lock, the owner id */
	char	   *token;			/* fence:{R}:token, the counter */
	char	   *queue;			/* fence:{R}:queue, waiters in order */
	char	   *alive;			/* fence:{R}:alive, when their places lapse */
} fence_keys;

/* One command: "argc" arguments (lengths from strlen when "argvlen" is
 * NULL). */
typedef struct fence_cmd
{
	int			argc;
	const char *argv[FENCE_MAX_ARGS];
	const size_t *argvlen;
} fence_cmd;

/*
 * One connection to a Redis server (link.c): a socket, plain or TLS
 * (tls.c), the bytes still to send, and hiredis's reader for the replies.
 * Every call returns at once; what it waits for, the caller polls.
 */
struct ssl_st;
struct ssl_ctx_st;

enum fence_link_state
{
	FENCE_LINK_CONNECTING,		/* the TCP connect is under way */
	FENCE_LINK_HANDSHAKE,		/* the TLS handshake is */
	FENCE_LINK_OPEN,
	FENCE_LINK_FAILED			/* err_kind, err say why */
};

typedef struct fence_link
{
	int			fd;
	pid_t		pid;			/* the process that opened it */
	enum fence_link_state state;
	struct ssl_st *ssl;			/* NULL: plain */
	int			cert_requested; /* TLS: the server asked for our certificate */
	int			has_cert;		/* TLS: we have one to give */
	int			heard;			/* a byte of reply has come */
	int			sys_errno;		/* errno of the socket's last failure */
	char	   *out;			/* bytes to send: out[sent..len) */
	size_t		out_len,
				out_sent,
				out_cap;
	redisReader *reader;
	int			err_kind;		/* FENCE_ERR_* once FAILED */
	char		err[200];
} fence_link;

/* What a step of a link needs before it can go on. */
#define FENCE_LINK_DONE		0
#define FENCE_LINK_WANT_READ	1	/* poll for POLLIN, then call again */
#define FENCE_LINK_WANT_WRITE	2	/* poll for POLLOUT, then call again */
#define FENCE_LINK_ERROR	(-1)	/* the link FAILED */

/*
 * One Redis server and the connection to it (conn.c).  "addr" says where it
 * is and how to log in (is_unix, host, port, path, user, password, db,
 * tls); "link" is NULL while disconnected.
 */
typedef struct fence_node
{
	fence_url	addr;
	fence_link *link;
	long		max_ms;			/* if > 0: cap on connect and command time */
	int64_t		used_ns;		/* when "link" last answered (conn.c) */
} fence_node;

/*
 * A node among several that must all be asked in one operation's time
 * (sentinels, Cluster seeds) gets a share of it, within these bounds
 * (fence_share_ms): one that is silent must not starve the others.
 */
#define FENCE_SHARE_MIN_MS 50
#define FENCE_SHARE_MAX_MS 1000

/* What fence_node_pipeline() returns besides FENCE_OK. */
#define FENCE_NODE_UNREACHABLE (-1) /* nothing was sent: safe to retry */
#define FENCE_NODE_BROKEN	(-2)	/* sent, but no reply: outcome unknown */

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
	int			(*heal) (fence_ctx *ctx, fence_lease *l, long long mark);
	int			(*show) (fence_ctx *ctx, const char *lock_key,
						 const char *token_key, fence_info *info);
	void		(*free) (void *state);
} fence_store_ops;

/* The private part of a fence_ctx: the topology and its settings. */
struct fence_conn
{
	char	   *spec;			/* the URL(s) as given, for clones */
	long		connect_ms;
	long		command_ms;
	const fence_store_ops *ops;
	void	   *store;			/* the topology's state */
	int			min_replicas;	/* WAIT for this many after acquire */
	long		replica_timeout_ms;
	int64_t		op_deadline_ns; /* end of the lease operation under way */
	long		block_ms;		/* how long its command may block in Redis */
	int			cancel_wait;	/* fence_cancel_wait(), atomic */
	uint64_t	rng;			/* xorshift state for backoff jitter */
	unsigned char pool[512];	/* kernel randomness for owner ids */
	size_t		pool_used;		/* bytes of "pool" already handed out */
	pid_t		pool_pid;		/* process that filled "pool" */
	long long	busy_pttl;		/* PTTL seen by the last busy acquire */
	int64_t		deadline_ns;	/* the caller's: calls must be over by then
								 * too; 0: none */
	struct fence_tls_entry *tls;	/* TLS settings in use (tls.c) */
};

struct fence_lease
{
	char	   *resource;
	fence_keys	keys;			/* keys.c */
	char	   *wake_key;		/* fence:{R}:wake:OWNER, while waiting */
	/* FENCE_OWNER_LEN hex digits, the waiter's name in the queues; a
	 * quorum attempt adds ".N" for the lock's value */
	char		owner[FENCE_OWNER_MAX + 1];
	unsigned int attempts;		/* quorum attempts made so far */
	long long	token;

	/* Shared with the heartbeat thread, under "mu" (lease.c). */
	pthread_mutex_t mu;
	pthread_cond_t cv;			/* extends done, heartbeat stop */
	long long	ttl_ms;			/* of the last acquire or extend */
	int			state;			/* FENCE_LEASE_* */
	int64_t		deadline_ns;	/* monotonic: lease surely valid before */
	int64_t		renewed_ns;		/* when the last successful acquire or
								 * extend was sent */
	int			extending;		/* an extend is in flight */
	long long	unsure_ttl_ms;	/* shortest TTL of an extend whose outcome
								 * is unknown; 0: none */
	int			hb_running;
	int			hb_stop;
	pthread_t	hb_thread;
	fence_lost_fn lost_cb;
	void	   *lost_arg;
	fence_ctx  *hb_ctx;			/* the heartbeat's own connection */
};

/* context.c */
void		fence_set_error(fence_ctx *ctx, int err, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));
void		fence_clear_error(fence_ctx *ctx);
int64_t		fence_now_ns(void);
void		fence_sleep_ns(int64_t ns);
int			fence_random_bytes(void *buf, size_t len);
int			fence_owner_bytes(fence_ctx *ctx, unsigned char *buf, size_t len);
uint64_t	fence_rand(fence_ctx *ctx);
fence_ctx  *fence_ctx_clone(fence_ctx *ctx, long command_ms);

/* url.c */
int			fence_url_copy(fence_url *dst, const fence_url *src);
int			fence_url_node(fence_url *dst, const fence_url *login,
						   const char *host, int port);

/* conn.c */
void		fence_conn_set_deadline(fence_ctx *ctx, int64_t deadline_ns);
void		fence_op_begin(fence_ctx *ctx);
void		fence_op_begin_block(fence_ctx *ctx, long block_ms);
void		fence_blpop_cmd(fence_cmd *cmd, const char *key, long block_ms, char *secs,
							size_t secs_len);
long		fence_op_left_ms(fence_ctx *ctx, long cap_ms);
int			fence_op_back_off(fence_ctx *ctx, long *wait_ms, long max_ms);
int			fence_node_pipeline(fence_ctx *ctx, fence_node *n, int ncmds,
								const fence_cmd *cmds, redisReply **replies);
redisReply *fence_node_command(fence_ctx *ctx, fence_node *n, int argc,
							   const char **argv);
int			fence_node_connect(fence_ctx *ctx, fence_node *n);
int			fence_err_refused(const fence_ctx *ctx);
void		fence_node_drop(fence_node *n);
void		fence_node_free(fence_node *n);
const char *fence_node_name(const fence_node *n, char *buf, size_t len);
int			fence_reply_error(fence_ctx *ctx, redisReply *r);
int			fence_reply_is(const redisReply *r, const char *prefix);
int			fence_reply_refused(const char *msg);
int			fence_reply_transient(const redisReply *r);
long		fence_share_ms(fence_ctx *ctx, long budget_ms, int remaining);
void		fence_free_replies(int n, redisReply **replies);

/* socket.c */
int			fence_socket_open(const fence_url *u, int64_t end_ns, char *msg, size_t msglen);

/* link.c */
fence_link *fence_link_open(const fence_url *u, struct ssl_ctx_st *tls, int64_t end_ns,
							char *msg, size_t msglen, int *kind);
int			fence_link_connect_step(fence_link *l);
int			fence_link_append(fence_link *l, int argc, const char *const *argv,
							  const size_t *argvlen);
int			fence_link_flush(fence_link *l);
int			fence_link_read(fence_link *l);
int			fence_link_reply(fence_link *l, redisReply **reply);
int			fence_link_wait(fence_link *l, int want, int64_t end_ns);
int			fence_link_fail(fence_link *l, int kind, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));
void		fence_link_free(fence_link *l);

/* tls.c */
struct ssl_ctx_st *fence_tls_context(fence_ctx *ctx, const fence_tls_opts *opts);
int			fence_tls_share(fence_ctx *dst, const fence_ctx *src);
void		fence_tls_free_all(fence_ctx *ctx);
int			fence_tls_attach(fence_link *l, struct ssl_ctx_st *tls, const fence_url *u);
int			fence_tls_handshake(fence_link *l);
ssize_t		fence_tls_read(fence_link *l, void *buf, size_t len, int *want);
ssize_t		fence_tls_write(fence_link *l, const void *buf, size_t len, int *want);
int			fence_tls_pending(fence_link *l);
void		fence_tls_close(fence_link *l);

/* sha1.c */
void		fence_sha1_hex(const void *data, size_t len, char hex[41]);

/* scripts.c; FENCE_WAIT_REFUSED: the ACL refused the WAIT for replicas */
#define FENCE_WAIT_REFUSED (-2)
void		fence_script_cmd(fence_cmd *cmd, enum fence_script which, int eval,
							 int nkeys, const char **keys, int nargs, const char **args);
const char *fence_script_source(enum fence_script which);
redisReply *fence_script_run(fence_ctx *ctx, enum fence_script which,
							 int nkeys, const char **keys,
							 int nargs, const char **args, long long *acked);

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
int			fence_store_heal(fence_ctx *ctx, fence_lease *l, long long mark);
int			fence_store_show(fence_ctx *ctx, const char *lock_key,
							 const char *token_key, fence_info *info);

/* master.c: lease operations on the one master that holds a key */
int			fence_master_acquire(fence_ctx *ctx, fence_lease *l, int64_t t0,
								 enum fence_attempt how);
int			fence_master_extend(fence_ctx *ctx, const char *lock_key,
								const char *owner, long long ttl_ms);
int			fence_master_release(fence_ctx *ctx, const char *lock_key,
								 const char *owner);
int			fence_master_wait_acquire(fence_ctx *ctx, fence_lease *l, int64_t *t0,
									  long block_ms, enum fence_attempt how,
									  int *refused);
int			fence_master_heal(fence_ctx *ctx, fence_lease *l, long long mark);
int			fence_master_show(fence_ctx *ctx, const char *lock_key,
							  const char *token_key, fence_info *info);
int			fence_parse_show(fence_ctx *ctx, redisReply *r, const char *token_key,
							 fence_info *info);

/* the topologies: single.c, sentinel.c, cluster.c, quorum.c */
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

/* keys.c */
char	   *fence_key(const char *resource, const char *suffix);
int			fence_keys_init(fence_keys *keys, const char *resource);
void		fence_keys_free(fence_keys *keys);

/* lease.c */
int			fence_parse_token(const char *s, size_t len, long long *out);
int			fence_parse_counter(const char *s, size_t len, long long *out);
int			fence_lease_usable(fence_ctx *ctx, fence_lease *l);
long long	fence_drift_ms(long long ttl_ms);
int			fence_extend_raw(fence_ctx *ctx, const char *lock_key,
							 const char *owner, long long ttl_ms);
void		fence_lease_set_lost(fence_lease *l);
int			fence_lease_renew(fence_ctx *ctx, fence_lease *lease, long long ttl_ms);
void		fence_lease_wait(fence_lease *lease, int64_t until_ns);

#endif							/* FENCE_INT_H */
