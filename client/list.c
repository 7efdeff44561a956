/*
 * client/list.c
 *	  What an operator reads without touching anything: who waits for a
 *	  resource (fence_waiters) and which leases are held (fence_list).
 *
 * Both are plain reads, no script: ZRANGE of the waiting room, TIME, SCAN
 * and fence_show's script, sent where the topology keeps the keys
 * (store.c: the master of a key, each master, each node of a quorum).
 *
 * The waiting room (keys.c, and the scripts that keep it in scripts.c):
 * fence:{R}:queue orders the waiters' owner ids by ticket, and
 * fence:{R}:alive says when each one's place lapses, on Redis's clock in
 * ms.  The scripts drop lapsed places only when they run; until then a
 * waiter that died (kill -9) is still in both.  So a waiter counts while
 * its place has not lapsed by Redis's clock (TIME, read in the same
 * pipeline): the rule the scripts' prune() applies.
 *
 * fence_list finds lock keys with SCAN ... MATCH fence:{P}:lock COUNT
 * 1000, P being the pattern encoded as fence_key() encodes names, and
 * never KEYS, which blocks Redis for as long as it walks every key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

#define SCAN_COUNT "1000"
#define MAX_PATTERN_LEN (2 * FENCE_MAX_RESOURCE_LEN)

/* A growing array of strings. */
typedef struct strings
{
	char	  **s;
	size_t		n,
				cap;
} strings;

static int
strings_add(strings *v, const char *s, size_t len)
{
	if (v->n == v->cap)
	{
		size_t		cap = v->cap ? v->cap * 2 : 16;
		char	  **grown = realloc(v->s, cap * sizeof(char *));

		if (grown == NULL)
			return -1;
		v->s = grown;
		v->cap = cap;
	}
	if ((v->s[v->n] = strndup(s, len)) == NULL)
		return -1;
	v->n++;
	return 0;
}

static void
strings_free(strings *v)
{
	while (v->n > 0)
		free(v->s[--v->n]);
	free(v->s);
	memset(v, 0, sizeof(*v));
}

static int
oom(fence_ctx *ctx)
{
	fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
	return -1;
}

/* --- the waiting room ----------------------------------------------------- */

/*
 * The live waiters of copy "copy" of a waiting room (its queue "queue" and
 * places "alive"), in queue order, appended to "live".  Returns 1 when
 * read, 0 when that copy did not answer (ctx->err says why), 2 past the
 * last copy, -1 on an error that fails the whole read.
 */
static int
read_room(fence_ctx *ctx, const char *queue, const char *alive, int copy, strings *live)
{
	fence_cmd	cmds[3] = {
		{4, {"ZRANGE", queue, "0", "-1"}, NULL},
		{5, {"ZRANGE", alive, "0", "-1", "WITHSCORES"}, NULL},
		{1, {"TIME"}, NULL}
	};
	redisReply *r[3];
	long long	sec,
				usec;
	double		now;
	size_t		i,
				j;
	int			rc;

	rc = fence_store_key_exec(ctx, queue, copy, 3, cmds, r);
	if (rc == FENCE_NODE_PAST)
		return 2;
	if (rc != FENCE_OK)
		return 0;
	for (i = 0; i < 3; i++)
	{
		if (r[i]->type != REDIS_REPLY_ARRAY)
		{
			/* WRONGTYPE: the keys hold what fence never writes */
			fence_reply_error(ctx, r[i]);
			r[i] = NULL;
			fence_free_replies(3, r);
			return -1;
		}
	}
	sec = fence_reply_counter_at(r[2], 0);
	usec = fence_reply_counter_at(r[2], 1);
	if (sec < 0 || usec < 0 || r[1]->elements % 2 != 0)
	{
		fence_set_error(ctx, FENCE_ERR_PROTOCOL, "unexpected reply to TIME or ZRANGE");
		fence_free_replies(3, r);
		return -1;
	}
	now = (double) sec * 1000 + (double) (usec / 1000);
	rc = 1;
	for (i = 0; i < r[0]->elements && rc == 1; i++)
	{
		const redisReply *w = r[0]->element[i];

		for (j = 0; j < r[1]->elements; j += 2)
		{
			const redisReply *m = r[1]->element[j];

			if (m->type == REDIS_REPLY_STRING && w->type == REDIS_REPLY_STRING &&
				r[1]->element[j + 1]->type == REDIS_REPLY_STRING &&
				m->len == w->len && memcmp(m->str, w->str, w->len) == 0)
			{
				/* a place lapses when Redis's clock reaches it (prune) */
				if (strtod(r[1]->element[j + 1]->str, NULL) > now &&
					strings_add(live, w->str, w->len) != 0)
					rc = oom(ctx);
				break;
			}
		}
	}
	fence_free_replies(3, r);
	return rc;
}

/*
 * The live waiters of "keys"' room on every copy into "out": on one master
 * its queue; on a quorum the waiters of every node that answered (a
 * majority must), each in the best place it has on any node, ties in the
 * order of the nodes.  FENCE_OK or FENCE_ERR.
 */
static int
room_waiters(fence_ctx *ctx, const fence_keys *keys, strings *out)
{
	strings		live = {NULL, 0, 0};
	size_t	   *place = NULL;
	int			copy,
				copies = 0,
				answered = 0,
				rc;

	for (copy = 0;; copy++)
	{
		size_t		i,
					j;

		live.n = 0;
		rc = read_room(ctx, keys->queue, keys->alive, copy, &live);
		if (rc == 2)
			break;
		copies++;
		if (rc < 0)
			goto fail;
		if (rc == 0)
		{
			strings_free(&live);
			continue;
		}
		answered++;
		for (i = 0; i < live.n; i++)
		{
			for (j = 0; j < out->n && strcmp(out->s[j], live.s[i]) != 0; j++)
				;
			if (j == out->n)
			{
				size_t	   *p = realloc(place, (out->n + 1) * sizeof(size_t));

				if (p == NULL)
				{
					oom(ctx);
					goto fail;
				}
				place = p;
				if (strings_add(out, live.s[i], strlen(live.s[i])) != 0)
				{
					oom(ctx);
					goto fail;
				}
				/* later nodes' ties come after: a stable sort below */
				place[j] = i;
			}
			else if (i < place[j])
				place[j] = i;
		}
		strings_free(&live);
	}
	if (answered * 2 <= copies)
	{
		if (copies > 1)
			fence_set_error(ctx, FENCE_ERR_IO, "could not read the waiting room: %d of %d Redis nodes answered, a majority needs %d",
							answered, copies, copies / 2 + 1);
		goto fail;
	}
	/* order by best place; insertion sort keeps first-seen order on ties */
	{
		size_t		i,
					k;

		for (i = 1; i < out->n; i++)
			for (k = i; k > 0 && place[k - 1] > place[k]; k--)
			{
				size_t		tp = place[k];
				char	   *ts = out->s[k];

				place[k] = place[k - 1];
				out->s[k] = out->s[k - 1];
				place[k - 1] = tp;
				out->s[k - 1] = ts;
			}
	}
	free(place);
	fence_clear_error(ctx);
	return FENCE_OK;

fail:
	strings_free(&live);
	free(place);
	strings_free(out);
	return FENCE_ERR;
}

int
fence_waiters(fence_ctx *ctx, const char *resource, char ***owners, size_t *n)
{
	fence_keys	keys;
	strings		out = {NULL, 0, 0};
	int			rc;

	fence_clear_error(ctx);
	*owners = NULL;
	*n = 0;
	if (fence_check_resource(resource, ctx->errstr, sizeof(ctx->errstr)) != FENCE_OK)
	{
		ctx->err = FENCE_ERR_ARG;
		return FENCE_ERR;
	}
	if (fence_keys_init(&keys, resource) != FENCE_OK)
	{
		oom(ctx);
		return FENCE_ERR;
	}
	rc = room_waiters(ctx, &keys, &out);
	fence_keys_free(&keys);
	if (rc != FENCE_OK)
		return FENCE_ERR;
	*owners = out.s;
	*n = out.n;
	return FENCE_OK;
}

void
fence_waiters_free(char **owners, size_t n)
{
	strings		v = {owners, n, n};

	strings_free(&v);
}

/* --- held leases ------------------------------------------------------------ */

/*
 * The SCAN pattern for the lock keys of the resources "pattern" matches
 * (malloc'd into "*match"), or a message in "errbuf".  fence_key() writes
 * '%', '{' and '}' of a name as %25, %7B and %7D; the pattern's get the
 * same, so that matched against the keys it matches what it would match
 * against the names: a '\' before one of them goes, since %XX holds no
 * byte a glob reads.  Inside [...] one byte cannot stand for three: those
 * three are refused there.
 */
static int
scan_pattern(const char *pattern, const char *suffix, char **match,
			 char *errbuf, size_t errlen)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t		len = strlen(pattern),
				i;
	int			in_set = 0;
	char	   *out,
			   *p;

	if (len == 0)
	{
		snprintf(errbuf, errlen, "pattern must not be empty");
		return FENCE_ERR;
	}
	if (len > MAX_PATTERN_LEN)
	{
		snprintf(errbuf, errlen, "pattern is too long (%zu bytes, at most %d)",
				 len, MAX_PATTERN_LEN);
		return FENCE_ERR;
	}
	if ((out = malloc(sizeof("fence:{}:") + strlen(suffix) + 3 * len)) == NULL)
	{
		snprintf(errbuf, errlen, "out of memory");
		return FENCE_ERR;
	}
	p = out + sprintf(out, "fence:{");
	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) pattern[i];
		int			escaped = 0;

		if (c == '\\' && i + 1 < len)
		{
			c = (unsigned char) pattern[++i];
			escaped = 1;
		}
		if (c == '%' || c == '{' || c == '}')
		{
			if (in_set)
			{
				snprintf(errbuf, errlen, "pattern may not hold '%c' inside [...]", c);
				free(out);
				return FENCE_ERR;
			}
			*p++ = '%';
			*p++ = hex[c >> 4];
			*p++ = hex[c & 15];
			continue;
		}
		if (escaped || (c == '\\' && i + 1 == len))
			*p++ = '\\';
		else if (c == '[' && !in_set)
			in_set = 1;
		else if (c == ']' && in_set)
			in_set = 0;
		*p++ = (char) c;
	}
	sprintf(p, "}:%s", suffix);
	*match = out;
	return FENCE_OK;
}

/* Can fence_list take "pattern"?  On failure a message goes into "errbuf". */
int
fence_check_pattern(const char *pattern, char *errbuf, size_t errlen)
{
	char	   *match;

	if (pattern == NULL)
		return FENCE_OK;
	if (scan_pattern(pattern, "lock", &match, errbuf, errlen) != FENCE_OK)
		return FENCE_ERR;
	free(match);
	return FENCE_OK;
}

/*
 * The resource whose lock key is "key" (fence:{T}:lock, T as fence_key()
 * writes it), appended to "names"; a key fence_key() could not have
 * written (a wake list "fence:{T}:wake:x}:lock", any other '%') is not a
 * lock, and is skipped.  -1 when out of memory.
 */
static int
add_resource(strings *names, const char *key, size_t len, const char *suffix)
{
	char		name[FENCE_MAX_RESOURCE_LEN + 1];
	size_t		i,
				n = 0,
				tail = strlen(suffix) + 2;	/* "}:" and the suffix */

	if (len < 7 + 1 + tail || memcmp(key, "fence:{", 7) != 0 ||
		key[len - tail] != '}' || key[len - tail + 1] != ':' ||
		memcmp(key + len - tail + 2, suffix, tail - 2) != 0)
		return 0;
	for (i = 7; i < len - tail; i++)
	{
		char		c = key[i];

		if (c == '{' || c == '}' || n == FENCE_MAX_RESOURCE_LEN)
			return 0;
		if (c == '%')
		{
			if (i + 2 >= len - tail)
				return 0;
			if (key[i + 1] == '2' && key[i + 2] == '5')
				c = '%';
			else if (key[i + 1] == '7' && key[i + 2] == 'B')
				c = '{';
			else if (key[i + 1] == '7' && key[i + 2] == 'D')
				c = '}';
			else
				return 0;
			i += 2;
		}
		name[n++] = c;
	}
	return strings_add(names, name, n);
}

/*
 * SCAN node "node" for "match" to its end, adding the resources found to
 * "names".  Returns 1 when done, 0 when the node did not answer (ctx->err
 * says why), 2 past the last node, 3 for a node that holds no keys, -1 on
 * an error that fails the list.
 */
static int
scan_node(fence_ctx *ctx, int node, const char *match, const char *suffix,
		  strings *names)
{
	char		cursor[32] = "0";

	do
	{
		fence_cmd	cmd = {6, {"SCAN", cursor, "MATCH", match, "COUNT", SCAN_COUNT}, NULL};
		redisReply *r;
		redisReply *keys;
		size_t		i;
		int			rc = fence_store_node_exec(ctx, node, 1, &cmd, &r);

		if (rc == FENCE_NODE_PAST)
			return 2;
		if (rc == FENCE_NODE_SKIP)
			return 3;
		if (rc != FENCE_OK)
			return 0;
		if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
			r->element[0]->type != REDIS_REPLY_STRING ||
			r->element[0]->len >= sizeof(cursor) ||
			r->element[1]->type != REDIS_REPLY_ARRAY)
			return fence_reply_error(ctx, r);
		memcpy(cursor, r->element[0]->str, r->element[0]->len + 1);
		keys = r->element[1];
		for (i = 0; i < keys->elements; i++)
		{
			if (keys->element[i]->type == REDIS_REPLY_STRING &&
				add_resource(names, keys->element[i]->str, keys->element[i]->len, suffix) != 0)
			{
				freeReplyObject(r);
				return oom(ctx);
			}
		}
		freeReplyObject(r);
	} while (strcmp(cursor, "0") != 0);
	return 1;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/*
 * The names of the resources with a lock key that "match" matches, on
 * every node that holds keys, sorted, each once, into "names".  Every
 * master must answer; on a quorum a majority: then every lease held on a
 * majority has its lock on a node that answered.
 */
static int
scan_all(fence_ctx *ctx, const char *match, const char *suffix, strings *names)
{
	char		why[FENCE_ERRSTR_LEN] = "";
	int			node,
				nodes = 0,
				answered = 0,
				rc;
	size_t		i,
				k;

	for (node = 0;; node++)
	{
		rc = scan_node(ctx, node, match, suffix, names);
		if (rc == 2)
			break;
		if (rc == 3)
			continue;
		if (rc < 0)
			return FENCE_ERR;
		nodes++;
		if (rc == 1)
			answered++;
		else if (!fence_store_is_quorum(ctx))
			return FENCE_ERR;
		else
			snprintf(why, sizeof(why), "%s", ctx->errstr);
	}
	if (fence_store_is_quorum(ctx) && answered * 2 <= nodes)
	{
		fence_set_error(ctx, FENCE_ERR_IO, "could not scan the keys: %d of %d Redis nodes answered, a majority needs %d; %s",
						answered, nodes, nodes / 2 + 1, why);
		return FENCE_ERR;
	}
	fence_clear_error(ctx);
	if (names->n > 1)
		qsort(names->s, names->n, sizeof(char *), by_name);
	for (i = k = 0; i < names->n; i++)
	{
		if (k > 0 && strcmp(names->s[k - 1], names->s[i]) == 0)
			free(names->s[i]);
		else
			names->s[k++] = names->s[i];
	}
	names->n = k;
	return FENCE_OK;
}

/*
 * Read one lease found by the scan into "h": held (1), or not held any
 * more, or not on a majority (0), or an error (-1).
 */
static int
read_lease(fence_ctx *ctx, const char *resource, fence_held *h)
{
	fence_keys	keys;
	fence_info	info = {NULL, -2, 0};
	strings		waiting = {NULL, 0, 0};
	int			rc = -1;

	if (fence_keys_init(&keys, resource) != FENCE_OK)
		return oom(ctx);
	if (fence_store_show(ctx, keys.lock, keys.token, &info) != 1)
		goto done;
	if (info.owner == NULL)
	{
		rc = 0;
		goto done;
	}
	if (room_waiters(ctx, &keys, &waiting) != FENCE_OK)
		goto done;
	if ((h->resource = strdup(resource)) == NULL)
	{
		oom(ctx);
		goto done;
	}
	h->owner = info.owner;
	info.owner = NULL;
	h->pttl_ms = info.pttl_ms;
	h->token = info.token;
	h->waiters = waiting.n;
	rc = 1;
done:
	strings_free(&waiting);
	fence_info_free(&info);
	fence_keys_free(&keys);
	return rc;
}

int
fence_list(fence_ctx *ctx, const char *pattern, fence_held **leases, size_t *n)
{
	strings		names = {NULL, 0, 0};
	fence_held *out = NULL;
	char	   *match = NULL;
	size_t		i,
				got = 0;
	int			rc;

	fence_clear_error(ctx);
	*leases = NULL;
	*n = 0;
	if (scan_pattern(pattern != NULL ? pattern : "*", "lock", &match, ctx->errstr,
					 sizeof(ctx->errstr)) != FENCE_OK)
	{
		ctx->err = strcmp(ctx->errstr, "out of memory") == 0 ? FENCE_ERR_OOM : FENCE_ERR_ARG;
		return FENCE_ERR;
	}
	rc = scan_all(ctx, match, "lock", &names);
	free(match);
	if (rc != FENCE_OK)
		goto fail;
	if (names.n > 0 && (out = calloc(names.n, sizeof(fence_held))) == NULL)
	{
		oom(ctx);
		goto fail;
	}
	for (i = 0; i < names.n; i++)
	{
		rc = read_lease(ctx, names.s[i], &out[got]);
		if (rc < 0)
			goto fail;
		got += rc;
	}
	strings_free(&names);
	fence_clear_error(ctx);
	/* sorted by name, as the names were */
	*leases = out;
	*n = got;
	return FENCE_OK;

fail:
	strings_free(&names);
	fence_list_free(out, got);
	return FENCE_ERR;
}

void
fence_list_free(fence_held *leases, size_t n)
{
	size_t		i;

	for (i = 0; i < n; i++)
	{
		free(leases[i].resource);
		free(leases[i].owner);
	}
	free(leases);
}

/* --- token counters ---------------------------------------------------------- */

/*
 * fence_counters: every resource whose name matches "pattern" (as
 * fence_list takes it; NULL: all) that has a token counter, with the
 * counter: the last token handed out for it ("*counters", "*n", sorted by
 * name; free with fence_counters_free).  Found with SCAN for
 * fence:{P}:token on every node that holds keys (every master must
 * answer; on a quorum a majority), and each counter read as fence_show
 * reads it.  What "fence resync" raises PostgreSQL's marks to after a
 * failover to a standby that missed announces: the counter only grows and
 * is at least every token handed out.
 */
int
fence_counters(fence_ctx *ctx, const char *pattern, fence_counter **counters,
			   size_t *n)
{
	strings		names = {NULL, 0, 0};
	fence_counter *out = NULL;
	char	   *match = NULL;
	size_t		i,
				got = 0;

	fence_clear_error(ctx);
	*counters = NULL;
	*n = 0;
	if (scan_pattern(pattern != NULL ? pattern : "*", "token", &match, ctx->errstr,
					 sizeof(ctx->errstr)) != FENCE_OK)
	{
		ctx->err = strcmp(ctx->errstr, "out of memory") == 0 ? FENCE_ERR_OOM : FENCE_ERR_ARG;
		return FENCE_ERR;
	}
	if (scan_all(ctx, match, "token", &names) != FENCE_OK)
	{
		free(match);
		goto fail;
	}
	free(match);
	if (names.n > 0 && (out = calloc(names.n, sizeof(fence_counter))) == NULL)
	{
		oom(ctx);
		goto fail;
	}
	for (i = 0; i < names.n; i++)
	{
		fence_keys	keys;
		fence_info	info = {NULL, -2, 0};
		long long	token;
		int			rc;

		if (fence_keys_init(&keys, names.s[i]) != FENCE_OK)
		{
			oom(ctx);
			goto fail;
		}
		rc = fence_store_show(ctx, keys.lock, keys.token, &info);
		fence_keys_free(&keys);
		token = info.token;
		fence_info_free(&info);
		if (rc != 1)
			goto fail;
		if (token <= 0)
			continue;			/* deleted since the scan */
		out[got].resource = names.s[i];
		names.s[i] = NULL;
		out[got++].token = token;
	}
	strings_free(&names);		/* the kept names were moved out above */
	fence_clear_error(ctx);
	*counters = out;
	*n = got;
	return FENCE_OK;

fail:
	strings_free(&names);
	fence_counters_free(out, got);
	return FENCE_ERR;
}

void
fence_counters_free(fence_counter *counters, size_t n)
{
	size_t		i;

	for (i = 0; i < n; i++)
		free(counters[i].resource);
	free(counters);
}
