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
/* an owner id: "NAME/" and the digits (owner.c), and room for a quorum
 * attempt's suffix ".N" after it (quorum.c) */
#define FENCE_OWNER_MAX (FENCE_MAX_OWNER_NAME + 1 + FENCE_OWNER_LEN + 12)

/*
 * The TLS settings of a URL, from its query parameters (named as in
 * redis.conf).  Paths and names are NULL when not given.
 */
typedef struct fence_tls_opts
{
	int			enabled;		/* 1: rediss://, rediss-sentinel://,
								 * rediss-cluster:// */
	char	   *ca_cert_file;	/* tls-ca-cert-file: the CAs to trust (PEM);
								 * with neither this nor ca_cert_dir, the
								 * system's */
	char	   *ca_cert_dir;	/* tls-ca-cert-dir: a hashed CA directory */
	char	   *cert_file;		/* tls-cert-file: our certificate (PEM), for
								 * servers that ask for one */
	char	   *key_file;		/* tls-key-file: its private key (PEM) */
	char	   *server_name;	/* tls-server-name: the name sent (SNI) and
								 * verified, instead of each node's host */
	int			insecure_skip_verify;	/* tls-insecure-skip-verify=yes: trust
										 * any certificate (tests only) */
} fence_tls_opts;

/* Kinds of URL, in fence_url.kind. */
#define FENCE_URL_NODE		0	/* redis:// or unix://: one server */
#define FENCE_URL_SENTINEL	1	/* redis-sentinel://: a master found through
								 * Sentinel */
#define FENCE_URL_CLUSTER	2	/* redis-cluster://: a Redis Cluster */

typedef struct fence_hostport
{
	char	   *host;
	int			port;
} fence_hostport;

/*
 * A parsed Redis URL (fence_parse_url), behind the opaque fence_url of
 * fence.h.  fence_parse_url and fence_url_free stay exported
 * (libfence.map) for the programs built against 0.3.0's first headers.
 */
struct fence_url
{
	int			is_unix;		/* 1: "path" is a Unix socket */
	char	   *host;			/* TCP host (the first one), or NULL */
	int			port;			/* TCP port (of the first host) */
	char	   *path;			/* Unix socket path, or NULL */
	char	   *user;			/* ACL user, or NULL */
	char	   *password;		/* password, or NULL */
	int			db;				/* database number for SELECT */
	int			kind;			/* FENCE_URL_* */
	int			nhosts;			/* sentinels or cluster seeds (1 for a node) */
	fence_hostport *hosts;		/* "nhosts" addresses, NULL for unix:// */
	char	   *master;			/* Sentinel: the master's name, else NULL */
	fence_tls_opts tls;			/* TLS, for every node of the topology */
};

int			fence_parse_url(const char *url, fence_url *out, char *errbuf, size_t errlen);
void		fence_url_free(fence_url *url);

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

/* Room for the hint of a PostgreSQL error (pg.c): a GRANT with a role's
 * name. */
#define FENCE_PG_HINT_LEN 1024

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

/*
 * How far past its deadline a wait's commands may run: the answer to the
 * last attempt, or to a BLPOP that Redis ends at the deadline, must still
 * get in.  A lock handed over is held for a waiter FENCE_HANDOFF_MS, so an
 * answer later than that would come too late to matter anyway.
 */
#define FENCE_WAIT_SLACK_MS FENCE_HANDOFF_MS

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

/*
 * Where a link is in the stream of replies, as frame.c follows it: what
 * the reply under way has announced so far, checked against these caps.
 */
#define FENCE_MAX_REPLY_ELEMENTS	(1 << 20)
#define FENCE_MAX_REPLY_BYTES		(64 << 20)
#define FENCE_FRAME_DEPTH	8
typedef struct fence_frame
{
	char		type;			/* of the header being read; 0 between */
	char		line[24];		/* its first bytes, for a length */
	int			linelen;
	int			depth;			/* arrays open */
	long long	left[FENCE_FRAME_DEPTH];	/* elements still to come in each */
	long long	bulk;			/* bytes of a bulk string still to come */
	long long	elements;		/* elements the reply has announced */
	long long	bytes;			/* bytes of the reply so far */
} fence_frame;

void		fence_frame_reset(fence_frame *f);
int			fence_frame_check(fence_frame *f, const char *buf, size_t n,
							  char *err, size_t errlen);

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
	fence_frame frame;			/* what the replies announce (frame.c) */
	int			err_kind;		/* FENCE_ERR_* once FAILED */
	char		err[200];
	int			owed;			/* answers of a cut call are on their way
								 * (node.c, "Cut calls") */
} fence_link;

/* What a step of a link needs before it can go on. */
#define FENCE_LINK_DONE		0
#define FENCE_LINK_WANT_READ	1	/* poll for POLLIN, then call again */
#define FENCE_LINK_WANT_WRITE	2	/* poll for POLLOUT, then call again */
#define FENCE_LINK_ERROR	(-1)	/* the link FAILED */

/*
 * One Redis server and the connection to it (node.c).  "addr" says where it
 * is and how to log in (is_unix, host, port, path, user, password, db,
 * tls); "link" is NULL while disconnected.
 */
typedef struct fence_node
{
	fence_url	addr;
	fence_link *link;
	long		max_ms;			/* if > 0: cap on connect and command time */
	int64_t		used_ns;		/* when "link" last answered (node.c) */
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

/* The private part of a fence_ctx: the topology and its settings. */
/*
 * A call cut short by the context's reply bound (node.c, "Cut calls"): its
 * request went out on "link" and its answers are on their way; the same
 * call made again reads them rather than sending it again.
 */
typedef struct fence_park
{
	int			active;			/* a cut call's request is in flight */
	const void *node;			/* its node and connection: compared, never */
	fence_link *link;			/* read (they may be gone) */
	char	   *req;			/* the request's bytes */
	size_t		req_len;
	int			ncmds;
	int			got;			/* answers read before the cut */
	redisReply **replies;
	int64_t		sent_ns;		/* before the request was written */
	int			dropped;		/* a cut call's request was not taken up:
								 * its outcome is unknown */
	/* the owner id and resource of the acquire that was cut ("": none) */
	char		owner[FENCE_OWNER_MAX + 1];
	char		resource[FENCE_MAX_RESOURCE_LEN + 1];
} fence_park;

struct fence_conn
{
	char	   *spec;			/* the URL(s) as given, for clones */
	long		connect_ms;
	long		command_ms;
	const struct fence_store_ops *ops;	/* the topology (store/store.h) */
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
	/* the fix for the last error, when setting up PostgreSQL is one
	 * (pg.c); "" otherwise, cleared with the error (error.c) */
	char		pg_hint[FENCE_PG_HINT_LEN];
	int			pg_hint_grant;	/* pg_hint's grant is the C extension's
								 * until the edition is known (pg.c) */
	/* the name in front of new owner ids, or "" (owner.c) */
	char		owner_name[FENCE_MAX_OWNER_NAME + 1];
	/* the reply bound (fence_set_reply_bound; node.c, "Cut calls") */
	long		bound_ms;		/* 0: none */
	int			bounding;		/* the call under way is bounded */
	int			cut;			/* the last call was cut short */
	fence_park	park;
	/* the owner id and resource of the last lease made while bounding */
	char		last_owner[FENCE_OWNER_MAX + 1];
	char		last_resource[FENCE_MAX_RESOURCE_LEN + 1];
};

struct fence_lease
{
	char	   *resource;
	fence_keys	keys;			/* keys.c */
	char	   *wake_key;		/* fence:{R}:wake:OWNER, while waiting */
	/* the owner id ("NAME/" and FENCE_OWNER_LEN hex digits, owner.c), the
	 * waiter's name in the queues; a quorum attempt adds ".N" for the
	 * lock's value */
	char		owner[FENCE_OWNER_MAX + 1];
	unsigned int attempts;		/* quorum attempts made so far */
	long long	token;
	int			pg_accepted;	/* PostgreSQL took "token" once (pg.c) */

	/* Shared with the heartbeat thread, under "mu" (renew.c). */
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

/*
 * The ground: error.c, clock.c, random.c, and the pure helpers below them
 * call nothing above.  Files are listed from the bottom layer up; a file
 * may call what is declared above its own section (client/tools/layers.sh
 * checks it).
 */

/* error.c */
void		fence_set_error(fence_ctx *ctx, int err, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));
void		fence_clear_error(fence_ctx *ctx);
int			fence_err_refused(const fence_ctx *ctx);
int			fence_link_fail(fence_link *l, int kind, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* clock.c */
int64_t		fence_now_ns(void);
void		fence_sleep_ns(int64_t ns);
long long	fence_drift_ms(long long ttl_ms);

/* pid.c */
pid_t		fence_self_pid(void);

/* random.c */
int			fence_random_bytes(void *buf, size_t len);
int			fence_owner_bytes(fence_ctx *ctx, unsigned char *buf, size_t len);
uint64_t	fence_rand(fence_ctx *ctx);

/* owner.c */
int			fence_owner_id(fence_ctx *ctx, char *owner);
int			fence_check_name_size(const char *kind, const char *name, int max,
								  char *errbuf, size_t errlen);

/* url.c */
int			fence_url_copy(fence_url *dst, const fence_url *src);
int			fence_url_node(fence_url *dst, const fence_url *login,
						   const char *host, int port);

/* keys.c */
char	   *fence_key(const char *resource, const char *suffix);
int			fence_keys_init(fence_keys *keys, const char *resource);
void		fence_keys_free(fence_keys *keys);

/* sha1.c */
void		fence_sha1_hex(const void *data, size_t len, char hex[41]);

/* reply.c */
int			fence_reply_error(fence_ctx *ctx, redisReply *r);
int			fence_reply_is(const redisReply *r, const char *prefix);
int			fence_reply_refused(const char *msg);
int			fence_reply_transient(const redisReply *r);
void		fence_free_replies(int n, redisReply **replies);
int			fence_parse_counter(const char *s, size_t len, long long *out);
int			fence_parse_token(const char *s, size_t len, long long *out);
long long	fence_reply_int_at(const redisReply *r, size_t i);
long long	fence_reply_counter_at(const redisReply *r, size_t i);
int			fence_parse_show(fence_ctx *ctx, redisReply *r, const char *token_key,
							 fence_info *info);

/* socket.c */
int			fence_socket_open(const fence_url *u, int64_t end_ns, char *msg, size_t msglen);

/* tls.c: TLS sessions on a link, and the contexts' TLS settings */
struct ssl_ctx_st *fence_tls_context(fence_ctx *ctx, const fence_tls_opts *opts);
int			fence_tls_share(fence_ctx *dst, const fence_ctx *src);
void		fence_tls_free_all(fence_ctx *ctx);
int			fence_tls_attach(fence_link *l, struct ssl_ctx_st *tls, const fence_url *u);
int			fence_tls_handshake(fence_link *l);
ssize_t		fence_tls_read(fence_link *l, void *buf, size_t len, int *want);
ssize_t		fence_tls_write(fence_link *l, const void *buf, size_t len, int *want);
int			fence_tls_pending(fence_link *l);
int			fence_tls_idle_closed(fence_link *l);
void		fence_tls_close(fence_link *l);

/* link.c: one connection, plain or TLS */
fence_link *fence_link_open(const fence_url *u, struct ssl_ctx_st *tls, int64_t end_ns,
							char *msg, size_t msglen, int *kind);
int			fence_link_connect_step(fence_link *l);
int			fence_link_append(fence_link *l, int argc, const char *const *argv,
							  const size_t *argvlen);
int			fence_link_flush(fence_link *l);
int			fence_link_read(fence_link *l);
int			fence_link_reply(fence_link *l, redisReply **reply);
int			fence_link_wait(fence_link *l, int want, int64_t end_ns);
int			fence_link_idle_closed(fence_link *l);
void		fence_link_free(fence_link *l);

/* node.c: one Redis server, and the deadlines of an operation */
void		fence_conn_set_deadline(fence_ctx *ctx, int64_t deadline_ns);
void		fence_conn_grace(fence_ctx *ctx);
void		fence_op_begin(fence_ctx *ctx);
void		fence_op_begin_block(fence_ctx *ctx, long block_ms);
int			fence_bound_begin(fence_ctx *ctx);
void		fence_bound_end(fence_ctx *ctx, int was);
void		fence_cut(fence_ctx *ctx, const char *what);
int64_t		fence_op_t0(fence_ctx *ctx);
int			fence_park_dropped(fence_ctx *ctx);
void		fence_park_clear(fence_ctx *ctx);
void		fence_blpop_cmd(fence_cmd *cmd, const char *key, long block_ms, char *secs,
							size_t secs_len);
long		fence_op_left_ms(fence_ctx *ctx, long cap_ms);
int			fence_op_back_off(fence_ctx *ctx, long *wait_ms, long max_ms);
int			fence_node_pipeline(fence_ctx *ctx, fence_node *n, int ncmds,
								const fence_cmd *cmds, redisReply **replies);
redisReply *fence_node_command(fence_ctx *ctx, fence_node *n, int argc,
							   const char **argv);
int			fence_node_connect(fence_ctx *ctx, fence_node *n);
void		fence_node_drop(fence_node *n);
void		fence_node_free(fence_node *n);
const char *fence_node_name(const fence_node *n, char *buf, size_t len);
long		fence_share_ms(fence_ctx *ctx, long budget_ms, int remaining);

/* scripts.c: the Lua sources and their command lines */
void		fence_script_cmd(fence_cmd *cmd, enum fence_script which, int eval,
							 int nkeys, const char **keys, int nargs, const char **args);
const char *fence_script_source(enum fence_script which);
const char *fence_script_name(enum fence_script which);

/* (the topologies, store/, stand here: store/store.h) */

/* context.c */
fence_ctx  *fence_ctx_clone(fence_ctx *ctx, long command_ms);

/* renew.c: a lease's local deadline and state, under its mutex */
int64_t		fence_deadline_after(int64_t t0, long long ttl_ms, long long unsure_ms);
int			fence_extend_raw(fence_ctx *ctx, const char *lock_key,
							 const char *owner, long long ttl_ms);
void		fence_lease_wait(fence_lease *lease, int64_t until_ns);
int			fence_lease_renew(fence_ctx *ctx, fence_lease *lease, long long ttl_ms);
void		fence_lease_set_lost(fence_lease *l);
int			fence_lease_usable(fence_ctx *ctx, fence_lease *l);
void		fence_lease_window(fence_lease *l, long long *ttl_ms, int64_t *until_ns);

/* lease.c: an acquire under a given owner id, and the steps of one, for
 * the sets of lease_set.c */
fence_lease *fence_acquire_wait_as(fence_ctx *ctx, const char *resource,
								   long long ttl_ms, long long wait_ms,
								   int64_t deadline, const char *owner);
fence_lease *fence_lease_new(fence_ctx *ctx, const char *resource, long long ttl_ms,
							 const char *owner);
void		fence_lease_taken(fence_lease *l, int64_t t0);

#endif							/* FENCE_INT_H */
