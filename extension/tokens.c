/*
 * extension/tokens.c
 *	  fence.tokens: the tokens of a set of leases in one setting, for a
 *	  transaction that writes under several resources at once (a transfer
 *	  debits one account and credits another, each its own resource).
 *
 *	  The value is a list of RESOURCE=TOKEN or RESOURCE=TOKEN/OWNER entries
 *	  separated by commas, in the format that the client writes too
 *	  (docs/sql-reference.md, "fence.tokens"):
 *
 *		acct:1=41/web1:812:psql/9f3c2a01,"a,b"=17
 *
 *	  A resource or an owner is written in double quotes, with each '"'
 *	  doubled, when it is empty, holds ',' '=' (resources only) '"' or '\',
 *	  or starts or ends with whitespace; whitespace around an entry is
 *	  ignored.  A token is digits only; 0 and negative tokens are kept and
 *	  refused by the rule (LF003) when a write uses them, as fence.token's
 *	  are.  The same resource twice is refused unless both entries say the
 *	  same.  test/tokens_vectors.txt holds the values this reader, the SQL
 *	  edition's and libfence's (client/tokens.c) are tested on.
 *
 *	  Parsed once, when set.  The check hook parses the value (refusing a
 *	  malformed one with 22023 and a detail that says where) into one
 *	  malloc'd block holding the entries and an open-addressing hash index
 *	  over their names, and hands it to the GUC machinery as the setting's
 *	  "extra".  PostgreSQL keeps each value's extra beside the value through
 *	  SET, SET LOCAL, RESET and the rollback of a transaction or
 *	  subtransaction, and gives it back to the assign hook whenever the
 *	  value in force changes, so the parsed set is always the one of the
 *	  value in force, and a guard checking a million keys pays a hash
 *	  lookup for each new resource, never a parse.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/guc.h"

#include "compat.h"
#include "errcodes.h"
#include "fence_ext.h"

typedef struct TokenEntry
{
	const char *resource;
	const char *owner;			/* NULL: the entry names no owner */
	int64		token;
	uint32		hash;
} TokenEntry;

/* The parsed value: one block, entries, then index slots, then strings. */
typedef struct TokenSet
{
	int			nentries;
	uint32		mask;			/* index size - 1, a power of two - 1 */
	TokenEntry *entries;
	int32	   *slots;			/* entry number + 1, 0 for an empty slot */
} TokenSet;

char	   *fence_setting_tokens = NULL;
static const TokenSet *tokens_in_force = NULL;

/* One entry while parsing, in palloc'd memory. */
typedef struct ParsedEntry
{
	char	   *resource;
	char	   *owner;
	int64		token;
} ParsedEntry;

static uint32
name_hash(const char *name)
{
	return hash_bytes((const unsigned char *) name, (int) strlen(name));
}

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/*
 * Read a resource or an owner from "*p": a quoted string, or bare text up
 * to one of "stops" (or the end).  Bare text may not hold '"' or '\' and,
 * since whitespace around an entry is ignored, may not start or end with
 * whitespace (a bare owner, which ends the entry, loses what follows it):
 * a value written by hand that needs them must quote, and one written by
 * a program always does.  Returns NULL after setting the GUC's
 * errdetail.
 */
static char *
read_word(const char **p, const char *stops, const char *what, int entry)
{
	StringInfoData buf;
	const char *s = *p;

	initStringInfo(&buf);
	if (*s == '"')
	{
		for (s++;; s++)
		{
			if (*s == '\0')
			{
				GUC_check_errdetail("Entry %d: the %s has no closing double quote.", entry, what);
				return NULL;
			}
			if (*s == '"')
			{
				if (s[1] != '"')
					break;
				s++;
			}
			appendStringInfoChar(&buf, *s);
		}
		*p = s + 1;
		return buf.data;
	}

	for (; *s != '\0' && strchr(stops, *s) == NULL; s++)
	{
		if (*s == '"' || *s == '\\')
		{
			GUC_check_errdetail("Entry %d: the %s contains %c; write it in double quotes, doubling each '\"'.",
								entry, what, *s);
			return NULL;
		}
		appendStringInfoChar(&buf, *s);
	}
	/* an owner ends the entry, and whitespace after an entry is not its own */
	if (strcmp(what, "owner") == 0)
		while (buf.len > 0 && is_space(buf.data[buf.len - 1]))
			buf.data[--buf.len] = '\0';
	if (buf.len > 0 && (is_space(buf.data[0]) || is_space(buf.data[buf.len - 1])))
	{
		GUC_check_errdetail("Entry %d: the %s \"%s\" starts or ends with whitespace; write it in double quotes.",
							entry, what, buf.data);
		return NULL;
	}
	*p = s;
	return buf.data;
}

/*
 * Parse one entry starting at "*p" (past leading whitespace) into "out";
 * "*p" is left at the ',' or the end that follows it.
 */
static bool
parse_entry(const char **p, int entry, ParsedEntry *out)
{
	const char *s;
	const char *digits;
	bool		negative = false;
	uint64		value = 0;
	size_t		len;

	out->resource = read_word(p, "=,", "resource", entry);
	if (out->resource == NULL)
		return false;
	s = *p;
	if (*s != '=')
	{
		GUC_check_errdetail("Entry %d: expected '=' and a token after resource \"%s\".",
							entry, out->resource);
		return false;
	}
	len = strlen(out->resource);
	if (len == 0)
	{
		GUC_check_errdetail("Entry %d: the resource name is empty.", entry);
		return false;
	}
	if (len > FENCE_MAX_RESOURCE_LEN)
	{
		GUC_check_errdetail("Entry %d: the resource name has %zu bytes; the limit is %d.",
							entry, len, FENCE_MAX_RESOURCE_LEN);
		return false;
	}

	/* the token: digits, a '-' kept for the rule to refuse (LF003) */
	s++;
	if (*s == '-')
	{
		negative = true;
		s++;
	}
	for (digits = s; *s >= '0' && *s <= '9'; s++)
	{
		if (value > ((uint64) PG_INT64_MAX - (*s - '0')) / 10)
		{
			GUC_check_errdetail("Entry %d: the token of resource \"%s\" is larger than 9223372036854775807.",
								entry, out->resource);
			return false;
		}
		value = value * 10 + (*s - '0');
	}
	if (s == digits || (*s != '\0' && *s != ',' && *s != '/' && !is_space(*s)))
	{
		GUC_check_errdetail("Entry %d: the token of resource \"%s\" must be written with digits only.",
							entry, out->resource);
		return false;
	}
	out->token = negative ? -(int64) value : (int64) value;

	out->owner = NULL;
	if (*s == '/')
	{
		s++;
		out->owner = read_word(&s, ",", "owner", entry);
		if (out->owner == NULL)
			return false;
		if (out->owner[0] == '\0')
		{
			GUC_check_errdetail("Entry %d: the owner of resource \"%s\" is empty; leave out the '/' for no owner.",
								entry, out->resource);
			return false;
		}
	}
	while (is_space(*s))
		s++;
	if (*s != '\0' && *s != ',')
	{
		GUC_check_errdetail("Entry %d: unexpected text after the entry of resource \"%s\".",
							entry, out->resource);
		return false;
	}
	*p = s;
	return true;
}

static bool
same_owner(const char *a, const char *b)
{
	return (a == NULL && b == NULL) ||
		(a != NULL && b != NULL && strcmp(a, b) == 0);
}

static const TokenEntry *
set_find(const TokenSet *set, const char *resource)
{
	uint32		hash;
	uint32		i;

	if (set == NULL || set->nentries == 0)
		return NULL;
	hash = name_hash(resource);
	for (i = hash & set->mask; set->slots[i] != 0; i = (i + 1) & set->mask)
	{
		const TokenEntry *e = &set->entries[set->slots[i] - 1];

		if (e->hash == hash && strcmp(e->resource, resource) == 0)
			return e;
	}
	return NULL;
}

/*
 * Build the block for "n" parsed entries, or return false after setting the
 * GUC's errdetail (a resource named twice with different tokens or owners)
 * or errcode (out of memory).
 */
static bool
build_set(ParsedEntry *parsed, int n, TokenSet **result)
{
	uint32		nslots = 4;
	Size		strings = 0;
	Size		size;
	TokenSet   *set;
	char	   *pool;
	int			i;

	while (nslots < (uint32) n * 2)
		nslots *= 2;
	for (i = 0; i < n; i++)
		strings += strlen(parsed[i].resource) + 1 +
			(parsed[i].owner ? strlen(parsed[i].owner) + 1 : 0);
	size = MAXALIGN(sizeof(TokenSet)) + MAXALIGN(sizeof(TokenEntry) * Max(n, 1)) +
		MAXALIGN(sizeof(int32) * nslots) + strings;

	set = fence_guc_malloc(size);
	if (set == NULL)
	{
		GUC_check_errcode(ERRCODE_OUT_OF_MEMORY);
		GUC_check_errmsg("out of memory");
		return false;
	}
	memset(set, 0, size);
	set->entries = (TokenEntry *) ((char *) set + MAXALIGN(sizeof(TokenSet)));
	set->slots = (int32 *) ((char *) set->entries + MAXALIGN(sizeof(TokenEntry) * Max(n, 1)));
	set->mask = nslots - 1;
	pool = (char *) set->slots + MAXALIGN(sizeof(int32) * nslots);

	for (i = 0; i < n; i++)
	{
		const TokenEntry *dup = set_find(set, parsed[i].resource);
		TokenEntry *e;
		uint32		slot;

		if (dup != NULL)
		{
			if (dup->token == parsed[i].token && same_owner(dup->owner, parsed[i].owner))
				continue;
			GUC_check_errdetail("Resource \"%s\" has two entries with different tokens or owners.",
								parsed[i].resource);
			fence_guc_free(set);
			return false;
		}
		e = &set->entries[set->nentries];
		e->token = parsed[i].token;
		e->hash = name_hash(parsed[i].resource);
		strcpy(pool, parsed[i].resource);
		e->resource = pool;
		pool += strlen(pool) + 1;
		if (parsed[i].owner != NULL)
		{
			strcpy(pool, parsed[i].owner);
			e->owner = pool;
			pool += strlen(pool) + 1;
		}
		for (slot = e->hash & set->mask; set->slots[slot] != 0; slot = (slot + 1) & set->mask)
			;
		set->slots[slot] = ++set->nentries;
	}
	*result = set;
	return true;
}

/* The check hook of fence.tokens: parse, refuse, or hand over the set. */
bool
fence_tokens_check(char **newval, void **extra, GucSource source)
{
	const char *p = *newval ? *newval : "";
	ParsedEntry *parsed;
	int			n = 0;
	int			allocated = 8;
	TokenSet   *set;

	if (!fence_valid_text(p))
	{
		GUC_check_errcode(ERRCODE_CHARACTER_NOT_IN_REPERTOIRE);
		GUC_check_errdetail("The value is not valid in the database's encoding %s.",
							GetDatabaseEncodingName());
		return false;
	}
	GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
	parsed = palloc(sizeof(ParsedEntry) * allocated);
	for (;;)
	{
		while (is_space(*p))
			p++;
		if (*p == '\0' && n == 0)
			break;				/* an empty value: no entries */
		if (n == allocated)
		{
			allocated *= 2;
			parsed = repalloc(parsed, sizeof(ParsedEntry) * allocated);
		}
		if (*p == ',' || *p == '\0')
		{
			GUC_check_errdetail("Entry %d is empty.", n + 1);
			return false;
		}
		if (!parse_entry(&p, n + 1, &parsed[n]))
			return false;
		n++;
		if (*p == '\0')
			break;
		p++;					/* the ',' */
	}
	if (!build_set(parsed, n, &set))
		return false;
	*extra = set;
	return true;
}

void
fence_tokens_assign(const char *newval, void *extra)
{
	tokens_in_force = (const TokenSet *) extra;
	fence_settings_assigned();
}

/*
 * fence_parse_token: read "text" as a token the strict way: digits only, 1
 * to 2^63 - 1, no sign, no spaces, nothing after the number.  A token that
 * a careless parser would read as 12 or 0 must not reach the rule.
 */
bool
fence_parse_token(const char *text, int64 *token)
{
	const char *p;
	uint64		value = 0;

	for (p = text; *p != '\0'; p++)
	{
		int			digit = *p - '0';

		if (digit < 0 || digit > 9 ||
			value > ((uint64) PG_INT64_MAX - digit) / 10)
			return false;
		value = value * 10 + digit;
	}
	if (p == text || value == 0)
		return false;
	*token = (int64) value;
	return true;
}

/*
 * fence_tokens_find: whether fence.tokens has an entry for "resource", and
 * then its token and owner (NULL for none).  A caller that also sets
 * fence.resource to the same resource with another token or owner gave two
 * tokens for one resource: refused with LF003, never guessed between.
 */
bool
fence_tokens_find(const char *resource, int64 *token, const char **owner)
{
	const TokenEntry *e;
	const char *setting_owner;
	int64		setting_token;

	fence_settings_usable();
	e = set_find(tokens_in_force, resource);
	if (e == NULL)
		return false;

	/* fence.resource without fence.token carries no token to disagree with */
	if (fence_setting_resource != NULL && fence_setting_token != NULL &&
		strcmp(fence_setting_resource, resource) == 0)
	{
		setting_owner = fence_setting_owner != NULL && fence_setting_owner[0] != '\0' ?
			fence_setting_owner : NULL;
		if (!fence_parse_token(fence_setting_token, &setting_token) ||
			setting_token != e->token || !same_owner(setting_owner, e->owner))
			fence_refuse(resource, FENCE_REFUSED_INVALID, e->token, true,
						 psprintf("two fencing tokens for resource \"%s\"", resource),
						 psprintf("fence.tokens gives token %lld%s%s, and fence.resource names the same resource with fence.token \"%s\"%s%s.",
								  (long long) e->token,
								  e->owner ? " for owner " : "", e->owner ? e->owner : "",
								  fence_setting_token,
								  setting_owner ? " for owner " : "",
								  setting_owner ? setting_owner : ""),
						 "Give each resource's token once: in fence.tokens, or in fence.resource and fence.token.");
	}
	*token = e->token;
	*owner = e->owner;
	return true;
}
