/*
 * client/scripts.c
 *	  The Lua scripts that make each lease operation one atomic round trip.
 *
 * Keys (hash-tagged so both live in one Redis Cluster slot):
 *	 fence:{R}:lock   the owner id, expiring with the lease
 *	 fence:{R}:token  the token counter; never expires, never lowered
 *
 * Redis converts integers to Lua numbers, which are doubles: above 2^53
 * they stop being exact.  So no script lets the counter pass through a Lua
 * number above 2^53: tokens that large come back as the counter's string
 * (GET after INCR), and the heal script compares decimal strings by length,
 * then bytes.  INCR
 * itself is exact and refuses to wrap at 2^63-1; that error is passed on.
 *
 * Scripts are always sent with EVALSHA, under the SHA-1 computed here
 * (sha1.c), so that each operation is one round trip even for a process
 * that has just started.  A NOSCRIPT reply (a fresh or restarted server,
 * SCRIPT FLUSH) falls back to EVAL, which also caches the script again.
 *
 * Every script names all the keys it touches, and both keys of a resource
 * share one hash tag (lease.c, fence_key), so a script runs whole on the
 * one node of a Redis Cluster that owns the resource's slot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fence_int.h"

/*
 * ACQUIRE  KEYS: lock, token  ARGV: owner, ttl_ms
 * Takes the lock if free and only then takes a token.  Returns the token,
 * or {PTTL} (a one-element array) when the lock is busy.  A token below 2^53
 * comes back as an integer (a double holds it exactly, and it spares a GET);
 * from 2^53 on, the comparison still decides correctly and the token is
 * read back as the counter's string.  If INCR fails (overflow, or a counter
 * that is not an integer) the lock just taken is dropped again so that the
 * failure leaves nothing behind.
 */
static const char acquire_lua[] =
"if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then\n"
"  local r = redis.pcall('INCR', KEYS[2])\n"
"  if type(r) == 'table' and r.err then\n"
"    redis.call('DEL', KEYS[1])\n"
"    return r\n"
"  end\n"
"  if r < 9007199254740992 then return r end\n"
"  return redis.call('GET', KEYS[2])\n"
"end\n"
"return {redis.call('PTTL', KEYS[1])}\n";

/* RELEASE  KEYS: lock  ARGV: owner.  1 = deleted, 0 = not ours. */
static const char release_lua[] =
"if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
"  return redis.call('DEL', KEYS[1])\n"
"end\n"
"return 0\n";

/* EXTEND  KEYS: lock  ARGV: owner, ttl_ms.  1 = extended, 0 = not ours. */
static const char extend_lua[] =
"if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
"  return redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
"end\n"
"return 0\n";

/*
 * HEAL  KEYS: lock, token  ARGV: owner, mark
 * PostgreSQL has already accepted "mark": raise the counter to it (never
 * lower it) and take the next token, but only while the caller still owns
 * the lock.  Returns the new token as a bulk string, or integer 0 when the
 * lock is not ours.  "mark" is a canonical decimal from the client.
 */
static const char heal_lua[] =
"if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end\n"
"local cur = redis.call('GET', KEYS[2])\n"
"local mark = ARGV[2]\n"
"local lower\n"
"if not cur or string.match(cur, '^%-%d+$') then\n"
"  lower = true\n"
"elseif cur == '0' or string.match(cur, '^[1-9]%d*$') then\n"
"  lower = #cur < #mark or (#cur == #mark and cur < mark)\n"
"else\n"
"  return redis.error_reply('fence token counter ' .. KEYS[2] .. ' is not an integer')\n"
"end\n"
"if lower then redis.call('SET', KEYS[2], mark) end\n"
"local r = redis.pcall('INCR', KEYS[2])\n"
"if type(r) == 'table' and r.err then return r end\n"
"return redis.call('GET', KEYS[2])\n";

/*
 * SHOW  KEYS: lock, token.  {owner or nil, PTTL of the lock, counter or
 * nil}: what "fence show" prints, in one round trip.
 */
static const char show_lua[] =
"return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]),\n"
"        redis.call('GET', KEYS[2])}\n";

/*
 * QLOCK  KEYS: lock, token  ARGV: owner, ttl_ms
 * Quorum mode, on each node: take the lock if it is free (or already the
 * caller's: a request of an earlier attempt that arrived late), and read the
 * counter either way, for the token the caller will claim.  Returns
 * {1, counter} when the lock is the caller's, {0, counter, PTTL} when
 * another owner holds it.  The counter comes back as its string ("0" when
 * missing), never as a Lua number.
 */
static const char qlock_lua[] =
"local held = redis.call('GET', KEYS[1])\n"
"local c = redis.call('GET', KEYS[2]) or '0'\n"
"if not held then\n"
"  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\n"
"  return {1, c}\n"
"elseif held == ARGV[1] then\n"
"  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
"  return {1, c}\n"
"end\n"
"return {0, c, redis.call('PTTL', KEYS[1])}\n";

/*
 * QCLAIM  KEYS: lock, token  ARGV: owner, token
 * Quorum mode, on each node where the caller took the lock: raise the
 * counter to "token" if the counter is lower, only while the lock is still
 * the caller's.  Returns {1} raised, {0} lock not ours, or {2, counter} when
 * the counter is already at or above "token" (someone claimed it first).
 * Strictly lower only: two claims of the same value cannot both succeed on
 * one node.  Compared as canonical decimal strings, exact beyond 2^53.
 */
static const char qclaim_lua[] =
"if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0} end\n"
"local cur = redis.call('GET', KEYS[2])\n"
"local t = ARGV[2]\n"
"if cur and cur ~= '0' and not string.match(cur, '^[1-9]%d*$') then\n"
"  return redis.error_reply('fence token counter ' .. KEYS[2] .. ' is not an integer')\n"
"end\n"
"if not cur or #cur < #t or (#cur == #t and cur < t) then\n"
"  redis.call('SET', KEYS[2], t)\n"
"  return {1}\n"
"end\n"
"return {2, cur}\n";

static const char *const script_src[FENCE_NSCRIPTS] = {
	acquire_lua, release_lua, extend_lua, heal_lua, show_lua, qlock_lua, qclaim_lua
};

static char script_sha[FENCE_NSCRIPTS][41];
static pthread_once_t script_sha_once = PTHREAD_ONCE_INIT;

static void
script_sha_init(void)
{
	int			i;

	for (i = 0; i < FENCE_NSCRIPTS; i++)
		fence_sha1_hex(script_src[i], strlen(script_src[i]), script_sha[i]);
}

const char *
fence_script_source(enum fence_script which)
{
	return script_src[which];
}

/*
 * Build the EVALSHA (or, with "eval", the EVAL) of script "which" with
 * "nkeys" keys and "nargs" arguments into "cmd".  The strings are not
 * copied: they must outlive "cmd".
 */
void
fence_script_cmd(fence_cmd *cmd, enum fence_script which, int eval,
				 int nkeys, const char **keys, int nargs, const char **args)
{
	static const char *const nk[] = {"0", "1", "2"};
	int			i;

	pthread_once(&script_sha_once, script_sha_init);
	cmd->argvlen = NULL;
	cmd->argc = 0;
	cmd->argv[cmd->argc++] = eval ? "EVAL" : "EVALSHA";
	cmd->argv[cmd->argc++] = eval ? script_src[which] : script_sha[which];
	cmd->argv[cmd->argc++] = nk[nkeys];
	for (i = 0; i < nkeys; i++)
		cmd->argv[cmd->argc++] = keys[i];
	for (i = 0; i < nargs; i++)
		cmd->argv[cmd->argc++] = args[i];
}

/*
 * Run script "which" with "nkeys" keys (at most 2; the first one routes
 * the command) and "nargs" arguments (at most 3) on the master of the
 * keys.  Returns the reply (which may be an error reply), or NULL on a
 * transport error.
 *
 * With "acked" not NULL and replicas asked for (fence_set_min_replicas), a
 * WAIT goes out in the same write, right behind the script, and "*acked"
 * receives how many replicas acknowledged the script's writes (-1 when not
 * asked).
 */
redisReply *
fence_script_run(fence_ctx *ctx, enum fence_script which,
				 int nkeys, const char **keys, int nargs, const char **args,
				 long long *acked)
{
	struct fence_conn *c = ctx->conn;
	fence_cmd	cmds[2];
	redisReply *replies[2];
	char		nrep[16],
				wait_ms[24];
	int			ncmds = 1,
				eval;

	if (acked != NULL)
		*acked = -1;
	if (nkeys > 2 || nargs > 3)
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "too many script arguments");
		return NULL;
	}
	if (acked != NULL && c->min_replicas > 0)
	{
		snprintf(nrep, sizeof(nrep), "%d", c->min_replicas);
		snprintf(wait_ms, sizeof(wait_ms), "%ld", c->replica_timeout_ms);
		cmds[1].argc = 3;
		cmds[1].argv[0] = "WAIT";
		cmds[1].argv[1] = nrep;
		cmds[1].argv[2] = wait_ms;
		cmds[1].argvlen = NULL;
		ncmds = 2;
	}
	for (eval = 0; eval <= 1; eval++)
	{
		fence_script_cmd(&cmds[0], which, eval, nkeys, keys, nargs, args);
		if (c->ops->exec(ctx, keys[0], ncmds, cmds, replies) != FENCE_OK)
			return NULL;
		/* Script cache flushed under us: send the source instead. */
		if (!eval && fence_reply_is(replies[0], "NOSCRIPT"))
		{
			fence_free_replies(ncmds, replies);
			continue;
		}
		break;
	}
	if (ncmds == 2)
	{
		/* a WAIT refused (say, on a server without replication) counts as
		 * no acknowledgement at all: the caller gives the lease back */
		*acked = replies[1]->type == REDIS_REPLY_INTEGER ? replies[1]->integer : 0;
		freeReplyObject(replies[1]);
	}
	return replies[0];
}
