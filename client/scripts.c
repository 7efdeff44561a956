/*
 * client/scripts.c
 *	  The Lua scripts that make each lease operation one atomic round trip.
 *
 * Keys (keys.c; hash-tagged so all live in one Redis Cluster slot):
 *	 fence:{R}:lock   the owner id, expiring with the lease
 *	 fence:{R}:token  the token counter; never expires, never lowered
 *	 fence:{R}:queue  the waiters in order of arrival (owner id -> ticket)
 *	 fence:{R}:alive  when each waiter's place lapses (owner id -> ms)
 *	 fence:{R}:wake:O what waiter O blocks on
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
 * All keys of a resource share one hash tag (keys.c), so a script runs
 * whole on the one node of a Redis Cluster that owns the resource's slot.
 * Scripts name the keys they touch, with two exceptions that build the
 * names from the lock key's, same tag, same slot: the wake list of the
 * waiter a script hands the lock to, which it reads from the queue, and
 * the queue's keys in RELEASE (see there).
 *
 * Handing over (one master: single node, Sentinel, Cluster).  A waiter
 * whose acquire found the lock busy takes a place at the end of the queue
 * and blocks on its wake list (BLPOP, lease.c).  The release that frees the
 * lock gives it to the first waiter at once: it sets the lock to that
 * waiter's owner id for FENCE_HANDOFF_MS only, takes it out of the queue
 * and pushes to its wake list.  The waiter wakes, and its acquire (sent
 * with its BLPOP, master.c) finds the lock already its own: it sets the
 * full TTL and takes the token.  So a releaser that comes straight back
 * finds the lock taken and queues behind the others: first come, first
 * served.
 *
 *	 - Nothing is lost between a busy acquire and the BLPOP that follows it:
 *	   the lock is handed over in Redis, and the push waits in the list.
 *	 - A waiter that died holds nobody up for long: a lock handed to it
 *	   lapses after FENCE_HANDOFF_MS, and its place after
 *	   FENCE_WAIT_PLACE_MS unless it asks again (each wait is at most
 *	   FENCE_WAIT_BEAT_MS, lease.c).  Places are ZADDs, their lapse is
 *	   Redis's own clock (TIME), and the queue keys expire with the last
 *	   place in them.
 *	 - A lock that expires (its holder died) is free while others wait:
 *	   whoever comes first, a waiter whose wait ran out with the holder's
 *	   PTTL or a newcomer, hands it to the first waiter in the same way.
 *	 - A waiter whose deadline passed makes one last attempt, which takes
 *	   the lock if it is free for it (or handed to it already) and
 *	   otherwise gives up its place, in the same script: it never leaves a
 *	   lock handed to it behind.
 *
 * On a quorum the nodes' queues may disagree on who comes first, and
 * handing over per node could split the lock between waiters; there a
 * release only wakes the first waiter of each node's queue, and the woken
 * take the lock with the ordinary quorum acquire (quorum.c).
 *
 * TIME makes a script non-deterministic, which is fine since Redis
 * replicates the effects of scripts, not the scripts (always since 7.0, by
 * default since 5.0): waiting needs Redis 5.0 or later.  The queue's
 * functions are defined after the paths that need no queue, which return
 * first: creating them costs every call that reaches them.
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
 * QUEUE, the functions of the scripts that keep the waiters' queue; Q and
 * A must name the queue and its lapse times, KEYS[1] the lock.
 *
 *	 now_ms()        Redis's clock, ms
 *	 prune(now)      drop the waiters whose place lapsed
 *	 first()         the first waiter, or nil
 *	 join(o, now)    a place for "o" at the end (or keep its own), kept
 *	                 for FENCE_WAIT_PLACE_MS more; the queue keys expire
 *	                 with the last place
 *	 leave(o)        "o" leaves the queue
 *	 wake(o)         push to o's wake list, which expires after
 *	                 FENCE_HANDOFF_MS
 *	 hand(o)         the free lock goes to waiter "o" for FENCE_HANDOFF_MS,
 *	                 and "o" leaves the queue and is woken
 *
 * Tickets are one above the last one, so that order is arrival order.
 * The times are written into the scripts, not passed: Redis refuses
 * commands of more than 10 arguments before a client has logged in, and a
 * missing password must be reported as such.
 * The wake list is written with pcall: during a Cluster slot migration the
 * node may not have it, and then the waiter only wakes later (its wait is
 * bounded), which must not fail the release.
 */
#define STR(x) #x
#define XSTR(x) STR(x)
#define HANDOFF_MS XSTR(FENCE_HANDOFF_MS)
#define PLACE_MS XSTR(FENCE_WAIT_PLACE_MS)

#define QUEUE \
"local function now_ms()\n" \
"  local t = redis.call('TIME')\n" \
"  return t[1] * 1000 + math.floor(t[2] / 1000)\n" \
"end\n" \
"local function prune(now)\n" \
"  local gone = redis.call('ZRANGEBYSCORE', A, '-inf', now)\n" \
"  for i = 1, #gone do redis.call('ZREM', Q, gone[i]) end\n" \
"  if #gone > 0 then redis.call('ZREMRANGEBYSCORE', A, '-inf', now) end\n" \
"end\n" \
"local function first()\n" \
"  return redis.call('ZRANGE', Q, 0, 0)[1]\n" \
"end\n" \
"local function join(o, now)\n" \
"  if not redis.call('ZSCORE', Q, o) then\n" \
"    local last = redis.call('ZRANGE', Q, -1, -1, 'WITHSCORES')\n" \
"    redis.call('ZADD', Q, last[2] and last[2] + 1 or 1, o)\n" \
"  end\n" \
"  redis.call('ZADD', A, now + " PLACE_MS ", o)\n" \
"  redis.call('PEXPIRE', Q, " PLACE_MS ")\n" \
"  redis.call('PEXPIRE', A, " PLACE_MS ")\n" \
"end\n" \
"local function leave(o)\n" \
"  redis.call('ZREM', Q, o)\n" \
"  redis.call('ZREM', A, o)\n" \
"end\n" \
"local function wake(o)\n" \
"  local k = string.sub(KEYS[1], 1, -5) .. 'wake:' .. o\n" \
"  redis.pcall('LPUSH', k, '1')\n" \
"  redis.pcall('PEXPIRE', k, " HANDOFF_MS ")\n" \
"end\n" \
"local function hand(o)\n" \
"  leave(o)\n" \
"  redis.call('SET', KEYS[1], o, 'PX', " HANDOFF_MS ")\n" \
"  wake(o)\n" \
"end\n"

/*
 * ACQUIRE  KEYS: lock, token, queue, alive  ARGV: owner, ttl_ms, how
 * Takes the lock and only then a token.  The lock is the caller's to take
 * when it is free and nobody waits (the one check the common case pays
 * beyond SET NX), when it is free and the caller is the first waiter, or
 * when a release handed it to the caller already.  A free lock that
 * another waiter comes first for is handed to that waiter.  Returns the
 * token, or {PTTL} (a one-element array) when the caller cannot have the
 * lock now; "how" then says what the caller does: "0" nothing, "1" take or
 * keep a place in the queue, "2" give up its place.  A token below 2^53
 * comes back as an integer (a double holds it exactly, and it spares a
 * GET); from 2^53 on, the comparison still decides correctly and the token
 * is read back as the counter's string.  The counter is checked first, so
 * the only failure left once the lock is taken is INCR's overflow at
 * 2^63-1; then the lock is dropped again, so that no failure leaves it
 * behind.  A lock key that is not a string, or has no expiry, would be
 * "busy" forever: that is an error too.
 */
static const char acquire_lua[] =
COUNTER_CHECK
"local Q, A = KEYS[3], KEYS[4]\n"
"local waiting = redis.call('EXISTS', Q) == 1\n"
"if waiting or not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then\n"
"  local ltype = redis.call('TYPE', KEYS[1])['ok']\n"
"  if ltype ~= 'none' and ltype ~= 'string' then\n"
"    return redis.error_reply('FENCESTATE lock is a ' .. ltype .. ', not a string')\n"
"  end\n"
"  local held = ltype == 'string' and redis.call('GET', KEYS[1])\n"
"  local pttl = 0\n"
"  if held and held ~= ARGV[1] then\n"
"    pttl = redis.call('PTTL', KEYS[1])\n"
"    if pttl < 0 then return redis.error_reply('FENCESTATE lock has no expiry') end\n"
"  end\n"
"  if not waiting and ARGV[3] ~= '1' then\n"
"    if held ~= ARGV[1] then return {pttl} end\n"
"  else\n"
QUEUE
"    local now, head = now_ms(), nil\n"
"    if waiting then\n"
"      prune(now)\n"
"      head = first()\n"
"    end\n"
"    if held ~= ARGV[1] and (held or (head and head ~= ARGV[1])) then\n"
"      if not held then\n"
"        hand(head)\n"
"        pttl = " HANDOFF_MS "\n"
"      end\n"
"      if ARGV[3] == '1' then\n"
"        join(ARGV[1], now)\n"
"      elseif ARGV[3] == '2' and waiting then\n"
"        leave(ARGV[1])\n"
"      end\n"
"      return {pttl}\n"
"    end\n"
"    if head then leave(ARGV[1]) end\n"
"  end\n"
"  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\n"
"end\n"
"local r = redis.pcall('INCR', KEYS[2])\n"
"if type(r) == 'table' and r.err then\n"
"  redis.call('DEL', KEYS[1])\n"
"  return r\n"
"end\n"
"if r < 9007199254740992 then return r end\n"
"return redis.call('GET', KEYS[2])\n";

/*
 * RELEASE  KEYS: lock  ARGV: owner, hand
 * Compare-and-DEL; then, if anyone waits, the first waiter is woken and,
 * with "hand" = "1", given the lock (see the top of the file).  1 =
 * released, 0 = not ours.
 *
 * Only the lock is named: a release must never wait, and a Redis Cluster
 * answers a script whose named keys are split by a slot migration with
 * TRYAGAIN.  The queue's keys carry the lock key's tag; the script builds
 * their names and touches them under pcall, so that a migration under way
 * (which makes the node refuse keys it no longer has) costs the waiters
 * their wake-up, never the release.
 */
static const char release_lua[] =
"if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end\n"
"redis.call('DEL', KEYS[1])\n"
"local pre = string.sub(KEYS[1], 1, -5)\n"
"local Q, A = pre .. 'queue', pre .. 'alive'\n"
"local ok, waiting = pcall(redis.call, 'EXISTS', Q)\n"
"if not ok or waiting == 0 then return 1 end\n"
QUEUE
"pcall(function()\n"
"  prune(now_ms())\n"
"  local head = first()\n"
"  if head and ARGV[2] == '1' then\n"
"    hand(head)\n"
"  elseif head then\n"
"    wake(head)\n"
"  end\n"
"end)\n"
"return 1\n";

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
 * QLOCK  KEYS: lock, token, queue, alive  ARGV: owner, ttl_ms, how[/claim]
 * Quorum mode, on each node: take the lock if it is free (or already the
 * caller's: a request of this attempt sent again), and read the counter
 * either way, for the token the caller will claim.  The owner is the
 * attempt's ("ID.N", quorum.c); the queue knows the waiter as ID.  Returns
 * {1, counter} when the lock is the caller's, {0, counter, PTTL} when
 * another owner holds it.  The counter comes back as its string ("0" when
 * missing), never as a Lua number, and is the one read before this script
 * wrote anything.
 *
 * "claim", when given, is a token the caller guesses is free (it rides
 * with "how", as "1/42": one more argument would pass the ten Redis allows
 * before a login, FENCE_MAX_ARGS):
 * where the lock is taken and the counter is strictly lower, the counter
 * is raised to it in the same step, as QCLAIM would, and the reply is
 * {1, counter, 1}.  A guess that holds on a majority saves the claim round
 * (quorum.c); a wrong one only costs that round.  "how" is ACQUIRE's: a waiter keeps a
 * place in this node's queue while the lock is busy here, so that a release
 * here wakes it; the queue decides nothing else (see the top of the file).
 * A plain acquire ("0") never took a place, so its way through the free
 * lock skips the queue, and only waiters pay for defining its functions.
 */
static const char qlock_lua[] =
COUNTER_CHECK
"local Q, A = KEYS[3], KEYS[4]\n"
"local w = string.match(ARGV[1], '^[^.]*')\n"
"local how, t = string.match(ARGV[3], '^([012])/?(%d*)$')\n"
"if not how then return redis.error_reply('ERR bad quorum lock mode') end\n"
"local held = redis.call('GET', KEYS[1])\n"
"local c = cur or '0'\n"
"if not held or held == ARGV[1] then\n"
"  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\n"
"  if how ~= '0' and redis.call('EXISTS', Q) == 1 then\n"
"    redis.call('ZREM', Q, w)\n"
"    redis.call('ZREM', A, w)\n"
"  end\n"
"  if string.match(t, '^[1-9]%d*$') and #t <= 19 and\n"
"     (not cur or #cur < #t or (#cur == #t and cur < t)) then\n"
"    redis.call('SET', KEYS[2], t)\n"
"    return {1, c, 1}\n"
"  end\n"
"  return {1, c}\n"
"end\n"
"local pttl = redis.call('PTTL', KEYS[1])\n"
"if pttl < 0 then return redis.error_reply('FENCESTATE lock has no expiry') end\n"
"if how ~= '0' then\n"
QUEUE
"  if how == '1' then\n"
"    join(w, now_ms())\n"
"  else\n"
"    leave(w)\n"
"  end\n"
"end\n"
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

/* What messages call them. */
static const char *const script_name[FENCE_NSCRIPTS] = {
	"acquire", "release", "extend", "heal", "show", "quorum lock", "quorum claim"
};

/*
 * A script's SHA1 is worked out the first time the script is sent, not
 * all seven at once: a command that takes and gives back one lease sends
 * two of them, and hashing the others would cost it more than its own
 * work.  "" until then; the lock makes a race between threads harmless.
 */
static char script_sha[FENCE_NSCRIPTS][41];
static pthread_mutex_t script_sha_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *
script_sha_of(enum fence_script which)
{
	pthread_mutex_lock(&script_sha_lock);
	if (script_sha[which][0] == '\0')
		fence_sha1_hex(script_src[which], strlen(script_src[which]), script_sha[which]);
	pthread_mutex_unlock(&script_sha_lock);
	return script_sha[which];
}

const char *
fence_script_source(enum fence_script which)
{
	return script_src[which];
}

/* The script's name in messages ("acquire", "quorum lock"...). */
const char *
fence_script_name(enum fence_script which)
{
	return script_name[which];
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
	static const char *const nk[] = {"0", "1", "2", "3", "4"};
	int			i;

	cmd->argvlen = NULL;
	cmd->argc = 0;
	cmd->argv[cmd->argc++] = eval ? "EVAL" : "EVALSHA";
	cmd->argv[cmd->argc++] = eval ? script_src[which] : script_sha_of(which);
	cmd->argv[cmd->argc++] = nk[nkeys];
	for (i = 0; i < nkeys; i++)
		cmd->argv[cmd->argc++] = keys[i];
	for (i = 0; i < nargs; i++)
		cmd->argv[cmd->argc++] = args[i];
}
