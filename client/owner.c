/*
 * client/owner.c
 *	  Owner ids: who holds a lease, unique to it, and readable when named.
 *
 * An owner id is what a lease's lock holds in Redis, what compare-and-DEL
 * and compare-and-PEXPIRE compare, what fence.advance records in
 * fence.fences.owner, and what "fence run" passes on in FENCE_OWNER and in
 * PGOPTIONS (-c fence.owner=...).  It is 32 hex digits of kernel
 * randomness (128 bits: two leases never share one), and, once the
 * context has a name (fence_set_owner_name), "NAME/" in front of them:
 * an operator reading Redis or fence.fences sees who holds what, and the
 * digits keep it unique.
 *
 * A name is 1 to FENCE_MAX_OWNER_NAME bytes of FENCE_OWNER_NAME_CHARS, so
 * that the id travels everywhere as it is: no whitespace or backslash
 * (PGOPTIONS splits at whitespace and takes backslashes as escapes), no
 * quote or other byte a shell or a JSON string would need escaped, no '/'
 * (it ends the name), and no '.': a quorum's attempt appends ".N" to the
 * id for the lock's value (store/quorum.c), and its lock script knows the
 * waiter by what comes before the first '.' (scripts.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fence_int.h"

/*
 * Is "name", the "kind" of name it is ("resource", "owner"), neither empty
 * nor longer than "max" bytes?  On failure a message goes into "errbuf".
 * The checks of resource and owner names begin with it.
 */
int
fence_check_name_size(const char *kind, const char *name, int max,
					  char *errbuf, size_t errlen)
{
	size_t		len;

	if (name == NULL || *name == '\0')
	{
		snprintf(errbuf, errlen, "%s name must not be empty", kind);
		return FENCE_ERR;
	}
	len = strlen(name);
	if (len > (size_t) max)
	{
		snprintf(errbuf, errlen, "%s name is too long (%zu bytes, at most %d)", kind, len, max);
		return FENCE_ERR;
	}
	return FENCE_OK;
}

/*
 * Is "name" an owner name fence takes?  On failure a message goes into
 * "errbuf".  The CLI checks --name with this before it connects.
 */
int
fence_check_owner_name(const char *name, char *errbuf, size_t errlen)
{
	size_t		len,
				bad;

	if (fence_check_name_size("owner", name, FENCE_MAX_OWNER_NAME, errbuf, errlen) != FENCE_OK)
		return FENCE_ERR;
	len = strlen(name);
	bad = strspn(name, FENCE_OWNER_NAME_CHARS);
	if (bad < len)
	{
		unsigned char c = (unsigned char) name[bad];

		if (c > ' ' && c < 0x7F)
			snprintf(errbuf, errlen, "owner name may not hold '%c': only letters, digits and _-:@+",
					 c);
		else
			snprintf(errbuf, errlen, "owner name may not hold byte 0x%02X: only letters, digits and _-:@+",
					 c);
		return FENCE_ERR;
	}
	return FENCE_OK;
}

/*
 * Give the owner ids of the leases acquired on "ctx" from now on the name
 * "name" ("NAME/" and the digits); NULL: digits alone, as before.  Leases
 * acquired already keep theirs.
 */
int
fence_set_owner_name(fence_ctx *ctx, const char *name)
{
	fence_clear_error(ctx);
	if (name == NULL)
	{
		ctx->conn->owner_name[0] = '\0';
		return FENCE_OK;
	}
	if (fence_check_owner_name(name, ctx->errstr, sizeof(ctx->errstr)) != FENCE_OK)
	{
		ctx->err = FENCE_ERR_ARG;
		return FENCE_ERR;
	}
	memcpy(ctx->conn->owner_name, name, strlen(name) + 1);
	return FENCE_OK;
}

/*
 * A new owner id into "owner" (FENCE_OWNER_MAX + 1 bytes): the context's
 * name and '/', if it has one, then FENCE_OWNER_LEN hex digits.
 * FENCE_OK, or FENCE_ERR when the kernel's random source failed.
 */
int
fence_owner_id(fence_ctx *ctx, char *owner)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[FENCE_OWNER_BYTES];
	size_t		n = 0;
	int			i;

	if (fence_owner_bytes(ctx, raw, sizeof(raw)) != 0)
	{
		fence_set_error(ctx, FENCE_ERR_IO, "could not read the kernel's random source: %s",
						strerror(errno));
		return FENCE_ERR;
	}
	if (ctx->conn->owner_name[0] != '\0')
	{
		n = strlen(ctx->conn->owner_name);
		memcpy(owner, ctx->conn->owner_name, n);
		owner[n++] = '/';
	}
	for (i = 0; i < FENCE_OWNER_BYTES; i++)
	{
		owner[n++] = hex[raw[i] >> 4];
		owner[n++] = hex[raw[i] & 15];
	}
	owner[n] = '\0';
	memset(raw, 0, sizeof(raw));
	return FENCE_OK;
}
