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

/* hiredis 1.x added a distinct timeout error and made the reply sizes
 * size_t; both versions are supported. */
#if HIREDIS_MAJOR >= 1 && defined(REDIS_ERR_TIMEOUT)
#define FENCE_HIREDIS_HAS_TIMEOUT 1
#endif

#define FENCE_OWNER_BYTES 16	/* 128 bits of kernel randomness */
#define FENCE_OWNER_LEN (FENCE_OWNER_BYTES * 2)

/* The Lua scripts, in scripts.c. */
enum fence_script
{
	FENCE_SCRIPT_ACQUIRE,
	FENCE_SCRIPT_RELEASE,
	FENCE_SCRIPT_EXTEND,
	FENCE_SCRIPT_HEAL,
	FENCE_NSCRIPTS
};

/* One Redis connection plus what is needed to open it again. */
struct fence_conn
{
	fence_url	url;
	long		connect_ms;
	long		command_ms;
	redisContext *rc;			/* NULL while disconnected */
	uint64_t	rng;			/* xorshift state for backoff jitter */
	unsigned char pool[512];	/* kernel randomness for owner ids */
	size_t		pool_used;		/* bytes of "pool" already handed out */
	pid_t		pool_pid;		/* process that filled "pool" */
	long long	busy_pttl;		/* PTTL seen by the last busy acquire */
	int64_t		deadline_ns;	/* calls must be over by then; 0: none */
};

struct fence_lease
{
	char	   *resource;
	char	   *lock_key;		/* fence:{R}:lock (keys.c) */
	char	   *token_key;		/* fence:{R}:token */
	char		owner[FENCE_OWNER_LEN + 1];
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

/* conn.c */
void		fence_conn_set_deadline(fence_ctx *ctx, int64_t deadline_ns);
int			fence_conn_ensure(fence_ctx *ctx);
redisReply *fence_command_argv(fence_ctx *ctx, int argc, const char **argv,
							   const size_t *argvlen);
void		fence_conn_drop(fence_ctx *ctx);
int			fence_reply_error(fence_ctx *ctx, redisReply *r);

/* sha1.c */
void		fence_sha1_hex(const void *data, size_t len, char hex[41]);

/* scripts.c */
redisReply *fence_script_run(fence_ctx *ctx, enum fence_script which,
							 int nkeys, const char **keys,
							 int nargs, const char **args);

/* keys.c */
char	   *fence_key(const char *resource, const char *suffix);

/* lease.c */
int			fence_parse_token(const char *s, size_t len, long long *out);
int			fence_lease_usable(fence_ctx *ctx, fence_lease *lease);
long long	fence_drift_ms(long long ttl_ms);
int			fence_extend_raw(fence_ctx *ctx, const char *lock_key,
							 const char *owner, long long ttl_ms);
int			fence_lease_renew(fence_ctx *ctx, fence_lease *lease, long long ttl_ms);
void		fence_lease_wait(fence_lease *lease, int64_t until_ns);

#endif							/* FENCE_INT_H */
