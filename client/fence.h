/*
 * client/fence.h
 *	  libfence: fenced leases on Redis, fencing tokens checked by PostgreSQL.
 *
 * A worker takes a lease on a resource from Redis and receives a fencing
 * token, a number that only grows.  It announces the token to PostgreSQL
 * right away and carries it into every write; the "fence" extension rejects
 * writes that carry an older token, so a worker that lost its lease without
 * noticing cannot corrupt data.
 *
 * The error model follows hiredis: functions return FENCE_OK / FENCE_ERR, or
 * a pointer that is NULL on failure; the kind of error is in "ctx->err" (one
 * of the FENCE_ERR_* codes below) and a human-readable message in
 * "ctx->errstr".  Transport errors (FENCE_ERR_IO, FENCE_ERR_PROTOCOL) are
 * kept apart from error replies sent by Redis (FENCE_ERR_REPLY).
 *
 * A fence_ctx is not thread-safe: use one per thread.  The heartbeat thread
 * of a lease uses its own Redis connection.
 *
 * One context speaks to one Redis topology, chosen by the URL given to
 * fence_connect(): a single node (redis://, unix://), a master found
 * through Sentinel (redis-sentinel://), a Redis Cluster (redis-cluster://),
 * or a quorum of independent nodes (several URLs separated by whitespace).
 *
 * TLS is chosen by the URL too: rediss://, rediss-sentinel:// and
 * rediss-cluster:// speak TLS to every node (sentinels and master, every
 * node of a cluster), and a quorum mixes rediss:// and redis:// nodes as
 * its URLs say.  The server's certificate and host name are verified;
 * query parameters set the CAs, a client certificate, the name to verify
 * (client/README.md, TLS).  There is no separate TLS call: the URL, given to
 * fence_connect(), is the whole configuration, and the heartbeat's own
 * connection gets the same.
 */
#ifndef FENCE_H
#define FENCE_H

#include <libpq-fe.h>

#ifdef __cplusplus
extern "C"
{
#endif

#define FENCE_VERSION_MAJOR 0
#define FENCE_VERSION_MINOR 3
#define FENCE_VERSION_PATCH 0
#define FENCE_VERSION "0.3.0"

#define FENCE_OK 0
#define FENCE_ERR (-1)

/* Kinds of error, in ctx->err.  0 means no error. */
#define FENCE_ERR_IO		1	/* Redis unreachable, connection lost or
								 * command timed out */
#define FENCE_ERR_PROTOCOL	2	/* Redis sent something unparsable */
#define FENCE_ERR_REPLY		3	/* Redis answered with an error reply */
#define FENCE_ERR_BUSY		4	/* the lock is held by another owner */
#define FENCE_ERR_TIMEOUT	5	/* the lock was not acquired before the
								 * deadline */
#define FENCE_ERR_LOST		6	/* the lease is not (or no longer) ours */
#define FENCE_ERR_SUSPECT	7	/* Redis unreachable: the lease may be lost,
								 * fenced SQL refused until an extend works */
#define FENCE_ERR_STALE		8	/* PostgreSQL rejected the token (LF001) */
#define FENCE_ERR_PG		9	/* any other PostgreSQL error */
#define FENCE_ERR_ARG		10	/* bad argument, URL or duration */
#define FENCE_ERR_OVERFLOW	11	/* the token counter cannot grow any more */
#define FENCE_ERR_OOM		12	/* out of memory */
#define FENCE_ERR_AUTH		13	/* Redis refused the login (AUTH, SELECT) or
								 * the ACL refused a command */
#define FENCE_ERR_STATE		14	/* Redis holds fence keys in a state fence
								 * never writes (wrong type, lock without
								 * expiry, counter not a positive integer) */
#define FENCE_ERR_REPLICAS	15	/* fewer replicas than asked for
								 * acknowledged the new lease in time */
#define FENCE_ERR_TLS		16	/* TLS refused: a certificate or key that
								 * cannot be read, a server certificate not
								 * trusted, a handshake the server refused */

#define FENCE_ERRSTR_LEN 256

/*
 * SQLSTATEs, as PQresultErrorField(res, PG_DIAG_SQLSTATE) gives them:
 * fence's own class LF, and the PostgreSQL codes libfence and the command
 * read as a setup problem (compare with strcmp).
 */
#define FENCE_SQLSTATE_STALE		"LF001" /* stale token: never retry it */
#define FENCE_SQLSTATE_MISSING		"LF002" /* a write without a token */
#define FENCE_SQLSTATE_INVALID		"LF003" /* token <= 0, beyond max_step,
											 * or two for one resource */
#define FENCE_SQLSTATE_READ_ONLY	"25006" /* read_only_sql_transaction: a
											 * standby */
#define FENCE_SQLSTATE_NOT_READY	"55000" /* object_not_in_prerequisite_state:
											 * fence.stats not preloaded */
#define FENCE_SQLSTATE_PRIVILEGE	"42501" /* insufficient_privilege */
#define FENCE_SQLSTATE_NO_TABLE		"42P01" /* undefined_table */
#define FENCE_SQLSTATE_NO_FUNCTION	"42883" /* undefined_function: no or an
											 * older extension */
#define FENCE_SQLSTATE_NO_SCHEMA	"3F000" /* invalid_schema_name: no
											 * extension */

/* Lease states, from fence_lease_state(). */
#define FENCE_LEASE_HELD	0	/* last extend (or acquire) succeeded */
#define FENCE_LEASE_SUSPECT	1	/* Redis unreachable, local deadline not
								 * passed yet */
#define FENCE_LEASE_LOST	2	/* gone for good */

/*
 * Limits on arguments, checked before anything is sent.  A TTL must exceed
 * the margin for clock drift (1% + 2 ms, see "Choosing a TTL" in
 * docs/concepts.md): a shorter lease would be lost before it is held.
 */
#define FENCE_MAX_RESOURCE_LEN 1024 /* bytes, as the extension allows */
#define FENCE_MIN_TTL_MS 3LL
#define FENCE_MAX_TTL_MS 100000000000LL /* about 3 years; also the
										 * longest wait */

/*
 * Owner ids are 32 hex digits of kernel randomness, unique to their lease;
 * with a name (fence_set_owner_name), "NAME/" and the digits, so that who
 * holds a lease can be read wherever the id goes: Redis, fence.fences,
 * FENCE_OWNER.  A name is 1 to FENCE_MAX_OWNER_NAME bytes of
 * FENCE_OWNER_NAME_CHARS: nothing a shell, PGOPTIONS or JSON would need
 * escaped, no '/' (it ends the name) and no '.' (a quorum's attempts add
 * ".N" to the id).
 */
#define FENCE_MAX_OWNER_NAME 64
#define FENCE_OWNER_NAME_CHARS \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-:@+"

/* Defaults used by fence_connect(). */
#define FENCE_DEFAULT_URL "redis://127.0.0.1:6379"
#define FENCE_DEFAULT_CONNECT_TIMEOUT_MS 5000
#define FENCE_DEFAULT_COMMAND_TIMEOUT_MS 5000

struct fence_conn;

typedef struct fence_ctx
{
	int			err;			/* FENCE_ERR_* of the last failure, or 0 */
	char		errstr[FENCE_ERRSTR_LEN];	/* message for "err" */
	struct fence_conn *conn;	/* private: Redis connection and settings */
} fence_ctx;

typedef struct fence_lease fence_lease;

/*
 * Called from the heartbeat thread, once, when the lease is lost.  It must
 * not call into the same fence_ctx; writing to a pipe or setting a flag is
 * what it is for.
 */
typedef void (*fence_lost_fn) (fence_lease *lease, void *arg);

/*
 * A parsed Redis URL: opaque, so that it can grow (it did for topologies
 * and for TLS) without another soname.  A program hands libfence the URL
 * as text (fence_connect) and checks it beforehand with fence_check_url.
 */
typedef struct fence_url fence_url;

/* Parsing and checking helpers (no connection needed); on failure they
 * write a message into "errbuf". */
int			fence_parse_duration(const char *s, long long *ms, char *errbuf, size_t errlen);
int			fence_check_resource(const char *resource, char *errbuf, size_t errlen);
int			fence_check_ttl(long long ttl_ms, char *errbuf, size_t errlen);
int			fence_check_url(const char *url, char *errbuf, size_t errlen);
/* 1 when a URL of "url" (one, or a quorum) turns TLS verification off
 * (tls-insecure-skip-verify=yes), else 0 (also for a refused URL). */
int			fence_url_skips_verify(const char *url);
int			fence_check_owner_name(const char *name, char *errbuf, size_t errlen);

/* "text" with the password of every Redis URL in it written "***", as
 * fence_parse_url finds them (for logs); returns the full length, as
 * snprintf does.  2 * strlen(text) + 4 bytes are always enough. */
size_t		fence_mask_url(const char *text, char *out, size_t outlen);
/* Where the credentials of the URL of "len" bytes at "url" lie, as
 * fence_parse_url reads them (offsets of the authority, of the ':' before
 * the password and of the '@' after it); 1, 0 when it has none, -1 when it
 * does not start with "scheme://". */
int			fence_url_credentials(const char *url, size_t len, size_t *start,
								  size_t *colon, size_t *at);

/* Connections.  Always returns a context (NULL only when out of memory);
 * check ctx->err. */
fence_ctx  *fence_connect(const char *url);
fence_ctx  *fence_connect_timeout(const char *url, long connect_ms, long command_ms);
void		fence_free(fence_ctx *ctx);
const char *fence_strerror(int err);

/*
 * Make every acquire (and every heal of a token) wait until "replicas"
 * replicas have the new lock and token, for at most "timeout_ms"; with
 * fewer, the lock is given back and the call fails with
 * FENCE_ERR_REPLICAS.  0 turns it off.  Single node, Sentinel and Cluster
 * only.
 */
int			fence_set_min_replicas(fence_ctx *ctx, int replicas, long timeout_ms);

/*
 * A bound on how long a call waits for Redis's answer, for a caller that
 * must not be held up for a whole command timeout (an event loop): when
 * fence_acquire / fence_acquire_wait with no wait, fence_extend,
 * fence_release or fence_release_acquire with no wait has had no answer
 * within "bound_ms", it returns at once, failing with FENCE_ERR_IO, and
 * fence_call_cut(ctx) says 1.  Its request is left in flight: make the
 * very same call again on "ctx" (from any thread) after
 * fence_set_reply_bound(ctx, 0), and it reads the answer on its way rather
 * than sending again, with the guarantees of a call that was never cut (a
 * lease's deadline counts from before the first send); setting a bound
 * again afterwards ends what the cut left.  A
 * bounded call never connects: one that would have to (a first call, a
 * connection lost) is cut before it sends anything.  Other calls, and
 * calls that wait, ignore the bound.  0 (the default) turns it off;
 * FENCE_ERR_ARG on a quorum, whose rounds it does not cover.  Calling
 * this also ends the cut state, so that the next call runs; on success it
 * leaves ctx->err as it was.
 */
int			fence_set_reply_bound(fence_ctx *ctx, long bound_ms);
int			fence_call_cut(const fence_ctx *ctx);

/*
 * Put "name" in front of the owner ids of the leases acquired on "ctx"
 * from now on ("NAME/" and the digits); NULL: the digits alone (the
 * default).  FENCE_ERR_ARG for a name fence_check_owner_name refuses.
 */
int			fence_set_owner_name(fence_ctx *ctx, const char *name);

/* Leases on Redis. */
fence_lease *fence_acquire(fence_ctx *ctx, const char *resource, long long ttl_ms);

/*
 * While another owner holds the lease, queue for it for up to "wait_ms":
 * the call blocks in Redis, on the context's connection, until a release
 * hands the lease over (first come, first served; on a quorum the woken
 * compete) or the holder's lease expires.  FENCE_ERR_TIMEOUT when the wait
 * runs out.  With "wait_ms" > 0 the deadline bounds each command as well
 * (give or take 200 ms): a Redis that never answers fails it then, with
 * FENCE_ERR_IO, rather than after the command timeout.  See
 * client/README.md, "Waiting".
 */
fence_lease *fence_acquire_wait(fence_ctx *ctx, const char *resource,
								long long ttl_ms, long long wait_ms);

/*
 * Make the fence_acquire_wait running on "ctx" in another thread (or the
 * next one to start) give up within about 500 ms, as if its wait had run
 * out: it takes the lease only if it is free for it by then.  Safe to call
 * from any thread and from a signal handler.
 */
void		fence_cancel_wait(fence_ctx *ctx);
long long	fence_busy_pttl(const fence_ctx *ctx);
int			fence_extend(fence_ctx *ctx, fence_lease *lease, long long ttl_ms);
int			fence_release(fence_ctx *ctx, fence_lease *lease);

/*
 * A worker loop's step: give "old" back and take a lease on "resource"
 * (wait_ms 0: one try, as fence_acquire; else as fence_acquire_wait).
 * Where one master holds both (a single node, Sentinel, a Cluster master
 * that serves both slots) the release and the first attempt go out in one
 * write: one round trip, not two; a quorum, and a Cluster whose two
 * resources live on two masters, make the two calls.  The release always
 * runs first.  Returns the new lease, or NULL with ctx->err as
 * fence_acquire_wait would say.  "*released" (may be NULL) gets the
 * release's outcome whatever the acquire's: FENCE_OK; FENCE_ERR_LOST when
 * "old" had expired or passed to another owner (nothing of theirs is
 * touched: stop using what it guarded); FENCE_ERR_IO when the outcome is
 * unknown; FENCE_ERR_ARG when the arguments were refused and nothing was
 * sent.  "old" may be NULL (the loop's first step); its heartbeat is
 * stopped; the caller frees it.
 */
fence_lease *fence_release_acquire(fence_ctx *ctx, fence_lease *old, const char *resource,
								   long long ttl_ms, long long wait_ms, int *released);
int			fence_extend_owner(fence_ctx *ctx, const char *resource,
							   const char *owner, long long ttl_ms);
int			fence_release_owner(fence_ctx *ctx, const char *resource,
								const char *owner);
void		fence_lease_free(fence_lease *lease);

/*
 * Resource and owner never change.  The token changes only when
 * fence_announce heals it, on the thread that announces: read it on that
 * thread (the heartbeat never does), not from a lost callback while an
 * announce may run.  TTL and state may be read from any thread.
 */
const char *fence_lease_resource(const fence_lease *lease);
const char *fence_lease_owner(const fence_lease *lease);
long long	fence_lease_token(const fence_lease *lease);
long long	fence_lease_ttl(const fence_lease *lease);
int			fence_lease_state(fence_lease *lease);

/* Inspect a resource without touching it ("owner" may come back NULL). */
typedef struct fence_info
{
	char	   *owner;			/* current lock owner, or NULL if free */
	long long	pttl_ms;		/* remaining lock TTL, -2 if free */
	long long	token;			/* last token handed out, 0 if none */
} fence_info;
int			fence_show(fence_ctx *ctx, const char *resource, fence_info *info);
void		fence_info_free(fence_info *info);

/*
 * Who waits for "resource": the owner ids of its live waiters, first first
 * ("*owners", "*n"; free with fence_waiters_free).  A place that lapsed (a
 * waiter that died: 2 s without asking again) does not count, even while
 * Redis still holds it.  On a quorum, the waiters of
 * every node that answered (a majority must), in the order of the best
 * place each has on any node: a quorum serves wake-ups, not turns.
 */
int			fence_waiters(fence_ctx *ctx, const char *resource, char ***owners,
						  size_t *n);
void		fence_waiters_free(char **owners, size_t n);

/* A held lease, as fence_list finds it. */
typedef struct fence_held
{
	char	   *resource;
	char	   *owner;			/* who holds it */
	long long	pttl_ms;		/* remaining TTL (a quorum: on a majority) */
	long long	token;			/* last token handed out */
	size_t		waiters;		/* live waiters (fence_waiters) */
} fence_held;

/*
 * The leases held now whose resource name matches "pattern" (a glob as
 * Redis's SCAN MATCH takes it: *, ?, [...], \ to escape; '{', '}' and
 * '%' match themselves, and are refused inside [...]; NULL: all), sorted
 * by name ("*leases", "*n"; free with fence_list_free).  Found with
 * SCAN, never KEYS, on every node that holds keys: the one master, every
 * master of a Cluster, every node of a quorum (a majority must answer, and
 * a lease counts as held when a majority has the same owner's lock, as
 * fence_show says).  Not a snapshot: a lease taken or given back while it
 * runs may or may not be in it.  Each lease costs the round trips of a
 * fence_show and a fence_waiters.
 */
int			fence_list(fence_ctx *ctx, const char *pattern, fence_held **leases,
					   size_t *n);
void		fence_list_free(fence_held *leases, size_t n);
int			fence_check_pattern(const char *pattern, char *errbuf, size_t errlen);

/*
 * The token counters of the resources whose name matches "pattern" (as
 * fence_list takes it; NULL: all): the last token handed out for each,
 * sorted by name ("*counters", "*n"; free with fence_counters_free).
 * Found with SCAN on every node that holds keys.  What "fence resync"
 * raises PostgreSQL's marks to after a failover to an asynchronous
 * standby (fence.resync()).
 */
typedef struct fence_counter
{
	char	   *resource;
	long long	token;			/* last token handed out */
} fence_counter;
int			fence_counters(fence_ctx *ctx, const char *pattern,
						   fence_counter **counters, size_t *n);
void		fence_counters_free(fence_counter *counters, size_t n);

/* The heartbeat thread: extends every ttl/3 on its own connection. */
int			fence_heartbeat_start(fence_ctx *ctx, fence_lease *lease,
								  fence_lost_fn cb, void *arg);
void		fence_heartbeat_stop(fence_lease *lease);

/*
 * PostgreSQL side.  fence_announce moves the resource's mark to the
 * lease's token in a transaction of its own, right after the acquire and
 * before the holder reads anything; fence_exec runs one statement in a
 * transaction that moves the mark first, so when the first thing a fresh
 * lease does in PostgreSQL is a fence_exec, it needs no announce before
 * it (it heals a Redis counter behind PostgreSQL as the announce would).
 * fence_pg_mark reads the highest token PostgreSQL has accepted for
 * "resource" into "*token": for a resource without a mark, the floor of
 * its prefix that fence.forget() left (tokens must be above it); 0 when
 * there is neither (never announced, or reset).
 */
int			fence_announce(fence_ctx *ctx, fence_lease *lease, PGconn *pg);
PGresult   *fence_exec(fence_ctx *ctx, fence_lease *lease, PGconn *pg,
					   const char *sql, int nparams, const char *const *params);
int			fence_pg_mark(fence_ctx *ctx, PGconn *pg, const char *resource,
						  long long *token);

/*
 * After fence_announce, fence_exec (fence_leases_exec) or fence_pg_mark
 * failed because the database is not set up for fence (PostgreSQL refused
 * fence's own SQL with 42501, the role lacks the grant; 3F000 or 42883,
 * the extension is missing or older than the client): what to do, as
 * sentences that end with the SQL to run.  NULL after any other error, and
 * after an error of the caller's own statement.  Valid until the next call
 * on "ctx".
 */
const char *fence_pg_hint(const fence_ctx *ctx);

/*
 * Sets of leases, held together (a transfer holds both accounts' leases;
 * client/README.md, "Sets of leases").  The members are taken one after
 * the other in the bytewise order of their names, whatever order
 * "resources" gives, so that two callers asking for {a,b} and {b,a}
 * cannot deadlock; the same name twice is FENCE_ERR_ARG.  All or nothing:
 * when one member cannot be had (FENCE_ERR_BUSY, or FENCE_ERR_TIMEOUT once
 * "wait_ms" in all ran out), those taken are given back.  The members
 * share one owner id.  Each member is an ordinary lease: read it with the
 * fence_lease_* accessors above, in canonical order.
 */
typedef struct fence_leases fence_leases;

/* Called once, from a heartbeat thread, when any member is lost ("lost"). */
typedef void (*fence_leases_lost_fn) (fence_leases *set, fence_lease *lost, void *arg);

fence_leases *fence_acquire_many(fence_ctx *ctx, const char *const *resources,
								 size_t n, long long ttl_ms);
fence_leases *fence_acquire_many_wait(fence_ctx *ctx, const char *const *resources,
									  size_t n, long long ttl_ms, long long wait_ms);
size_t		fence_leases_count(const fence_leases *set);
fence_lease *fence_leases_member(const fence_leases *set, size_t i);
int			fence_leases_state(fence_leases *set);
int			fence_leases_extend(fence_ctx *ctx, fence_leases *set, long long ttl_ms);
int			fence_leases_release(fence_ctx *ctx, fence_leases *set);
void		fence_leases_free(fence_leases *set);
int			fence_leases_heartbeat_start(fence_ctx *ctx, fence_leases *set,
										 fence_leases_lost_fn cb, void *arg);
void		fence_leases_heartbeat_stop(fence_leases *set);

/* fence.advance for each member, in order (any version of the extension). */
int			fence_leases_announce(fence_ctx *ctx, fence_leases *set, PGconn *pg);

/*
 * The set's fenced statement, what fence_exec is for one lease: "sql" with
 * "params" in one transaction that first runs fence.advance_many (every
 * member's token accepted, or all refused: FENCE_ERR_STALE) with
 * fence.tokens set for it, so that guarded tables find each row's token.
 * On an idle connection it commits before returning, once every member is
 * checked again (rolled back, FENCE_ERR_LOST or _SUSPECT, when one is not
 * held by then); inside the caller's transaction the caller commits.
 * Refused while a member is suspect or lost, and for COPY (FENCE_ERR_ARG).
 * Needs the extension of 0.3.0 (fence.advance_many; fence_pg_hint says so
 * when it is older).  A set of one is fence_exec on its lease.  Returns
 * the statement's result (PQclear it), or NULL.
 */
PGresult   *fence_leases_exec(fence_ctx *ctx, fence_leases *set, PGconn *pg,
							  const char *sql, int nparams, const char *const *params);

/*
 * The fence.tokens value naming every member, RESOURCE=TOKEN/OWNER joined
 * by commas, quoted where the format asks; fence_format_tokens for any
 * triples (an owner NULL or "": none).  malloc'd (free()), NULL when out
 * of memory.
 */
char	   *fence_leases_tokens(const fence_leases *set);
/*
 * Read a fence.tokens value (the format fence_format_tokens writes),
 * calling "entry" with each entry in order, "owner" "" when it names none.
 * FENCE_OK; FENCE_ERR with a message in "errbuf" when the value is
 * malformed; or the first non-zero value "entry" returns, which stops it.
 */
int			fence_parse_tokens(const char *value,
							   int (*entry) (void *arg, const char *resource,
											 long long token, const char *owner),
							   void *arg, char *errbuf, size_t errlen);
char	   *fence_format_tokens(size_t n, const char *const *resources,
								const long long *tokens, const char *const *owners);

#ifdef __cplusplus
}
#endif

#endif							/* FENCE_H */
