/*
 * client/node.c
 *	  One Redis server: connect, log in, send commands, and the deadlines
 *	  that bound every call.
 *
 * Every topology is made of nodes (a single server, a Sentinel master, the
 * masters of a Cluster); this file talks to them one at a time (fanout.c
 * does the parallel quorum rounds).  hiredis leaves a context unusable
 * after an I/O error or a timeout, so the connection is dropped on any
 * transport error and opened again (with AUTH and SELECT) before the next
 * command.  Transport errors become FENCE_ERR_IO / FENCE_ERR_PROTOCOL;
 * error replies from the server become FENCE_ERR_REPLY (or a more precise
 * kind, see reply_kind), so callers can tell "Redis is not there" from
 * "Redis said no".  A failure before anything was sent
 * (FENCE_NODE_UNREACHABLE) is told apart from one after
 * (FENCE_NODE_BROKEN): only the first may be retried elsewhere without
 * knowing whether the command ran.  The connection itself is a link
 * (link.c): a socket that is close-on-exec from its creation (socket.c),
 * with TLS on it when the URL is a rediss:// one (tls.c).
 *
 * Time: connecting may take "connect_ms", each command "command_ms".  Each
 * lease operation also has a deadline of its own (fence_op_begin: the
 * command timeout from its start), so that the retries of a topology (a
 * failover, a redirect) never outlast it; and a caller that must have an
 * answer by some moment (the extend of a lease is no use after the lease's
 * local deadline) sets a deadline on the context.  Every step, the connect,
 * the login and each command, must be over by the earliest of them
 * (step_end, the one place where that is worked out).  A command that
 * blocks in Redis on purpose (a waiter's BLPOP) gets its blocking time on
 * top of all of these (fence_op_begin_block), so that it is the server's
 * timeout that ends it, not ours.  A command waits for
 * its socket with ppoll() before each read and write, so neither a silent
 * server nor an answer that arrives in pieces can stretch it past its end;
 * ppoll's timers are also finer than a socket timeout's.  The TLS
 * handshake is a part of the connect, waited for in the same way.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fence_int.h"

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
 * The caller is late: it was paused (SIGSTOP, a VM paused, a starved CPU)
 * past the deadline of its calls while the servers kept answering.  Its
 * next step gets FENCE_WAIT_SLACK_MS from now, rather than failing unsent
 * with "no answer before the deadline" (a wait's last attempt, lease.c; a
 * quorum's attempt after its nodes woke it, quorum.c).
 */
void
fence_conn_grace(fence_ctx *ctx)
{
	int64_t		end = fence_now_ns() + (int64_t) FENCE_WAIT_SLACK_MS * 1000000;

	if (ctx->conn->deadline_ns != 0 && ctx->conn->deadline_ns < end)
		ctx->conn->deadline_ns = end;
}

/* Start the clock of one lease operation. */
void
fence_op_begin(fence_ctx *ctx)
{
	ctx->conn->block_ms = 0;
	ctx->conn->op_deadline_ns = fence_now_ns() + (int64_t) ctx->conn->command_ms * 1000000;
}

/*
 * Start the clock of an operation whose command blocks in Redis for up to
 * "block_ms" before it answers: it may take that much longer than any
 * other.
 */
void
fence_op_begin_block(fence_ctx *ctx, long block_ms)
{
	ctx->conn->block_ms = block_ms;
	ctx->conn->op_deadline_ns = fence_now_ns() +
		((int64_t) ctx->conn->command_ms + block_ms) * 1000000;
}

/*
 * "BLPOP key T" for T = "block_ms" (at least 1 ms: 0 would block for
 * ever), into "cmd"; the seconds are written into "secs", which must
 * outlive it.  Redis 6.0 and later take fractions of a second.
 */
void
fence_blpop_cmd(fence_cmd *cmd, const char *key, long block_ms, char *secs, size_t secs_len)
{
	if (block_ms < 1)
		block_ms = 1;
	snprintf(secs, secs_len, "%ld.%03ld", block_ms / 1000, block_ms % 1000);
	cmd->argc = 3;
	cmd->argv[0] = "BLPOP";
	cmd->argv[1] = key;
	cmd->argv[2] = secs;
	cmd->argvlen = NULL;
}

/* The earliest of the operation's and the caller's deadlines (0: none). */
static int64_t
hard_end(fence_ctx *ctx)
{
	int64_t		op = ctx->conn->op_deadline_ns,
				caller = ctx->conn->deadline_ns;

	if (op == 0 || (caller != 0 && caller < op))
		return caller;
	return op;
}

/*
 * When a step that may take "limit_ms" must be over: "limit_ms" from now,
 * or a deadline if that comes sooner.
 */
static int64_t
step_end(fence_ctx *ctx, long limit_ms)
{
	int64_t		end = fence_now_ns() + (int64_t) limit_ms * 1000000;
	int64_t		hard = hard_end(ctx);

	if (hard != 0 && hard < end)
		end = hard;
	return end;
}

/* Milliseconds left before a deadline, at most "cap_ms" (0 when none). */
long
fence_op_left_ms(fence_ctx *ctx, long cap_ms)
{
	int64_t		hard = hard_end(ctx);
	int64_t		left;

	/* a cut call has no time left: it is made again ("Cut calls") */
	if (ctx->conn->cut)
		return 0;
	if (hard == 0)
		return cap_ms;
	left = (hard - fence_now_ns()) / 1000000;
	if (left <= 0)
		return 0;
	return left < cap_ms ? (long) left : cap_ms;
}

/*
 * Sleep "*wait_ms" before a retry, then double it (up to "max_ms").
 * Returns 0 without sleeping when a deadline would pass.
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
	fence_link_free(n->link);
	n->link = NULL;
}

void
fence_node_free(fence_node *n)
{
	fence_node_drop(n);
	fence_url_free(&n->addr);
}

static void
timeout_error(fence_ctx *ctx, int64_t end, const char *what, const char *name)
{
	if (end == ctx->conn->deadline_ns)
		fence_set_error(ctx, FENCE_ERR_IO, "%s (%s): no answer before the deadline", what, name);
	else
		fence_set_error(ctx, FENCE_ERR_IO, "%s (%s): timed out", what, name);
}

/* Report why the link failed, and forget the connection. */
static void
transport_error(fence_ctx *ctx, fence_node *n, const char *what)
{
	char		name[300];

	fence_node_name(n, name, sizeof(name));
	fence_set_error(ctx, n->link->err_kind ? n->link->err_kind : FENCE_ERR_IO, "%s (%s): %s",
					what, name, n->link->err[0] ? n->link->err : "connection error");
	fence_node_drop(n);
}

/*
 * The time one of "remaining" nodes may take, when "budget_ms" is left for
 * all of them (silent sentinels, a frozen Cluster seed): an equal share,
 * and at most a third of the command timeout (leave time for the others
 * and for the command itself), within [FENCE_SHARE_MIN_MS,
 * FENCE_SHARE_MAX_MS] unless the budget is smaller still.
 */
long
fence_share_ms(fence_ctx *ctx, long budget_ms, int remaining)
{
	long		cap = ctx->conn->command_ms / 3;

	if (cap > FENCE_SHARE_MAX_MS)
		cap = FENCE_SHARE_MAX_MS;
	if (cap < FENCE_SHARE_MIN_MS)
		cap = FENCE_SHARE_MIN_MS;
	if (remaining > 0 && cap > budget_ms / remaining)
		cap = budget_ms / remaining;
	if (cap < FENCE_SHARE_MIN_MS)
		cap = budget_ms < FENCE_SHARE_MIN_MS ? budget_ms : FENCE_SHARE_MIN_MS;
	return cap;
}

/*
 * Cut calls.  A context with a reply bound (fence_set_reply_bound) serves a
 * caller that may not block for long, an event loop: the one-lease calls
 * that do not wait (acquire, extend, release, release_acquire) run with
 * "bounding" set, and a round trip of theirs whose answer has not come
 * within the bound stops waiting for it.  Nothing is dropped: the request
 * stays in flight on its connection (the link "owes" its answers), its
 * bytes and what was read so far go into the context's park, the call
 * fails with FENCE_ERR_IO and "cut" set, and every further step of it
 * fails at once, unsent.  The caller then makes the same call again
 * (another thread may wait); its first round trip finds the same request
 * on the same connection and reads the answers already on their way:
 * one send, one answer, exactly as if the call had never been cut.  The
 * same call asks again under the same owner id (fence_lease_new takes the
 * parked one), and a lease's deadline counts from before the first send
 * (fence_op_t0), so the request matches byte for byte.
 *
 * When it does not (the connection broke meanwhile, a NOSCRIPT reply made
 * the cut request an EVAL), the parked answers are never read: their link
 * is dropped at its next use, and "dropped" is set, which turns a release
 * that then finds the lock gone into "outcome unknown" rather than "lost"
 * (the cut release may have been the one that gave it back).  A redone
 * acquire and extend are safe as they are: acquire.lua takes a lock that
 * the same owner holds as its own, and an extend only lengthens it.
 */
/* Start a call the bound applies to; returns what fence_bound_end restores. */
int
fence_bound_begin(fence_ctx *ctx)
{
	int			was = ctx->conn->bounding;

	ctx->conn->bounding = ctx->conn->bound_ms > 0;
	return was;
}

void
fence_bound_end(fence_ctx *ctx, int was)
{
	ctx->conn->bounding = was;
}

/* The bounded call stops here, with nothing in flight for it ("what"). */
void
fence_cut(fence_ctx *ctx, const char *what)
{
	ctx->conn->cut = 1;
	fence_set_error(ctx, FENCE_ERR_IO, "%s: no answer within the reply bound (%ld ms)",
					what, ctx->conn->bound_ms);
}

/*
 * When a lease operation starting now was sent, for its deadline: now, or
 * before the cut request this call may take up.
 */
int64_t
fence_op_t0(fence_ctx *ctx)
{
	int64_t		now = fence_now_ns();

	if (ctx->conn->park.active && ctx->conn->park.sent_ns < now)
		return ctx->conn->park.sent_ns;
	return now;
}

/*
 * Was a cut request left unread since the last cut, or is it still to be
 * taken up (the call made again went elsewhere)?  (Clears the first.)
 */
int
fence_park_dropped(fence_ctx *ctx)
{
	int			dropped = ctx->conn->park.dropped || ctx->conn->park.active;

	ctx->conn->park.dropped = 0;
	return dropped;
}

void
fence_park_clear(fence_ctx *ctx)
{
	fence_park *p = &ctx->conn->park;

	if (p->replies != NULL)
		fence_free_replies(p->got, p->replies);
	free(p->replies);
	free(p->req);
	p->replies = NULL;
	p->req = NULL;
	p->req_len = 0;
	p->got = 0;
	p->ncmds = 0;
	p->node = NULL;
	p->link = NULL;
	p->owner[0] = '\0';
	p->resource[0] = '\0';
	p->active = 0;
}

/* "cmds" as they go out (link.c's fence_link_append), into "*out". */
static int
request_bytes(int ncmds, const fence_cmd *cmds, char **out, size_t *len)
{
	size_t		need = 1,
				at = 0;
	char	   *buf;
	int			i,
				j;

	for (i = 0; i < ncmds; i++)
	{
		need += 16;
		for (j = 0; j < cmds[i].argc; j++)
			need += (cmds[i].argvlen ? cmds[i].argvlen[j] : strlen(cmds[i].argv[j])) + 32;
	}
	if ((buf = malloc(need)) == NULL)
		return FENCE_ERR;
	for (i = 0; i < ncmds; i++)
	{
		at += snprintf(buf + at, need - at, "*%d\r\n", cmds[i].argc);
		for (j = 0; j < cmds[i].argc; j++)
		{
			size_t		n = cmds[i].argvlen ? cmds[i].argvlen[j] : strlen(cmds[i].argv[j]);

			at += snprintf(buf + at, need - at, "$%zu\r\n", n);
			memcpy(buf + at, cmds[i].argv[j], n);
			at += n;
			memcpy(buf + at, "\r\n", 2);
			at += 2;
		}
	}
	*out = buf;
	*len = at;
	return FENCE_OK;
}

/*
 * The round trip of "n" is cut: park its request ("got" answers read) and
 * leave it in flight.  Without memory to park it, the connection goes, as
 * for a timeout, and "dropped" says its outcome is unknown.
 */
static void
park(fence_ctx *ctx, fence_node *n, int ncmds, const fence_cmd *cmds, redisReply **replies,
	 int got, int64_t sent_ns, const char *what)
{
	fence_park *p = &ctx->conn->park;
	char		name[300];

	fence_park_clear(ctx);
	p->dropped = 0;
	if (request_bytes(ncmds, cmds, &p->req, &p->req_len) != FENCE_OK ||
		(p->replies = calloc(ncmds, sizeof(redisReply *))) == NULL)
	{
		fence_free_replies(got, replies);
		fence_park_clear(ctx);
		fence_node_drop(n);
		p->dropped = 1;
	}
	else
	{
		memcpy(p->replies, replies, got * sizeof(redisReply *));
		p->got = got;
		p->ncmds = ncmds;
		p->node = n;
		p->link = n->link;
		p->sent_ns = sent_ns;
		n->link->owed = 1;
		/* the acquire being cut, if it is one (fence_lease_new) */
		strcpy(p->owner, ctx->conn->last_owner);
		strcpy(p->resource, ctx->conn->last_resource);
		p->active = 1;
	}
	fence_node_name(n, name, sizeof(name));
	ctx->conn->cut = 1;
	fence_set_error(ctx, FENCE_ERR_IO, "%s (%s): no answer within the reply bound (%ld ms)",
					what, name, ctx->conn->bound_ms);
}

/*
 * The first round trip after a cut: whether it is the cut one again, on
 * the same connection (then "*got" answers are in "replies" already).  The
 * park is over either way.
 */
static int
take_up(fence_ctx *ctx, fence_node *n, int ncmds, const fence_cmd *cmds, redisReply **replies,
		int *got, int64_t *sent_ns)
{
	fence_park *p = &ctx->conn->park;
	char	   *req = NULL;
	size_t		len = 0;
	int			same;

	same = n->link != NULL && n->link == p->link && n->link->owed && p->ncmds == ncmds &&
		request_bytes(ncmds, cmds, &req, &len) == FENCE_OK &&
		len == p->req_len && memcmp(req, p->req, len) == 0;
	free(req);
	if (!same)
	{
		p->dropped = 1;
		fence_park_clear(ctx);
		return 0;
	}
	memcpy(replies, p->replies, p->got * sizeof(redisReply *));
	*got = p->got;
	*sent_ns = p->sent_ns;
	free(p->replies);
	p->replies = NULL;
	n->link->owed = 0;
	fence_park_clear(ctx);
	return 1;
}

/*
 * Send "ncmds" commands in one write on the open connection and read their
 * replies, waiting for the socket before each write and read, and giving
 * up when the step's time (step_end) is up.  Returns FENCE_OK, or a
 * FENCE_NODE_* code with ctx->err set, no replies, and the connection
 * dropped.
 */
static int
round_trip(fence_ctx *ctx, fence_node *n, int ncmds, const fence_cmd *cmds,
		   redisReply **replies, int taken, int64_t sent_ns, const char *what)
{
	fence_link *l = n->link;
	int64_t		end = step_end(ctx, node_cap(n, ctx->conn->command_ms + ctx->conn->block_ms));
	int64_t		wait_end = end;
	int			got = taken < 0 ? 0 : taken,
				ready = 1,
				st,
				i;

	for (i = got; i < ncmds; i++)
		replies[i] = NULL;
	if (taken < 0)
	{
		for (i = 0; i < ncmds; i++)
		{
			if (fence_link_append(l, cmds[i].argc, cmds[i].argv, cmds[i].argvlen) != FENCE_OK)
			{
				transport_error(ctx, n, what);
				return FENCE_NODE_UNREACHABLE;
			}
		}
		while ((st = fence_link_flush(l)) != FENCE_LINK_DONE)
		{
			if (st == FENCE_LINK_ERROR)
				goto io_error;
			if ((ready = fence_link_wait(l, st, end)) <= 0)
				goto not_ready;
		}
	}
	/* a bounded call waits for its answer this long (not for a BLPOP) */
	if (ctx->conn->bounding && ctx->conn->block_ms == 0)
	{
		int64_t		bound = fence_now_ns() + (int64_t) ctx->conn->bound_ms * 1000000;

		if (bound < end)
			wait_end = bound;
	}
	/*
	 * Wait before each read: nothing can have come before the request
	 * went out, and fence_link_read takes all there is (for TLS, all
	 * OpenSSL holds too), so a read before the wait would come back empty
	 * every time, a system call for nothing.
	 */
	st = FENCE_LINK_WANT_READ;
	while (got < ncmds)
	{
		redisReply *reply;

		if (fence_link_reply(l, &reply) != FENCE_OK)
			goto io_error;
		if (reply != NULL)
		{
			replies[got++] = reply;
			continue;
		}
		if ((ready = fence_link_wait(l, st, wait_end)) <= 0)
		{
			if (ready == 0 && wait_end < end)
			{
				park(ctx, n, ncmds, cmds, replies, got, sent_ns, what);
				return FENCE_NODE_BROKEN;
			}
			goto not_ready;
		}
		if ((st = fence_link_read(l)) == FENCE_LINK_ERROR)
			goto io_error;
		if (st == FENCE_LINK_DONE)
			st = FENCE_LINK_WANT_READ;
	}
	n->used_ns = fence_now_ns();
	return FENCE_OK;

io_error:
	fence_free_replies(got, replies);
	transport_error(ctx, n, what);
	return FENCE_NODE_BROKEN;
not_ready:
	fence_free_replies(got, replies);
	{
		char		name[300];

		fence_node_name(n, name, sizeof(name));
		if (ready == 0)
			timeout_error(ctx, end, what, name);
		else
			fence_set_error(ctx, FENCE_ERR_IO, "%s (%s): %s", what, name, strerror(errno));
	}
	fence_node_drop(n);
	return FENCE_NODE_BROKEN;
}

/* Send one command on a fresh connection, during login. */
static int
login_command(fence_ctx *ctx, fence_node *n, int argc, const char **argv)
{
	fence_cmd	cmd;
	redisReply *r;
	int			i;

	cmd.argc = argc;
	cmd.argvlen = NULL;
	for (i = 0; i < argc; i++)
		cmd.argv[i] = argv[i];
	if (round_trip(ctx, n, 1, &cmd, &r, -1, 0, "could not log in to Redis") != FENCE_OK)
		return FENCE_ERR;
	if (r->type == REDIS_REPLY_ERROR)
	{
		/* a wrong password, user or database: the URL is wrong */
		fence_set_error(ctx, FENCE_ERR_AUTH, "Redis refused %s: %s", argv[0], r->str);
		freeReplyObject(r);
		fence_node_drop(n);
		return FENCE_ERR;
	}
	freeReplyObject(r);
	return FENCE_OK;
}

/*
 * Connect, and finish the TLS handshake when there is one, by "end".
 * FENCE_OK with n->link open, or FENCE_ERR.
 */
static int
open_link(fence_ctx *ctx, fence_node *n, int64_t end, const char *name)
{
	struct ssl_ctx_st *tls = NULL;
	char		msg[200];
	int			kind,
				st,
				ready;

	if (n->addr.tls.enabled && (tls = fence_tls_context(ctx, &n->addr.tls)) == NULL)
		return FENCE_ERR;
	if ((n->link = fence_link_open(&n->addr, tls, end, msg, sizeof(msg), &kind)) == NULL)
	{
		fence_set_error(ctx, kind, "could not connect to Redis at %s: %s", name, msg);
		return FENCE_ERR;
	}
	while ((st = fence_link_connect_step(n->link)) != FENCE_LINK_DONE)
	{
		if (st == FENCE_LINK_ERROR)
			fence_set_error(ctx, n->link->err_kind, "could not connect to Redis at %s: %s",
							name, n->link->err);
		else if ((ready = fence_link_wait(n->link, st, end)) == 0)
			fence_set_error(ctx, FENCE_ERR_IO, "TLS handshake with Redis (%s): %s", name,
							end == ctx->conn->deadline_ns ? "no answer before the deadline" :
							"timed out (as with a server that does not speak TLS on that port)");
		else if (ready < 0)
			fence_set_error(ctx, FENCE_ERR_IO, "TLS handshake with Redis (%s): %s", name,
							strerror(errno));
		else
			continue;
		fence_node_drop(n);
		return FENCE_ERR;
	}
	return FENCE_OK;
}

/*
 * Open the connection if it is closed: connect (and TLS), AUTH, SELECT.
 * A connection this process inherited through fork() is the parent's: it
 * is dropped unused (link.c) and opened anew.
 */
int
fence_node_connect(fence_ctx *ctx, fence_node *n)
{
	const fence_url *u = &n->addr;
	int64_t		end;
	char		name[300];

	if (n->link != NULL && n->link->pid != fence_self_pid())
		fence_node_drop(n);
	if (n->link != NULL)
		return FENCE_OK;
	fence_node_name(n, name, sizeof(name));
	end = step_end(ctx, node_cap(n, ctx->conn->connect_ms));
	if (end <= fence_now_ns())
	{
		timeout_error(ctx, hard_end(ctx), "could not connect to Redis", name);
		return FENCE_ERR;
	}
	if (open_link(ctx, n, end, name) != FENCE_OK)
		return FENCE_ERR;

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
	else if (u->password == NULL && n->link->cert_requested)
	{
		/*
		 * Under TLS 1.3 the server says whether it takes our certificate (or
		 * none) only after the handshake: learn it from a command that
		 * changes nothing rather than from the lease operation (tls.c).
		 */
		const char *argv[1] = {"PING"};

		if (login_command(ctx, n, 1, argv) != FENCE_OK)
			return FENCE_ERR;
	}
	return FENCE_OK;
}

/*
 * Has the server closed this idle connection (link.c)?  A connection that
 * answered within the last IDLE_CHECK_MS is taken as it is: back-to-back
 * commands (a cycle of acquire and release) do not pay the system call.
 */
#define IDLE_CHECK_MS 10

static int
peer_closed(const fence_node *n)
{
	if (fence_now_ns() - n->used_ns < (int64_t) IDLE_CHECK_MS * 1000000)
		return 0;
	return fence_link_idle_closed(n->link);
}

/*
 * Send "ncmds" commands in one write and read their replies into
 * "replies" (error replies included, for the caller to judge).  Returns
 * FENCE_OK, or FENCE_NODE_UNREACHABLE / FENCE_NODE_BROKEN with ctx->err
 * set and no replies.  A connection the server closed while it was idle
 * is opened again first.
 */
int
fence_node_pipeline(fence_ctx *ctx, fence_node *n, int ncmds,
					const fence_cmd *cmds, redisReply **replies)
{
	int64_t		sent_ns;
	int			got;

	/* the rest of a cut call fails unsent (see "Cut calls") */
	if (ctx->conn->cut)
	{
		fence_cut(ctx, "Redis command not sent");
		return FENCE_NODE_UNREACHABLE;
	}
	/*
	 * The cut call again: its answers are on their way (see "Cut calls").
	 * Only a round trip to the node that has them decides; another (a
	 * sentinel asked first) leaves them be.
	 */
	if (ctx->conn->park.active && ctx->conn->park.node == (const void *) n &&
		take_up(ctx, n, ncmds, cmds, replies, &got, &sent_ns))
		return round_trip(ctx, n, ncmds, cmds, replies, got, sent_ns, "Redis command failed");
	/* answers of a cut call that nobody will read */
	if (n->link != NULL && n->link->owed)
		fence_node_drop(n);
	if (n->link != NULL && peer_closed(n))
		fence_node_drop(n);
	/* a bounded call does not connect: that may take a connect timeout */
	if (n->link == NULL && ctx->conn->bounding)
	{
		fence_cut(ctx, "Redis command not sent (not connected)");
		return FENCE_NODE_UNREACHABLE;
	}
	if (fence_node_connect(ctx, n) != FENCE_OK)
		return FENCE_NODE_UNREACHABLE;
	sent_ns = ctx->conn->bounding ? fence_now_ns() : 0;
	return round_trip(ctx, n, ncmds, cmds, replies, -1, sent_ns, "Redis command failed");
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
