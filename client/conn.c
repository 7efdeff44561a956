/*
 * client/conn.c
 *	  The Redis transport under a fence_ctx: connect, log in, send commands.
 *
 * hiredis leaves a context unusable after an I/O error or a timeout, so the
 * connection is dropped on any transport error and opened again (with AUTH
 * and SELECT) before the next command.  Every socket is close-on-exec.  Transport errors become
 * FENCE_ERR_IO / FENCE_ERR_PROTOCOL; error replies from the server become
 * FENCE_ERR_REPLY, so callers can tell "Redis is not there" from "Redis
 * said no".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "fence_int.h"

static struct timeval
ms_to_tv(long ms)
{
	struct timeval tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	return tv;
}

static int
set_cloexec(int fd)
{
	int			flags = fcntl(fd, F_GETFD);

	if (flags < 0)
		return -1;
	return fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

/* Map a hiredis transport error to ours and forget the connection. */
static void
transport_error(fence_ctx *ctx, redisContext *rc, const char *what)
{
	int			err = FENCE_ERR_IO;

	if (rc->err == REDIS_ERR_PROTOCOL)
		err = FENCE_ERR_PROTOCOL;
#ifdef FENCE_HIREDIS_HAS_TIMEOUT
	/* hiredis 1.x names timeouts; 0.14 reports them as REDIS_ERR_IO */
	else if (rc->err == REDIS_ERR_TIMEOUT)
	{
		fence_set_error(ctx, FENCE_ERR_IO, "%s: timed out", what);
		fence_conn_drop(ctx);
		return;
	}
#endif
	else if (rc->err == REDIS_ERR_OOM)
		err = FENCE_ERR_OOM;
	fence_set_error(ctx, err, "%s: %s", what,
					rc->errstr[0] ? rc->errstr : "connection error");
	fence_conn_drop(ctx);
}

void
fence_conn_drop(fence_ctx *ctx)
{
	if (ctx->conn->rc != NULL)
	{
		redisFree(ctx->conn->rc);
		ctx->conn->rc = NULL;
	}
}

/*
 * The kind of error an error reply is.  Refusals of the login or of a
 * command by the ACL mean the configuration is wrong; WRONGTYPE, and the
 * scripts' own "FENCESTATE" errors, that the keys hold something fence
 * never writes.
 */
static int
reply_kind(const char *msg)
{
	if (strncmp(msg, "NOAUTH", 6) == 0 || strncmp(msg, "WRONGPASS", 9) == 0 ||
		strncmp(msg, "NOPERM", 6) == 0)
		return FENCE_ERR_AUTH;
	if (strncmp(msg, "FENCESTATE", 10) == 0 || strstr(msg, "WRONGTYPE") != NULL)
		return FENCE_ERR_STATE;
	/* INCR refuses to wrap: that is the counter's overflow */
	if (strstr(msg, "overflow") != NULL)
		return FENCE_ERR_OVERFLOW;
	return FENCE_ERR_REPLY;
}

/*
 * Turn an error reply (or an unexpected NULL) into ctx->err.  Returns
 * FENCE_ERR so callers can "return fence_reply_error(...)".
 */
int
fence_reply_error(fence_ctx *ctx, redisReply *r)
{
	if (r == NULL)
		return FENCE_ERR;		/* error already set by the transport */
	if (r->type == REDIS_REPLY_ERROR)
	{
		int			kind = reply_kind(r->str);

		if (strncmp(r->str, "FENCESTATE ", 11) == 0)
			fence_set_error(ctx, kind, "fence's keys hold what fence never writes: %s", r->str + 11);
		else
			fence_set_error(ctx, kind, "%s: %s",
							kind == FENCE_ERR_OVERFLOW ? "token counter overflow" : "Redis error",
							r->str);
	}
	else
		fence_set_error(ctx, FENCE_ERR_PROTOCOL, "unexpected Redis reply type %d", r->type);
	freeReplyObject(r);
	return FENCE_ERR;
}

/* Send one command on an open connection, during login. */
static int
login_command(fence_ctx *ctx, int argc, const char **argv)
{
	redisContext *rc = ctx->conn->rc;
	redisReply *r = redisCommandArgv(rc, argc, argv, NULL);

	if (r == NULL)
	{
		transport_error(ctx, rc, "could not log in to Redis");
		return FENCE_ERR;
	}
	if (r->type == REDIS_REPLY_ERROR)
	{
		/* a wrong password, user or database: the URL is wrong */
		fence_set_error(ctx, FENCE_ERR_AUTH, "Redis refused %s: %s", argv[0], r->str);
		freeReplyObject(r);
		fence_conn_drop(ctx);
		return FENCE_ERR;
	}
	freeReplyObject(r);
	return FENCE_OK;
}

/* Open the connection if it is closed: connect, AUTH, SELECT. */
int
fence_conn_ensure(fence_ctx *ctx)
{
	struct fence_conn *c = ctx->conn;
	struct timeval ctv = ms_to_tv(c->connect_ms);
	struct timeval tv = ms_to_tv(c->command_ms);
	redisContext *rc;

	if (c->rc != NULL)
		return FENCE_OK;
	if (c->url.is_unix)
		rc = redisConnectUnixWithTimeout(c->url.path, ctv);
	else
		rc = redisConnectWithTimeout(c->url.host, c->url.port, ctv);
	if (rc == NULL)
	{
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory connecting to Redis");
		return FENCE_ERR;
	}
	if (rc->err)
	{
		if (c->url.is_unix)
			fence_set_error(ctx, FENCE_ERR_IO, "could not connect to Redis at %s: %s",
							c->url.path, rc->errstr);
		else
			fence_set_error(ctx, FENCE_ERR_IO, "could not connect to Redis at %s:%d: %s",
							c->url.host, c->url.port, rc->errstr);
		redisFree(rc);
		return FENCE_ERR;
	}
	/*
	 * hiredis does not ask for close-on-exec, and a child the application
	 * execs must not inherit the connection: it would keep talking on it,
	 * or keep it open after we are gone.
	 */
	if (set_cloexec(rc->fd) != 0)
	{
		fence_set_error(ctx, FENCE_ERR_IO, "could not set close-on-exec on the Redis socket: %s",
						strerror(errno));
		redisFree(rc);
		return FENCE_ERR;
	}
	if (redisSetTimeout(rc, tv) != REDIS_OK)
	{
		fence_set_error(ctx, FENCE_ERR_IO, "could not set Redis timeout");
		redisFree(rc);
		return FENCE_ERR;
	}
	c->rc = rc;

	if (c->url.password != NULL)
	{
		const char *argv[3] = {"AUTH", NULL, NULL};
		int			argc;

		if (c->url.user != NULL)
		{
			argv[1] = c->url.user;
			argv[2] = c->url.password;
			argc = 3;
		}
		else
		{
			argv[1] = c->url.password;
			argc = 2;
		}
		if (login_command(ctx, argc, argv) != FENCE_OK)
			return FENCE_ERR;
	}
	if (c->url.db != 0)
	{
		char		db[16];
		const char *argv[2] = {"SELECT", db};

		snprintf(db, sizeof(db), "%d", c->url.db);
		if (login_command(ctx, 2, argv) != FENCE_OK)
			return FENCE_ERR;
	}
	return FENCE_OK;
}

/*
 * Send one command and read its reply.  Returns NULL on a transport error
 * (ctx->err set); an error reply is returned as a reply, for the caller to
 * judge.
 */
redisReply *
fence_command_argv(fence_ctx *ctx, int argc, const char **argv,
				   const size_t *argvlen)
{
	redisReply *r;
	redisContext *rc;

	if (fence_conn_ensure(ctx) != FENCE_OK)
		return NULL;
	rc = ctx->conn->rc;
	r = redisCommandArgv(rc, argc, argv, argvlen);
	if (r == NULL)
	{
		transport_error(ctx, rc, "Redis command failed");
		return NULL;
	}
	return r;
}
