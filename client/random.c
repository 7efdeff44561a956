/*
 * client/random.c
 *	  Randomness: the kernel's for owner ids, a cheap generator for the
 *	  jitter of backoff.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fence_int.h"

/* getrandom() arrived in glibc 2.25; older systems read /dev/urandom. */
#if defined(__has_include)
#if __has_include(<sys/random.h>)
#include <sys/random.h>
#define FENCE_HAVE_GETRANDOM 1
#endif
#endif

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
		c->pool_pid != fence_self_pid())
	{
		if (fence_random_bytes(c->pool, sizeof(c->pool)) != 0)
			return -1;
		c->pool_used = 0;
		c->pool_pid = fence_self_pid();
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
