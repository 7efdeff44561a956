/*
 * client/store/fanout.c
 *	  One request to each of several Redis nodes at once, for a quorum.
 *
 * Redlock asks every node in parallel, each with a timeout far below the
 * lease's TTL: the time an acquire takes is that of the slowest node that
 * answers, and a node that is down, frozen or far away costs at most the
 * timeout.  Links (link.c) never block, so this drives one per node around
 * a single poll(), each waiting for what it said it needs next.
 *
 * A node that is not connected is connected within the round, its TLS
 * handshake too: its AUTH and SELECT go out in the same write as the
 * request, so a reconnect costs no extra round trip.  A NOSCRIPT reply is
 * answered with the script's EVAL within the same round.  A node that has not answered when the round ends
 * loses its connection (a late reply must never be read as the answer to a
 * later request) and is connected again in the next round.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h"

enum phase
{
	PH_IDLE,					/* nothing to do */
	PH_CONNECTING,				/* waiting for the connect, the TLS handshake */
	PH_TALKING,					/* writing the request, reading replies */
	PH_DONE
};

typedef struct fan_state
{
	enum phase	phase;
	int			want;			/* FENCE_LINK_WANT_*: what to poll for */
	int			written;		/* the output buffer is flushed */
	int			login_left;		/* AUTH / SELECT replies still to come */
	int			evaled;			/* NOSCRIPT already answered with EVAL */
} fan_state;

/* Note why node "f" gave no reply (cut to fit). */
void
fence_fan_why(fence_fan *f, const char *why)
{
	size_t		len = strlen(why);

	if (len >= sizeof(f->why))
		len = sizeof(f->why) - 1;
	memcpy(f->why, why, len);
	f->why[len] = '\0';
}

static void
fan_fail(fence_fan *f, fan_state *st, const char *why)
{
	fence_fan_why(f, why);
	fence_node_drop(f->node);
	st->phase = PH_DONE;
}

/* Write what the node's output buffer holds, as far as the socket takes. */
static void
fan_write(fence_fan *f, fan_state *st)
{
	int			rc = fence_link_flush(f->node->link);

	if (rc == FENCE_LINK_ERROR)
		fan_fail(f, st, f->node->link->err);
	else
	{
		st->written = rc == FENCE_LINK_DONE;
		st->want = st->written ? FENCE_LINK_WANT_READ : rc;
	}
}

/*
 * Start talking to one node: connect if needed (dropping a connection
 * inherited through fork, link.c), queue login and request.
 */
static void
fan_start(fence_ctx *ctx, fence_fan *f, fan_state *st)
{
	fence_node *n = f->node;
	const fence_url *u = &n->addr;

	/*
	 * Nothing is due on a node's connection between rounds: one the node
	 * closed meanwhile (its idle "timeout", CLIENT KILL) is connected
	 * anew, rather than sent a request that cannot arrive (link.c).
	 */
	if (n->link != NULL && (n->link->pid != fence_self_pid() || fence_link_idle_closed(n->link)))
		fence_node_drop(n);
	if (n->link == NULL)
	{
		char		msg[sizeof(f->why)];
		struct ssl_ctx_st *tls = NULL;
		int			kind;

		if (u->tls.enabled && (tls = fence_tls_context(ctx, &u->tls)) == NULL)
		{
			/* the caller counts; the reason goes with the node */
			fence_fan_why(f, ctx->errstr);
			fence_clear_error(ctx);
			st->phase = PH_DONE;
			return;
		}
		/* non-blocking, close-on-exec from its creation (socket.c) */
		if ((n->link = fence_link_open(u, tls, 0, msg, sizeof(msg), &kind)) == NULL)
		{
			fence_fan_why(f, msg);
			st->phase = PH_DONE;
			return;
		}
		st->phase = PH_CONNECTING;
		st->want = FENCE_LINK_WANT_WRITE;
		if (u->password != NULL)
		{
			const char *argv[3] = {"AUTH", u->user ? u->user : u->password, u->password};

			(void) fence_link_append(n->link, u->user ? 3 : 2, argv, NULL);
			st->login_left++;
		}
		if (u->db != 0)
		{
			char		db[16];
			const char *argv[2] = {"SELECT", db};

			snprintf(db, sizeof(db), "%d", u->db);
			(void) fence_link_append(n->link, 2, argv, NULL);
			st->login_left++;
		}
	}
	else
		st->phase = PH_TALKING;
	if (fence_link_append(n->link, f->cmd.argc, f->cmd.argv, f->cmd.argvlen) != FENCE_OK)
		fan_fail(f, st, "out of memory");
	else if (st->phase == PH_TALKING)
		fan_write(f, st);
}

/* Take every complete reply out of a node's input buffer. */
static void
fan_replies(fence_fan *f, fan_state *st)
{
	for (;;)
	{
		redisReply *r;

		if (fence_link_reply(f->node->link, &r) != FENCE_OK)
		{
			fan_fail(f, st, f->node->link->err);
			return;
		}
		if (r == NULL)
			return;
		if (st->login_left > 0)
		{
			st->login_left--;
			if (r->type == REDIS_REPLY_ERROR)
			{
				char		why[256];

				snprintf(why, sizeof(why), "login refused: %s", r->str);
				freeReplyObject(r);
				fan_fail(f, st, why);
				return;
			}
			freeReplyObject(r);
			continue;
		}
		if (!st->evaled && fence_reply_is(r, "NOSCRIPT"))
		{
			/* Script cache flushed: send the source, in this same round. */
			freeReplyObject(r);
			st->evaled = 1;
			f->cmd.argv[0] = "EVAL";
			f->cmd.argv[1] = fence_script_source(f->script);
			st->written = 0;
			if (fence_link_append(f->node->link, f->cmd.argc, f->cmd.argv, f->cmd.argvlen) != FENCE_OK)
				fan_fail(f, st, "out of memory");
			else
				fan_write(f, st);
			return;
		}
		f->reply = r;
		st->phase = PH_DONE;
		return;
	}
}

/* A connecting node's socket is ready: take the connect a step further. */
static void
fan_connect_step(fence_fan *f, fan_state *st)
{
	int			rc = fence_link_connect_step(f->node->link);

	if (rc == FENCE_LINK_ERROR)
		fan_fail(f, st, f->node->link->err);
	else if (rc != FENCE_LINK_DONE)
		st->want = rc;
	else
	{
		st->phase = PH_TALKING;
		fan_write(f, st);
	}
}

/* A talking node's socket is ready: write, or read what came. */
static void
fan_talk(fence_fan *f, fan_state *st)
{
	int			rc;

	if (!st->written)
	{
		fan_write(f, st);
		return;
	}
	if ((rc = fence_link_read(f->node->link)) == FENCE_LINK_ERROR)
		fan_fail(f, st, f->node->link->err);
	else if (rc == FENCE_LINK_DONE)
	{
		st->want = FENCE_LINK_WANT_READ;
		fan_replies(f, st);
	}
	else
		st->want = rc;
}

/*
 * Send fan[i].cmd to each node whose "send" is set and wait, at most
 * "timeout_ms" (and never past the operation's deadline), for their
 * replies, or only until "enough" replies are in when "enough" > 0.
 * Afterwards fan[i].reply holds each reply (NULL when none came:
 * fan[i].why says why).  Never sets ctx->err: the caller counts.
 */
void
fence_fanout(fence_ctx *ctx, int n, fence_fan *fan, long timeout_ms, int enough)
{
	fan_state  *st = calloc(n, sizeof(fan_state));
	struct pollfd *pfd = calloc(n, sizeof(struct pollfd));
	int		   *who = calloc(n, sizeof(int));
	int64_t		end;
	int			last = 0,
				i;

	for (i = 0; i < n; i++)
	{
		fan[i].reply = NULL;
		fan[i].why[0] = '\0';
	}
	if (st == NULL || pfd == NULL || who == NULL)
	{
		for (i = 0; i < n; i++)
			fence_fan_why(&fan[i], "out of memory");
		goto done;
	}
	timeout_ms = fence_op_left_ms(ctx, timeout_ms);
	end = fence_now_ns() + (int64_t) timeout_ms * 1000000;
	for (i = 0; i < n; i++)
		if (fan[i].send)
			fan_start(ctx, &fan[i], &st[i]);

	for (;;)
	{
		int			k = 0,
					got = 0,
					ready;
		int64_t		left = (end - fence_now_ns()) / 1000000;

		for (i = 0; i < n; i++)
			got += fan[i].reply != NULL;
		if (enough > 0 && got >= enough)
			break;
		for (i = 0; i < n; i++)
		{
			if (st[i].phase != PH_CONNECTING && st[i].phase != PH_TALKING)
				continue;
			pfd[k].fd = fan[i].node->link->fd;
			pfd[k].events = st[i].want == FENCE_LINK_WANT_READ ? POLLIN : POLLOUT;
			pfd[k].revents = 0;
			who[k++] = i;
		}
		if (k == 0)
			break;
		/*
		 * Past the end, one look more without waiting: a process paused
		 * past it (SIGSTOP, a starved CPU) may find the replies there.
		 */
		if (left <= 0)
			last = 1;
		ready = poll(pfd, k, last ? 0 : (int) left);
		if (ready < 0 && errno != EINTR)
			break;
		for (i = 0; i < k && ready > 0; i++)
		{
			fence_fan  *f = &fan[who[i]];
			fan_state  *s = &st[who[i]];

			if (pfd[i].revents == 0)
				continue;
			if (s->phase == PH_CONNECTING)
				fan_connect_step(f, s);
			else
				fan_talk(f, s);
		}
		if (last)
			break;
	}

	/* Whoever has not answered now never will, as far as we care. */
	for (i = 0; i < n; i++)
		if (st[i].phase == PH_CONNECTING || st[i].phase == PH_TALKING)
			fan_fail(&fan[i], &st[i], st[i].phase == PH_CONNECTING ?
					 "connect timed out" : "timed out");
done:
	free(st);
	free(pfd);
	free(who);
}
