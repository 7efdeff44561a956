/*
 * client/conn.c
 *	  The Redis transport under a fence_ctx: connect, log in, send commands.
 *
 * hiredis leaves a context unusable after an I/O error or a timeout, so the
 * connection is dropped on any transport error and opened again (with AUTH
 * and SELECT) before the next command.  Transport errors become
 * FENCE_ERR_IO / FENCE_ERR_PROTOCOL; error replies from the server become
 * FENCE_ERR_REPLY (or a more precise kind, see reply_kind), so callers can
 * tell "Redis is not there" from "Redis said no".  Every socket is
 * close-on-exec.
 *
 * Time: connecting may take "connect_ms", each command "command_ms".  A
 * caller that must have an answer by some moment (the extend of a lease is
 * no use after the lease's local deadline) sets a deadline on the context,
 * and every step, the connect, the login and each command, must then be
 * over by it as well (step_end, the one place where that is worked out).
 * A command waits for its socket with ppoll() before each read and write,
 * so neither a silent server nor an answer that arrives in pieces can
 * stretch it past its end; ppoll's timers are also finer than a socket
 * timeout's.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "fence_int.h"

static int
set_cloexec(int fd)
{
	int			flags = fcntl(fd, F_GETFD);

	if (flags < 0)
		return -1;
	return fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

/*
 * Every call from now until fence_conn_set_deadline(ctx, 0) must be over by
 * "deadline_ns" (CLOCK_MONOTONIC); a call that cannot fails with
 * FENCE_ERR_IO.
 */
void
fence_conn_set_deadline(fence_ctx *ctx, int64_t deadline_ns)
{
	ctx->conn->deadline_ns = deadline_ns;
}

/*
 * When a step that may take "limit_ms" must be over: "limit_ms" from now,
 * or the caller's deadline if that comes sooner.
 */
static int64_t
step_end(fence_ctx *ctx, long limit_ms)
{
	int64_t		end = fence_now_ns() + (int64_t) limit_ms * 1000000;

	if (ctx->conn->deadline_ns != 0 && ctx->conn->deadline_ns < end)
		end = ctx->conn->deadline_ns;
	return end;
}

static void
timeout_error(fence_ctx *ctx, int64_t end, const char *what)
{
	if (end == ctx->conn->deadline_ns)
		fence_set_error(ctx, FENCE_ERR_IO, "%s: no answer before the deadline", what);
	else
		fence_set_error(ctx, FENCE_ERR_IO, "%s: timed out", what);
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

/*
 * Wait until the socket is ready for "events", or "end" passes: 1 ready,
 * 0 timed out, -1 poll failed.
 */
static int
wait_socket(redisContext *rc, short events, int64_t end)
{
	for (;;)
	{
		struct pollfd pfd = {rc->fd, events, 0};
		int64_t		left = end - fence_now_ns();
		struct timespec ts;
		int			n;

		if (left <= 0)
			return 0;
		ts.tv_sec = left / 1000000000;
		ts.tv_nsec = left % 1000000000;
		n = ppoll(&pfd, 1, &ts, NULL);
		if (n >= 0)
			return n > 0 ? 1 : 0;
		if (errno != EINTR)
			return -1;
	}
}

/*
 * Send one command on the open connection and read its reply: what
 * redisCommandArgv does, except that it waits for the socket before each
 * write and read, and gives up when the command's time (step_end) is up.
 * Returns NULL on a transport error, with ctx->err set and the connection
 * dropped.
 */
static redisReply *
round_trip(fence_ctx *ctx, int argc, const char **argv, const size_t *argvlen,
		   const char *what)
{
	redisContext *rc = ctx->conn->rc;
	int64_t		end = step_end(ctx, ctx->conn->command_ms);
	void	   *reply = NULL;
	int			done = 0,
				ready;

	if (redisAppendCommandArgv(rc, argc, argv, argvlen) != REDIS_OK)
		goto io_error;
	while (!done)
	{
		if ((ready = wait_socket(rc, POLLOUT, end)) <= 0)
			goto not_ready;
		if (redisBufferWrite(rc, &done) != REDIS_OK)
			goto io_error;
	}
	for (;;)
	{
		if (redisGetReplyFromReader(rc, &reply) != REDIS_OK)
			goto io_error;
		if (reply != NULL)
			return reply;
		if ((ready = wait_socket(rc, POLLIN, end)) <= 0)
			goto not_ready;
		if (redisBufferRead(rc) != REDIS_OK)
			goto io_error;
	}

io_error:
	transport_error(ctx, rc, what);
	return NULL;
not_ready:
	if (ready == 0)
		timeout_error(ctx, end, what);
	else
		fence_set_error(ctx, FENCE_ERR_IO, "%s: %s", what, strerror(errno));
	fence_conn_drop(ctx);
	return NULL;
}

/* Send one command on an open connection, during login. */
static int
login_command(fence_ctx *ctx, int argc, const char **argv)
{
	redisReply *r = round_trip(ctx, argc, argv, NULL, "could not log in to Redis");

	if (r == NULL)
		return FENCE_ERR;
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
	int64_t		left;
	struct timeval ctv;
	redisContext *rc;

	if (c->rc != NULL)
		return FENCE_OK;
	left = step_end(ctx, c->connect_ms) - fence_now_ns();
	if (left <= 0)
	{
		timeout_error(ctx, ctx->conn->deadline_ns, "could not connect to Redis");
		return FENCE_ERR;
	}
	ctv.tv_sec = left / 1000000000;
	ctv.tv_usec = left % 1000000000 / 1000;
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
	/* a backstop: round_trip() waits with ppoll() before every read or write */
	ctv.tv_sec = c->command_ms / 1000;
	ctv.tv_usec = c->command_ms % 1000 * 1000;
	if (redisSetTimeout(rc, ctv) != REDIS_OK)
	{
		fence_set_error(ctx, FENCE_ERR_IO, "could not set the Redis timeout");
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
	if (fence_conn_ensure(ctx) != FENCE_OK)
		return NULL;
	return round_trip(ctx, argc, argv, argvlen, "Redis command failed");
}
