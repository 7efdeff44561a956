/*
 * client/keys.c
 *	  The Redis keys of a resource, and the hash tag that keeps them together.
 *
 * A resource R has these keys:
 *
 *	 fence:{T}:lock    the owner id, expiring with the lease
 *	 fence:{T}:token   the token counter; never expires, never lowered
 *	 fence:{T}:queue   the waiters, first come first served (a sorted set:
 *	                   owner id -> ticket), while there are any
 *	 fence:{T}:alive   when each waiter's place lapses (owner id -> Redis's
 *	                   clock in ms), while there are any
 *	 fence:{T}:wake:O  the list waiter O blocks on (BLPOP) and a release
 *	                   pushes to; it expires within a second
 *
 * Redis Cluster hashes only the key's tag, what lies between the first '{'
 * and the next '}' (the whole key when that is empty), so both keys land in
 * one slot exactly when they carry the same, non-empty tag.  T is R itself
 * for ordinary names.  A '}' in R would cut the tag short ("}x" gives an
 * empty one: the whole key is hashed and the two keys part), so '{', '}'
 * and the escape character '%' are percent-encoded: %7B, %7D, %25.  That
 * makes T injective (two resources never share keys), never empty (R is
 * not) and free of braces: the tag Cluster hashes is T, all of it.
 *
 * Everything that names or routes keys goes through fence_key(), so that a
 * cluster router finds the slot by hashing the tag of the keys it is given.
 * The scripts name two kinds of key themselves, from the lock key they are
 * given, keeping its tag and so its slot (scripts.c): the wake list
 * "fence:{T}:wake:O" of a waiter whose owner id O they read from the queue,
 * and, in the release script, "fence:{T}:queue" and "fence:{T}:alive".
 * The names there must stay those fence_key() makes.
 */
#include <stdlib.h>
#include <string.h>

#include "fence_int.h"

/*
 * The key "fence:{T}:SUFFIX" of "resource", malloc'd; NULL when out of
 * memory.
 */
char *
fence_key(const char *resource, const char *suffix)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t		rlen = strlen(resource),
				slen = strlen(suffix);
	char	   *key = malloc(sizeof("fence:{}:") + 3 * rlen + slen);
	char	   *p = key;
	size_t		i;

	if (key == NULL)
		return NULL;
	memcpy(p, "fence:{", 7);
	p += 7;
	for (i = 0; i < rlen; i++)
	{
		unsigned char c = (unsigned char) resource[i];

		if (c == '%' || c == '{' || c == '}')
		{
			*p++ = '%';
			*p++ = hex[c >> 4];
			*p++ = hex[c & 15];
		}
		else
			*p++ = (char) c;
	}
	*p++ = '}';
	*p++ = ':';
	memcpy(p, suffix, slen + 1);
	return key;
}

/* Fill "keys" with the keys of "resource".  FENCE_OK, or FENCE_ERR when out
 * of memory (nothing left to free). */
int
fence_keys_init(fence_keys *keys, const char *resource)
{
	keys->lock = fence_key(resource, "lock");
	keys->token = fence_key(resource, "token");
	keys->queue = fence_key(resource, "queue");
	keys->alive = fence_key(resource, "alive");
	if (keys->lock == NULL || keys->token == NULL || keys->queue == NULL ||
		keys->alive == NULL)
	{
		fence_keys_free(keys);
		return FENCE_ERR;
	}
	return FENCE_OK;
}

void
fence_keys_free(fence_keys *keys)
{
	free(keys->lock);
	free(keys->token);
	free(keys->queue);
	free(keys->alive);
	memset(keys, 0, sizeof(*keys));
}
