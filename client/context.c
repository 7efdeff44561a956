/*
 * client/context.c
 *	  The fence_ctx: a Redis endpoint, its timeouts, and the last error.
 *
 * A context is returned even when connecting fails, so that the caller can
 * read ctx->err and ctx->errstr, as with hiredis.  It reconnects by itself
 * on the next command after a transport error, which is what a long-lived
 * worker wants when Redis restarts.  Also here: the clocks and the
 * randomness the rest of the library uses.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fence_int.h"

/* getrandom() arrived in glibc 2.25; older systems read /dev/urandom. */
#if defined(__has_include)
#if __has_include(<sys/random.h>)
#include <sys/random.h>
#define FENCE_HAVE_GETRANDOM 1
#endif
#endif

void
fence_set_error(fence_ctx *ctx, int err, const char *fmt,...)
{
	va_list		ap;

	ctx->err = err;
	va_start(ap, fmt);
	vsnprintf(ctx->errstr, sizeof(ctx->errstr), fmt, ap);
	va_end(ap);
}

void
fence_clear_error(fence_ctx *ctx)
{
	ctx->err = 0;
	ctx->errstr[0] = '\0';
}

const char *
fence_strerror(int err)
{
	switch (err)
	{
		case 0:
			return "no error";
		case FENCE_ERR_IO:
			return "Redis I/O error";
		case FENCE_ERR_PROTOCOL:
			return "Redis protocol error";
		case FENCE_ERR_REPLY:
			return "Redis error reply";
		case FENCE_ERR_BUSY:
			return "lock held by another owner";
		case FENCE_ERR_TIMEOUT:
			return "deadline passed";
		case FENCE_ERR_LOST:
			return "lease lost";
		case FENCE_ERR_SUSPECT:
			return "lease suspect";
		case FENCE_ERR_STALE:
			return "stale fencing token";
		case FENCE_ERR_PG:
			return "PostgreSQL error";
		case FENCE_ERR_ARG:
			return "invalid argument";
		case FENCE_ERR_OVERFLOW:
			return "token counter overflow";
		case FENCE_ERR_OOM:
			return "out of memory";
		case FENCE_ERR_AUTH:
			return "Redis refused the login";
		case FENCE_ERR_STATE:
			return "fence keys in an unexpected state";
		case FENCE_ERR_REPLICAS:
			return "too few replicas acknowledged";
		case FENCE_ERR_TLS:
			return "TLS refused";
	}
	return "unknown error";
}

/*
 * All lease timing uses CLOCK_MONOTONIC: a wall clock that jumps (NTP,
 * an administrator, a VM resume) must never make a lease look longer.
 */
int64_t
fence_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void
fence_sleep_ns(int64_t ns)
{
	struct timespec ts;

	if (ns <= 0)
		return;
	ts.tv_sec = ns / 1000000000;
	ts.tv_nsec = ns % 1000000000;
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/*
 * Fill "buf" from the kernel's random source: getrandom(), or /dev/urandom
 * where the system call is missing.
 */
int
fence_random_bytes(void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t		got = 0;
	int			fd;

#ifdef FENCE_HAVE_GETRANDOM
	while (got < len)
	{
		ssize_t		n = getrandom(p + got, len - got, 0);

		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			break;				/* e.g. ENOSYS: fall back to the device */
		}
		got += (size_t) n;
	}
	if (got == len)
		return 0;
#endif

	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (got < len)
	{
		ssize_t		n = read(fd, p + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
		{
			close(fd);
			return -1;
		}
		got += (size_t) n;
	}
	close(fd);
	return 0;
}

/*
 * Owner ids: "len" bytes from the kernel's random source, drawn from a
 * per-context pool so that a busy acquire loop does not pay for a
 * getrandom() call each time.  Bytes are used once and wiped as they are handed out.
 */
int
fence_owner_bytes(fence_ctx *ctx, unsigned char *buf, size_t len)
{
	struct fence_conn *c = ctx->conn;

	if (len > sizeof(c->pool))
		return fence_random_bytes(buf, len);
	/* After fork() parent and child hold the same pool: refill in the child,
	 * or two processes would present the same owner id. */
	if (c->pool_used == 0 || c->pool_used + len > sizeof(c->pool) ||
		c->pool_pid != getpid())
	{
		if (fence_random_bytes(c->pool, sizeof(c->pool)) != 0)
			return -1;
		c->pool_used = 0;
		c->pool_pid = getpid();
	}
	memcpy(buf, c->pool + c->pool_used, len);
	memset(c->pool + c->pool_used, 0, len);
	c->pool_used += len;
	return 0;
}

/* xorshift64*: jitter for backoff, not secrets. */
uint64_t
fence_rand(fence_ctx *ctx)
{
	uint64_t	x = ctx->conn->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	ctx->conn->rng = x;
	return x * UINT64_C(2685821657736338717);
}

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
