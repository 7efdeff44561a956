/*
 * client/conn.c
 *	  One Redis server: connect, log in, send commands, and the deadline
 *	  that bounds every operation.
 *
 * Every topology is made of nodes (a single server, a Sentinel master, the
 * masters of a Cluster); this file is the only one that talks to a socket
 * in blocking mode (fanout.c does the non-blocking quorum rounds).
 *
 * hiredis leaves a context unusable after an I/O error or a timeout, so the
 * connection is dropped on any transport error and opened again (with AUTH
 * and SELECT) before the next command.  Transport errors become
 * FENCE_ERR_IO / FENCE_ERR_PROTOCOL; error replies from the server become
 * FENCE_ERR_REPLY, so callers can tell "Redis is not there" from "Redis
 * said no".  A failure before anything was sent (FENCE_NODE_UNREACHABLE) is
 * told apart from one after (FENCE_NODE_BROKEN): only the first may be
 * retried elsewhere without knowing whether the command ran.
 *
 * Each lease operation has a deadline (fence_op_begin: now + the command
 * timeout); connects and commands get at most what is left of it, so that
 * retries inside a topology (a failover, a redirect) never make an
 * operation outlast the timeout its caller chose.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "fence_int.h"

/* A socket timeout is changed only when it is off by more than this. */
#define TIMEOUT_SLACK_MS 10

static struct timeval
ms_to_tv(long ms)
{
	struct timeval tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	return tv;
}

/* Start the clock of one lease operation. */
void
fence_op_begin(fence_ctx *ctx)
{
	ctx->conn->deadline_ns = fence_now_ns() + (int64_t) ctx->conn->command_ms * 1000000;
}

/* Milliseconds left of the operation, at most "cap_ms" (0 when none). */
long
fence_op_left_ms(fence_ctx *ctx, long cap_ms)
{
	int64_t		left = (ctx->conn->deadline_ns - fence_now_ns()) / 1000000;

	if (left <= 0)
		return 0;
	return left < cap_ms ? (long) left : cap_ms;
}

/*
 * Sleep "*wait_ms" before a retry, then double it (up to "max_ms").
 * Returns 0 without sleeping when the operation's deadline would pass.
 */
int
fence_op_back_off(fence_ctx *ctx, long *wait_ms, long max_ms)
{
	long		left = fence_op_left_ms(ctx, *wait_ms);

	if (left < *wait_ms)
		return 0;
	fence_sleep_ns((int64_t) left * 1000000);
	*wait_ms = *wait_ms * 2 < max_ms ? *wait_ms * 2 : max_ms;
	return 1;
}

/* "ms", or less when the node has a cap of its own. */
static long
node_cap(const fence_node *n, long ms)
{
	return n->max_ms > 0 && n->max_ms < ms ? n->max_ms : ms;
}

/*
 * Sockets must not leak into the programs a worker starts ("fence run"
 * forks its command): hiredis opens them without close-on-exec.
 */
void
fence_set_cloexec(int fd)
{
	int			flags = fcntl(fd, F_GETFD);

	if (flags >= 0)
		(void) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

const char *
fence_node_name(const fence_node *n, char *buf, size_t len)
{
	if (n->addr.is_unix)
		snprintf(buf, len, "%s", n->addr.path);
	else if (strchr(n->addr.host, ':') != NULL)
		snprintf(buf, len, "[%s]:%d", n->addr.host, n->addr.port);
	else
		snprintf(buf, len, "%s:%d", n->addr.host, n->addr.port);
	return buf;
}

void
fence_node_drop(fence_node *n)
{
	if (n->rc != NULL)
	{
		redisFree(n->rc);
		n->rc = NULL;
	}
}

void
fence_node_free(fence_node *n)
{
	fence_node_drop(n);
	fence_url_free(&n->addr);
}

/* Map a hiredis transport error to ours and forget the connection. */
static void
transport_error(fence_ctx *ctx, fence_node *n, const char *what)
{
	redisContext *rc = n->rc;
	char		name[300];
	int			err = FENCE_ERR_IO;

	fence_node_name(n, name, sizeof(name));
	if (rc->err == REDIS_ERR_PROTOCOL)
		err = FENCE_ERR_PROTOCOL;
#ifdef FENCE_HIREDIS_HAS_TIMEOUT
	/* hiredis 1.x names timeouts; 0.14 reports them as REDIS_ERR_IO */
	else if (rc->err == REDIS_ERR_TIMEOUT)
	{
		fence_set_error(ctx, FENCE_ERR_IO, "%s (%s): timed out", what, name);
		fence_node_drop(n);
		return;
	}
#endif
	else if (rc->err == REDIS_ERR_OOM)
		err = FENCE_ERR_OOM;
	fence_set_error(ctx, err, "%s (%s): %s", what, name,
					rc->errstr[0] ? rc->errstr : "connection error");
	fence_node_drop(n);
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
		/* INCR refuses to wrap: that is the counter's overflow */
		if (strstr(r->str, "overflow") != NULL)
			fence_set_error(ctx, FENCE_ERR_OVERFLOW, "token counter overflow: %s", r->str);
		else
			fence_set_error(ctx, FENCE_ERR_REPLY, "Redis error: %s", r->str);
	}
	else
		fence_set_error(ctx, FENCE_ERR_PROTOCOL, "unexpected Redis reply type %d", r->type);
	freeReplyObject(r);
	return FENCE_ERR;
}

/* Is "r" an error reply whose first word is "word" (MOVED, READONLY...)? */
int
fence_reply_is(const redisReply *r, const char *word)
{
	size_t		len = strlen(word);

	return r != NULL && r->type == REDIS_REPLY_ERROR && r->str != NULL &&
		strncmp(r->str, word, len) == 0 && (r->str[len] == ' ' || r->str[len] == '\0');
}

void
fence_free_replies(int n, redisReply **replies)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		if (replies[i] != NULL)
			freeReplyObject(replies[i]);
		replies[i] = NULL;
	}
}

/* Send one command on a fresh connection, during login. */
static int
login_command(fence_ctx *ctx, fence_node *n, int argc, const char **argv)
{
	redisReply *r = redisCommandArgv(n->rc, argc, argv, NULL);

	if (r == NULL)
	{
		transport_error(ctx, n, "could not log in to Redis");
		return FENCE_ERR;
	}
	if (r->type == REDIS_REPLY_ERROR)
	{
		fence_set_error(ctx, FENCE_ERR_REPLY, "Redis refused %s: %s", argv[0], r->str);
		freeReplyObject(r);
		fence_node_drop(n);
		return FENCE_ERR;
	}
	freeReplyObject(r);
	return FENCE_OK;
}

/* Open the connection if it is closed: connect, AUTH, SELECT. */
int
fence_node_connect(fence_ctx *ctx, fence_node *n)
{
	const fence_url *u = &n->addr;
	long		cap = node_cap(n, ctx->conn->connect_ms);
	long		left;
	redisContext *rc;

	if (n->rc != NULL)
		return FENCE_OK;
	left = fence_op_left_ms(ctx, cap);
	if (left <= 0)
	{
		fence_set_error(ctx, FENCE_ERR_IO, "timed out before connecting to Redis");
		return FENCE_ERR;
	}
	if (u->is_unix)
		rc = redisConnectUnixWithTimeout(u->path, ms_to_tv(left));
	else
		rc = redisConnectWithTimeout(u->host, u->port, ms_to_tv(left));
	if (rc == NULL)
	{
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory connecting to Redis");
		return FENCE_ERR;
	}
	if (rc->err)
	{
		char		name[300];

		fence_set_error(ctx, FENCE_ERR_IO, "could not connect to Redis at %s: %s",
						fence_node_name(n, name, sizeof(name)), rc->errstr);
		redisFree(rc);
		return FENCE_ERR;
	}
	fence_set_cloexec(rc->fd);
	left = fence_op_left_ms(ctx, node_cap(n, ctx->conn->command_ms));
	if (left <= 0 || redisSetTimeout(rc, ms_to_tv(left)) != REDIS_OK)
	{
		fence_set_error(ctx, FENCE_ERR_IO, "could not set Redis timeout");
		redisFree(rc);
		return FENCE_ERR;
	}
	n->rc = rc;
	n->timeout_ms = left;

	if (u->password != NULL)
	{
		const char *argv[3] = {"AUTH", NULL, NULL};
		int			argc;

		if (u->user != NULL)
		{
			argv[1] = u->user;
			argv[2] = u->password;
			argc = 3;
		}
		else
		{
			argv[1] = u->password;
			argc = 2;
		}
		if (login_command(ctx, n, argc, argv) != FENCE_OK)
			return FENCE_ERR;
	}
	if (u->db != 0)
	{
		char		db[16];
		const char *argv[2] = {"SELECT", db};

		snprintf(db, sizeof(db), "%d", u->db);
		if (login_command(ctx, n, 2, argv) != FENCE_OK)
			return FENCE_ERR;
	}
	return FENCE_OK;
}

/*
 * Send "ncmds" commands in one write and read their replies into
 * "replies" (error replies included, for the caller to judge).  Returns
 * FENCE_OK, or FENCE_NODE_UNREACHABLE / FENCE_NODE_BROKEN with ctx->err
 * set and no replies.
 */
int
fence_node_pipeline(fence_ctx *ctx, fence_node *n, int ncmds,
					const fence_cmd *cmds, redisReply **replies)
{
	long		left;
	int			i;

	for (i = 0; i < ncmds; i++)
		replies[i] = NULL;
	if (fence_node_connect(ctx, n) != FENCE_OK)
		return FENCE_NODE_UNREACHABLE;
	left = fence_op_left_ms(ctx, node_cap(n, ctx->conn->command_ms));
	if (left <= 0)
	{
		fence_set_error(ctx, FENCE_ERR_IO, "Redis command timed out");
		return FENCE_NODE_UNREACHABLE;
	}
	/* Bound the wait by the operation's deadline, but spare the system
	 * calls while the timeout already set is close enough. */
	if (left < n->timeout_ms - TIMEOUT_SLACK_MS || left > n->timeout_ms + TIMEOUT_SLACK_MS)
	{
		if (redisSetTimeout(n->rc, ms_to_tv(left)) != REDIS_OK)
		{
			transport_error(ctx, n, "could not set Redis timeout");
			return FENCE_NODE_UNREACHABLE;
		}
		n->timeout_ms = left;
	}
	for (i = 0; i < ncmds; i++)
	{
		/* hiredis does not write through argv; its prototype lacks a const */
		if (redisAppendCommandArgv(n->rc, cmds[i].argc, (const char **) cmds[i].argv,
								   cmds[i].argvlen) != REDIS_OK)
		{
			transport_error(ctx, n, "could not send the Redis command");
			return FENCE_NODE_UNREACHABLE;
		}
	}
	for (i = 0; i < ncmds; i++)
	{
		void	   *r = NULL;

		if (redisGetReply(n->rc, &r) != REDIS_OK || r == NULL)
		{
			transport_error(ctx, n, "Redis command failed");
			fence_free_replies(i, replies);
			return FENCE_NODE_BROKEN;
		}
		replies[i] = r;
	}
	return FENCE_OK;
}

/* One command; the reply (maybe an error reply), or NULL on a transport
 * error. */
redisReply *
fence_node_command(fence_ctx *ctx, fence_node *n, int argc, const char **argv)
{
	fence_cmd	cmd;
	redisReply *r;
	int			i;

	if (argc > FENCE_MAX_ARGS)
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "too many command arguments");
		return NULL;
	}
	cmd.argc = argc;
	cmd.argvlen = NULL;
	for (i = 0; i < argc; i++)
		cmd.argv[i] = argv[i];
	if (fence_node_pipeline(ctx, n, 1, &cmd, &r) != FENCE_OK)
		return NULL;
	return r;
}
