/*
 * client/error.c
 *	  How failures are recorded: on a context (ctx->err, ctx->errstr, as
 *	  with hiredis) and on a link (fence_link_fail), and their names.
 *
 * The ground layer of libfence: every other file reports through these,
 * and they call nothing of the library.
 */
#include <stdarg.h>
#include <stdio.h>

#include "fence_int.h"

void
fence_set_error(fence_ctx *ctx, int err, const char *fmt,...)
{
	va_list		ap;

	ctx->err = err;
	ctx->conn->pg_hint[0] = '\0';
	ctx->conn->pg_hint_grant = 0;
	va_start(ap, fmt);
	vsnprintf(ctx->errstr, sizeof(ctx->errstr), fmt, ap);
	va_end(ap);
}

void
fence_clear_error(fence_ctx *ctx)
{
	ctx->err = 0;
	ctx->errstr[0] = '\0';
	ctx->conn->pg_hint[0] = '\0';
	ctx->conn->pg_hint_grant = 0;
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
 * Mark "l" failed with an error of kind "kind" and a message.  Returns
 * FENCE_LINK_ERROR, for "return fence_link_fail(...)".
 */
int
fence_link_fail(fence_link *l, int kind, const char *fmt,...)
{
	va_list		ap;

	if (l->state == FENCE_LINK_FAILED)
		return FENCE_LINK_ERROR;	/* keep the first reason */
	l->state = FENCE_LINK_FAILED;
	l->err_kind = kind;
	va_start(ap, fmt);
	vsnprintf(l->err, sizeof(l->err), fmt, ap);
	va_end(ap);
	return FENCE_LINK_ERROR;
}

/*
 * Is the last error one that asking again would meet again: a refused
 * login or command (FENCE_ERR_AUTH), or TLS refused (FENCE_ERR_TLS)?  The
 * topologies stop retrying at once on these.
 */
int
fence_err_refused(const fence_ctx *ctx)
{
	return ctx->err == FENCE_ERR_AUTH || ctx->err == FENCE_ERR_TLS;
}
