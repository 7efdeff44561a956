/*
 * client/reply.c
 *	  Reading Redis's replies: what an error reply means, and the numbers
 *	  and records the scripts answer with.
 *
 * Every topology reads the same replies, so their readers sit in a layer
 * below all of them: exact parsers for counters and tokens (no doubles,
 * no wrap) and the kinds of error reply (refused, transient, the keys'
 * state).
 */
#include <stdlib.h>
#include <string.h>

#include "fence_int.h"

/*
 * Is "msg", an error reply, the login or the ACL saying no?  NOPERM is the
 * ACL's word for a command or key it refuses; a command called inside a
 * script is refused with an ERR of its own, which names neither, and
 * whose words changed: Redis 7.0 says "The user executing the script
 * can't run this command or subcommand" (or "can't access at least one
 * of the keys"), Redis 7.2 and later, Redis 8 and Valkey "ACL failure in
 * script: User u has no permissions to run the 'incr' command" (or "No
 * permissions to access a key").  Asking again cannot help: these are
 * configuration errors (FENCE_ERR_AUTH).
 */
int
fence_reply_refused(const char *msg)
{
	return strncmp(msg, "NOAUTH", 6) == 0 || strncmp(msg, "WRONGPASS", 9) == 0 ||
		strstr(msg, "NOPERM") != NULL ||
		strstr(msg, "user executing the script can't") != NULL ||
		strstr(msg, "ACL failure in script") != NULL;
}

/*
 * Is "r" an error reply that says the server cannot serve the command now,
 * for a while (a failover or a resharding under way, data loading), rather
 * than that the command is wrong?  The command did not run.  UNBLOCKED
 * ends a blocked command when the server turns into a replica.
 */
int
fence_reply_transient(const redisReply *r)
{
	static const char *const words[] = {
		"UNBLOCKED", "READONLY", "LOADING", "MASTERDOWN", "MOVED", "ASK",
		"TRYAGAIN", "CLUSTERDOWN"
	};
	size_t		i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (fence_reply_is(r, words[i]))
			return 1;
	return 0;
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
	if (fence_reply_refused(msg))
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
 * The error an error reply "msg" answers with: itself, or, where a command
 * called inside a script failed, that command's error.  Before 7.0 Redis
 * wraps it in an ERR of its own, "ERR Error running script (call to
 * f_SHA): @user_script:76: @user_script: 76: -READONLY You can't write
 * against a read only replica.", where 7.0 and later answer with the
 * command's error itself ("READONLY You can't write ... script: SHA, on
 * @user_script:76.").  Redis 6.0 runs a script on a replica up to its
 * first write, which fails so: nothing was written, and it is the READONLY
 * of a demoted master, to ride like any other, not an error of the script.
 */
static const char *
reply_error_of(const char *msg)
{
	const char *inner;

	if (strncmp(msg, "ERR Error running script", 24) != 0)
		return msg;
	inner = strstr(msg, ": -");
	return inner != NULL ? inner + 3 : msg;
}

/* Is "r" an error reply whose first word is "word" (MOVED, READONLY...)? */
int
fence_reply_is(const redisReply *r, const char *word)
{
	size_t		len = strlen(word);
	const char *msg;

	if (r == NULL || r->type != REDIS_REPLY_ERROR || r->str == NULL)
		return 0;
	msg = reply_error_of(r->str);
	return strncmp(msg, word, len) == 0 && (msg[len] == ' ' || msg[len] == '\0');
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

/*
 * Parse a counter exactly (no doubles, no wrap), in the canonical form
 * INCR and PostgreSQL write: no sign, no leading zero; "0" is a counter
 * (a quorum node that never saw the resource), not a token.
 */
int
fence_parse_counter(const char *s, size_t len, long long *out)
{
	unsigned long long v = 0;
	size_t		i;

	if (len == 0 || len > 19 || (len > 1 && s[0] == '0'))
		return -1;
	for (i = 0; i < len; i++)
	{
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long long) (s[i] - '0');
	}
	if (v > (unsigned long long) INT64_MAX)
		return -1;
	*out = (long long) v;
	return 0;
}

/* Parse a positive token exactly. */
int
fence_parse_token(const char *s, size_t len, long long *out)
{
	long long	v;

	if (fence_parse_counter(s, len, &v) != 0 || v == 0)
		return -1;
	*out = v;
	return 0;
}

/* An integer element of an array reply, or -1. */
long long
fence_reply_int_at(const redisReply *r, size_t i)
{
	if (r == NULL || r->type != REDIS_REPLY_ARRAY || i >= r->elements ||
		r->element[i]->type != REDIS_REPLY_INTEGER)
		return -1;
	return r->element[i]->integer;
}

/*
 * A counter element of an array reply (a decimal string: the scripts'
 * counters, TIME's seconds and microseconds), or -1.
 */
long long
fence_reply_counter_at(const redisReply *r, size_t i)
{
	long long	v;

	if (r == NULL || r->type != REDIS_REPLY_ARRAY || i >= r->elements ||
		r->element[i]->type != REDIS_REPLY_STRING ||
		fence_parse_counter(r->element[i]->str, r->element[i]->len, &v) != 0)
		return -1;
	return v;
}

void
fence_info_free(fence_info *info)
{
	free(info->owner);
	info->owner = NULL;
}

/*
 * Read a SHOW script's reply {owner, pttl, counter} into "info".  Frees
 * "r".  FENCE_OK or FENCE_ERR.
 */
int
fence_parse_show(fence_ctx *ctx, redisReply *r, const char *token_key, fence_info *info)
{
	redisReply *owner,
			   *counter;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
		r->element[1]->type != REDIS_REPLY_INTEGER)
		return fence_reply_error(ctx, r);
	owner = r->element[0];
	counter = r->element[2];
	if (owner->type == REDIS_REPLY_STRING && (info->owner = strdup(owner->str)) == NULL)
	{
		freeReplyObject(r);
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
		return FENCE_ERR;
	}
	info->pttl_ms = r->element[1]->integer;
	if (counter->type == REDIS_REPLY_STRING &&
		fence_parse_token(counter->str, counter->len, &info->token) != 0)
	{
		fence_set_error(ctx, FENCE_ERR_STATE, "token counter %s holds \"%.40s\", not a positive integer",
						token_key, counter->str);
		freeReplyObject(r);
		return FENCE_ERR;
	}
	freeReplyObject(r);
	return FENCE_OK;
}
