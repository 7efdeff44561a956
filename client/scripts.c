/*
 * client/scripts.c
 *	  The Lua scripts that make each lease operation one atomic round trip.
 *
 * The scripts are the files lua/NAME.lua (one script each, a header
 * comment giving its KEYS, ARGV and replies), embedded here at build time
 * (tools/lua2c.sh writes build/scripts_lua.c): one source for libfence and
 * for clients in other languages, which run the same files on the same
 * keys (lua/PROTOCOL.md).  A script's text is its whole file, so that all
 * of them share the SHA-1 of EVALSHA.  The waiting times are written into
 * the files: FENCE_HANDOFF_MS (200) and FENCE_WAIT_PLACE_MS (2000) must
 * change with them (test_fence.c checks that they agree).
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

/* acquire_lua, release_lua, ...: the bytes of lua/acquire.lua, ... */
#include "build/scripts_lua.c"

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
