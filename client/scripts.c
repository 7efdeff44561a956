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

static const char *const script_src[FENCE_NSCRIPTS] = {
	acquire_lua, release_lua, extend_lua, heal_lua
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

/*
 * Run script "which" with "nkeys" keys and "nargs" arguments.  Returns the
 * reply (which may be an error reply), or NULL on a transport error.
 */
redisReply *
fence_script_run(fence_ctx *ctx, enum fence_script which,
				 int nkeys, const char **keys, int nargs, const char **args)
{
	const char *argv[8];
	char		nk[8];
	redisReply *r;
	int			i,
				argc = 0;

	if (nkeys + nargs + 3 > (int) (sizeof(argv) / sizeof(argv[0])))
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "too many script arguments");
		return NULL;
	}
	pthread_once(&script_sha_once, script_sha_init);
	snprintf(nk, sizeof(nk), "%d", nkeys);
	argv[argc++] = "EVALSHA";
	argv[argc++] = script_sha[which];
	argv[argc++] = nk;
	for (i = 0; i < nkeys; i++)
		argv[argc++] = keys[i];
	for (i = 0; i < nargs; i++)
		argv[argc++] = args[i];
	r = fence_command_argv(ctx, argc, argv, NULL);
	if (r != NULL && r->type == REDIS_REPLY_ERROR &&
		strncmp(r->str, "NOSCRIPT", 8) == 0)
	{
		/* Script cache flushed under us: send the source instead. */
		freeReplyObject(r);
		argv[0] = "EVAL";
		argv[1] = script_src[which];
		r = fence_command_argv(ctx, argc, argv, NULL);
	}
	return r;
}
