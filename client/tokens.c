/*
 * client/tokens.c
 *	  The fence.tokens grammar, on the client's side: the writer
 *	  (fence_format_tokens, for a set's announce and for fence run) and the
 *	  reader (fence_parse_tokens, for the value fence run inherits in
 *	  PGOPTIONS).  The value: RESOURCE=TOKEN[/OWNER] joined by commas, a
 *	  resource or owner in double quotes when it has to be ('"' doubled
 *	  inside), whitespace around an unquoted one dropped
 *	  (docs/sql-reference.md, "fence.tokens").  The server's readers are
 *	  extension/tokens.c and the SQL edition's (sql/hosted/fence_hosted.sql);
 *	  test/tokens_vectors.txt holds the values all three are tested on.
 *
 *	  Ground: calls nothing else of libfence.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fence.h"

/*
 * Does "s" have to be quoted in fence.tokens?  Empty, a character that
 * ends or quotes it ("specials": the resource's include '='), or
 * whitespace at either end.
 */
static int
needs_quotes(const char *s, const char *specials)
{
	size_t		len = strlen(s);

	return len == 0 || strpbrk(s, specials) != NULL ||
		strchr(" \t\n\r\f\v", s[0]) != NULL || strchr(" \t\n\r\f\v", s[len - 1]) != NULL;
}

static char *
put_part(char *p, const char *s, const char *specials)
{
	if (!needs_quotes(s, specials))
		return stpcpy(p, s);
	*p++ = '"';
	for (; *s; s++)
	{
		if (*s == '"')
			*p++ = '"';
		*p++ = *s;
	}
	*p++ = '"';
	return p;
}

/*
 * "n" triples as a fence.tokens value (docs/sql-reference.md,
 * "fence.tokens"): RESOURCE=TOKEN/OWNER joined by commas, a resource
 * quoted when empty, holding ',' '=' '"' or '\' or starting or ending
 * with whitespace, an owner likewise (but '=' is its own), '"' doubled
 * inside quotes; an owner NULL or "" is left out
 * (RESOURCE=TOKEN).  Written in the order given.  malloc'd; NULL when out
 * of memory.
 */
char *
fence_format_tokens(size_t n, const char *const *resources, const long long *tokens,
					const char *const *owners)
{
	size_t		cap = 1,
				i;
	char	   *out,
			   *p;

	for (i = 0; i < n; i++)
		cap += 2 * strlen(resources[i]) + 2 * (owners && owners[i] ? strlen(owners[i]) : 0) + 32;
	if ((out = malloc(cap)) == NULL)
		return NULL;
	p = out;
	for (i = 0; i < n; i++)
	{
		if (i > 0)
			*p++ = ',';
		p = put_part(p, resources[i], ",=\"\\");
		p += sprintf(p, "=%lld", tokens[i]);
		if (owners != NULL && owners[i] != NULL && owners[i][0] != '\0')
		{
			*p++ = '/';
			p = put_part(p, owners[i], ",\"\\");
		}
	}
	*p = '\0';
	return out;
}

static int
is_space(char ch)
{
	return ch != '\0' && strchr(" \t\n\r\f\v", ch) != NULL;
}

/*
 * One resource or owner of a fence.tokens value at "*p", into "out" (as
 * long as the value): quoted ("" doubles a quote), or bare up to one of
 * "stops" (trailing whitespace dropped).  NULL on a quote left open.
 */
static const char *
read_part(const char *p, const char *stops, char *out)
{
	size_t		n = 0;

	if (*p == '"')
	{
		for (p++;; p++)
		{
			if (*p == '\0')
				return NULL;
			if (*p == '"' && p[1] == '"')
				p++;
			else if (*p == '"')
				break;
			out[n++] = *p;
		}
		out[n] = '\0';
		return p + 1;
	}
	for (; *p != '\0' && strchr(stops, *p) == NULL; p++)
		out[n++] = *p;
	while (n > 0 && is_space(out[n - 1]))
		n--;
	out[n] = '\0';
	return p;
}

/*
 * Read a fence.tokens value, calling "entry" with each entry in the order
 * written (an owner the entry does not name is "").  FENCE_OK; FENCE_ERR
 * with a message in "errbuf" for a malformed value; or the first
 * non-zero value "entry" returned, which stops the reading.  Lenient
 * where the server is strict: a token is any number strtoll reads, and a
 * resource named twice is given twice; the server refuses what it must.
 */
int
fence_parse_tokens(const char *value,
				   int (*entry) (void *arg, const char *resource, long long token,
								 const char *owner),
				   void *arg, char *errbuf, size_t errlen)
{
	size_t		len = strlen(value);
	char	   *res = malloc(len + 1),
			   *own = malloc(len + 1);
	const char *p = value;
	int			rc = FENCE_ERR;

	if (res == NULL || own == NULL)
	{
		snprintf(errbuf, errlen, "out of memory");
		goto done;
	}
	while (is_space(*p))
		p++;
	while (*p != '\0')
	{
		char	   *end;
		long long	token;
		int			stop;

		while (is_space(*p))
			p++;
		if ((p = read_part(p, "=", res)) == NULL || *p != '=')
		{
			snprintf(errbuf, errlen, "an entry without \"=TOKEN\" (or a quote left open)");
			goto done;
		}
		p++;
		if (!(*p >= '0' && *p <= '9') && !(*p == '-' && p[1] >= '0' && p[1] <= '9'))
		{
			snprintf(errbuf, errlen, "the token of \"%.100s\" is not a number", res);
			goto done;
		}
		token = strtoll(p, &end, 10);
		p = end;
		own[0] = '\0';
		if (*p == '/' && (p = read_part(p + 1, ",", own)) == NULL)
		{
			snprintf(errbuf, errlen, "the owner of \"%.100s\" has a quote left open", res);
			goto done;
		}
		while (is_space(*p))
			p++;
		if (*p != ',' && *p != '\0')
		{
			snprintf(errbuf, errlen, "unexpected \"%.20s\" after the entry of \"%.100s\"", p, res);
			goto done;
		}
		if ((stop = entry(arg, res, token, own)) != 0)
		{
			rc = stop;
			goto done;
		}
		if (*p == ',')
			p++;
	}
	rc = FENCE_OK;
done:
	free(res);
	free(own);
	return rc;
}
