/*
 * client/store/quorum_round.c
 *	  A quorum's rounds: one request to every node at once, the answers
 *	  counted against a majority.
 *
 * quorum.c says what the rounds ask (Redlock's lock round, the token's
 * claim round); this file says how a round travels and how it is judged,
 * the same for every question: the per-node timeout (far below the TTL,
 * so that a dead node costs a fraction of the lease), the fan-out
 * (fanout.c) with its replies kept until the caller has read them, the
 * error that names each node that failed when fewer than a majority
 * answered, and the vote of a compare-and-act script (extend, release),
 * where "not ours" from so many nodes that no majority is left means lost
 * rather than an outage.  Kept apart so that the algorithm in quorum.c
 * reads as the algorithm; this file calls nothing of quorum.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

/* Per-node timeouts: TTL/20, within these bounds and the command timeout. */
#define NODE_MIN_MS 20
#define NODE_MAX_MS 500

/*
 * A quorum of the "n" nodes of "urls", not connected yet (quorum_open);
 * NULL when out of memory.
 */
void *
fence_quorum_new(fence_ctx *ctx, int n, const fence_url *urls)
{
	quorum_store *s = calloc(1, sizeof(quorum_store));

	(void) ctx;
	if (s == NULL)
		return NULL;
	s->nodes = calloc(n, sizeof(fence_node));
	s->fan = calloc(n, sizeof(fence_fan));
	s->ours = calloc(n, sizeof(int));
	s->claimed = calloc(n, sizeof(long long));
	if (s->nodes == NULL || s->fan == NULL || s->ours == NULL || s->claimed == NULL)
	{
		fence_quorum_free(s);
		return NULL;
	}
	for (; s->n < n; s->n++)
	{
		if (fence_url_copy(&s->nodes[s->n].addr, &urls[s->n]) != FENCE_OK)
		{
			fence_quorum_free(s);
			return NULL;
		}
		s->fan[s->n].node = &s->nodes[s->n];
	}
	return s;
}

/* The quorum's connections, the last round's replies, the store. */
void
fence_quorum_free(void *state)
{
	quorum_store *s = state;
	int			i;

	for (i = 0; i < s->n; i++)
	{
		fence_node_free(&s->nodes[i]);
		if (s->fan != NULL && s->fan[i].reply != NULL)
			freeReplyObject(s->fan[i].reply);
	}
	free(s->nodes);
	free(s->fan);
	free(s->ours);
	free(s->claimed);
	free(s->seen_key);
	free(s);
}

/* The per-node timeout for a lease of "ttl_ms" (0: not about a lease). */
long
fence_quorum_node_ms(fence_ctx *ctx, long long ttl_ms)
{
	long long	ms = ttl_ms > 0 ? ttl_ms / 20 : NODE_MAX_MS;

	if (ms < NODE_MIN_MS)
		ms = NODE_MIN_MS;
	if (ms > NODE_MAX_MS)
		ms = NODE_MAX_MS;
	return ms < ctx->conn->command_ms ? (long) ms : ctx->conn->command_ms;
}

/* Free the replies of the last round. */
void
fence_quorum_clear(quorum_store *s)
{
	int			i;

	for (i = 0; i < s->n; i++)
	{
		if (s->fan[i].reply != NULL)
			freeReplyObject(s->fan[i].reply);
		s->fan[i].reply = NULL;
		s->fan[i].send = 0;
	}
}

/*
 * One round: script "which" to the nodes flagged in "mask" (all when NULL).
 * The keys and arguments must live until the round is over.
 */
void
fence_quorum_round(fence_ctx *ctx, quorum_store *s, const int *mask,
				   enum fence_script which, int nkeys, const char **keys,
				   int nargs, const char **args, long timeout_ms)
{
	int			i;

	fence_quorum_clear(s);
	for (i = 0; i < s->n; i++)
	{
		s->fan[i].send = mask == NULL || mask[i];
		s->fan[i].script = which;
		fence_script_cmd(&s->fan[i].cmd, which, 0, nkeys, keys, nargs, args);
	}
	fence_fanout(ctx, s->n, s->fan, timeout_ms, 0);
}

/*
 * After a round that reached fewer nodes than needed: an I/O error that
 * names what went wrong on each node that failed.
 */
void
fence_quorum_error(fence_ctx *ctx, quorum_store *s, const char *what, int got)
{
	char		buf[FENCE_ERRSTR_LEN];
	size_t		len;
	int			i,
				kind = FENCE_ERR_IO;

	len = snprintf(buf, sizeof(buf), "%s: %d of %d Redis nodes, a majority needs %d",
				   what, got, s->n, QUORUM_MAJORITY(s));
	for (i = 0; i < s->n; i++)
	{
		char		name[128];
		const char *why = s->fan[i].why;

		if (!s->fan[i].send || s->fan[i].reply != NULL || why[0] == '\0')
			continue;
		/* a refused login or command is the configuration's fault, not an
		 * outage */
		if (strncmp(why, "login refused", 13) == 0 || fence_reply_refused(why))
			kind = FENCE_ERR_AUTH;
		else if (strncmp(why, "TLS", 3) == 0 && kind == FENCE_ERR_IO)
			kind = FENCE_ERR_TLS;
		if (len < sizeof(buf))
			len += snprintf(buf + len, sizeof(buf) - len, "; %s: %s",
							fence_node_name(&s->nodes[i], name, sizeof(name)), why);
	}
	fence_set_error(ctx, kind, "%s", buf);
}

/*
 * A compare-and-act script (extend, release) on every node, the lock its
 * first key.  Done on a majority: 1.  Refused ("not ours") by so many that
 * no majority is left: 0 (lost).  Otherwise too many nodes did not answer:
 * -1.
 */
int
fence_quorum_compare(fence_ctx *ctx, quorum_store *s, enum fence_script which,
					 int nkeys, const char **keys, int nargs, const char **args,
					 long timeout_ms, const char *what)
{
	int			yes = 0,
				no = 0,
				rc = -1,
				i;

	fence_quorum_round(ctx, s, NULL, which, nkeys, keys, nargs, args, timeout_ms);
	for (i = 0; i < s->n; i++)
	{
		redisReply *r = s->fan[i].reply;

		if (r == NULL)
			continue;
		if (r->type == REDIS_REPLY_INTEGER)
		{
			if (r->integer == 1)
				yes++;
			else
				no++;
		}
		else
		{
			fence_fan_why(&s->fan[i], r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
			freeReplyObject(r);
			s->fan[i].reply = NULL;
		}
	}
	if (yes >= QUORUM_MAJORITY(s))
		rc = 1;
	else if (no > s->n - QUORUM_MAJORITY(s))
		rc = 0;
	else
		fence_quorum_error(ctx, s, what, yes);
	fence_quorum_clear(s);
	return rc;
}
