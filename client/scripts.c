/*
 * client/scripts.c
 *	  The Lua scripts that make each lease operation one atomic round trip.
 *
 * Keys (keys.c; hash-tagged so both live in one Redis Cluster slot):
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
 * COUNTER_CHECK, the start of the scripts that touch the counter (KEYS[2]):
 * refuse, before anything is written, a counter fence could never have
 * written.  A counter is missing, or a string holding a canonical positive
 * integer of at most 2^63-1 (INCR writes nothing else); a valid one is left
 * in "cur" as its string (false when missing), so no Lua number ever holds
 * it.  The errors start with FENCESTATE, which the client reads as
 * FENCE_ERR_STATE; they name no key, since resource names are bytes that an
 * error line must not carry.
 */
#define COUNTER_CHECK \
"local cur = false\n" \
"local ctype = redis.call('TYPE', KEYS[2])['ok']\n" \
"if ctype ~= 'none' then\n" \
"  if ctype ~= 'string' then\n" \
"    return redis.error_reply('FENCESTATE token counter is a ' .. ctype .. ', not a string')\n" \
"  end\n" \
"  cur = redis.call('GET', KEYS[2])\n" \
"  if not string.match(cur, '^[1-9]%d*$') or #cur > 19 or\n" \
"     (#cur == 19 and cur > '9223372036854775807') then\n" \
"    return redis.error_reply('FENCESTATE token counter is not a positive integer')\n" \
"  end\n" \
"end\n"

/*
 * ACQUIRE  KEYS: lock, token  ARGV: owner, ttl_ms
 * Takes the lock if free and only then takes a token.  Returns the token,
 * or {PTTL} (a one-element array) when the lock is busy.  A token below 2^53
 * comes back as an integer (a double holds it exactly, and it spares a GET);
 * from 2^53 on, the comparison still decides correctly and the token is
 * read back as the counter's string.  The counter is checked first, so the
 * only failure left once the lock is taken is INCR's overflow at 2^63-1;
 * then the lock is dropped again, so that no failure leaves it behind.  A
 * lock key that is not a string, or has no expiry, would be "busy" forever:
 * that is an error too.
 */
static const char acquire_lua[] =
COUNTER_CHECK
"if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then\n"
"  local r = redis.pcall('INCR', KEYS[2])\n"
"  if type(r) == 'table' and r.err then\n"
"    redis.call('DEL', KEYS[1])\n"
"    return r\n"
"  end\n"
"  if r < 9007199254740992 then return r end\n"
"  return redis.call('GET', KEYS[2])\n"
"end\n"
"local ltype = redis.call('TYPE', KEYS[1])['ok']\n"
"if ltype ~= 'string' then\n"
"  return redis.error_reply('FENCESTATE lock is a ' .. ltype .. ', not a string')\n"
"end\n"
"local pttl = redis.call('PTTL', KEYS[1])\n"
"if pttl < 0 then return redis.error_reply('FENCESTATE lock has no expiry') end\n"
"return {pttl}\n";

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
 * lock is not ours.  "mark" is a canonical decimal from the client, and
 * "cur" one too (COUNTER_CHECK): comparing lengths, then bytes, compares
 * the numbers.
 */
static const char heal_lua[] =
"if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end\n"
COUNTER_CHECK
"local mark = ARGV[2]\n"
"if not cur or #cur < #mark or (#cur == #mark and cur < mark) then\n"
"  redis.call('SET', KEYS[2], mark)\n"
"end\n"
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
COUNTER_CHECK
"local held = redis.call('GET', KEYS[1])\n"
"local c = cur or '0'\n"
"if not held then\n"
"  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\n"
"  return {1, c}\n"
"elseif held == ARGV[1] then\n"
"  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
"  return {1, c}\n"
"end\n"
"local pttl = redis.call('PTTL', KEYS[1])\n"
"if pttl < 0 then return redis.error_reply('FENCESTATE lock has no expiry') end\n"
"return {0, c, pttl}\n";

/*
 * QCLAIM  KEYS: lock, token  ARGV: owner, token
 * Quorum mode, on each node where the caller took the lock: raise the
 * counter to "token" if the counter is lower, only while the lock is still
 * the caller's.  Returns {1} raised, {0} lock not ours, or {2, counter} when
 * the counter is already at or above "token" (someone claimed it first).
 * Strictly lower only: two claims of the same value cannot both succeed on
 * one node.  Compared as canonical decimal strings (COUNTER_CHECK), exact
 * beyond 2^53.
 */
static const char qclaim_lua[] =
"if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0} end\n"
COUNTER_CHECK
"local t = ARGV[2]\n"
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
