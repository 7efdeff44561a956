/*
 * client/cli/inherited.c
 *	  Reading the fence settings fence run inherits in PGOPTIONS: a
 *	  fence.tokens value (read by libfence's fence_parse_tokens, which
 *	  owns the grammar with its writer: client/tokens.c) and
 *	  fence.resource, fence.token and fence.owner; and writing settings
 *	  back, escaped as libpq's options are (carry.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

void
carried_free(carried *c)
{
	size_t		i;

	for (i = 0; i < c->n; i++)
	{
		free(c->t[i].resource);
		free(c->t[i].owner);
	}
	free(c->t);
	free(c->kept);
	for (i = 0; i < 3; i++)
		free(c->single[i]);
	memset(c, 0, sizeof(*c));
}

/* Add or replace the entry of "resource" ("owner" may be NULL). */
int
put_triple(carried *c, const char *resource, long long token, const char *owner)
{
	size_t		i;
	triple	   *t;

	for (i = 0; i < c->n; i++)
		if (strcmp(c->t[i].resource, resource) == 0)
			break;
	if (i == c->n)
	{
		if ((t = realloc(c->t, (c->n + 1) * sizeof(triple))) == NULL)
			return -1;
		c->t = t;
		c->t[c->n].resource = NULL;
		c->t[c->n].owner = NULL;
		c->n++;
	}
	free(c->t[i].resource);
	free(c->t[i].owner);
	c->t[i].resource = strdup(resource);
	c->t[i].owner = strdup(owner ? owner : "");
	c->t[i].token = token;
	return c->t[i].resource && c->t[i].owner ? 0 : -1;
}

static int
is_space(char ch)
{
	return ch != '\0' && strchr(" \t\n\r\f\v", ch) != NULL;
}

/* fence_parse_tokens's "entry": one entry of an inherited fence.tokens */
static int
put_entry(void *arg, const char *resource, long long token, const char *owner)
{
	return put_triple((carried *) arg, resource, token, owner) != 0 ? 1 : 0;
}

/*
 * Parse a fence.tokens value into "c" (its entries added).  0, or -1 with
 * a message in "err".
 */
static int
parse_tokens(const char *value, carried *c, char *err, size_t errlen)
{
	int			rc = fence_parse_tokens(value, put_entry, c, err, errlen);

	if (rc > 0)
		snprintf(err, errlen, "out of memory");
	return rc == FENCE_OK ? 0 : -1;
}

/* Append "word" to "*buf", raw (it is escaped already, or escape = 1). */
static int
append(char **buf, const char *word, size_t len, int escape)
{
	size_t		have = *buf ? strlen(*buf) : 0;
	char	   *n = realloc(*buf, have + 2 * len + 2);
	size_t		i;

	if (n == NULL)
		return -1;
	*buf = n;
	if (have > 0)
		n[have++] = ' ';
	for (i = 0; i < len; i++)
	{
		if (escape && (word[i] == '\\' || is_space(word[i])))
			n[have++] = '\\';
		n[have++] = word[i];
	}
	n[have] = '\0';
	return 0;
}

/* Append "-c NAME=VALUE", escaped as libpq's options are. */
int
add_setting(char **buf, const char *name, const char *value)
{
	size_t		len = strlen(name) + strlen(value) + 2;
	char	   *v = malloc(len);
	int			rc;

	if (v == NULL)
		return -1;
	snprintf(v, len, "%s=%s", name, value);
	rc = append(buf, "-c", 2, 0) == 0 && append(buf, v, len - 1, 1) == 0 ? 0 : -1;
	free(v);
	return rc;
}

/*
 * Read the fence settings in "pgoptions" into "c": split as the server
 * splits libpq's options (whitespace, a backslash escapes the next
 * character), "-c NAME=VALUE", "-cNAME=VALUE" or "--NAME=VALUE".  Every
 * other word is kept as it was, in c->kept.
 */
int
read_pgoptions(const char *pgoptions, carried *c, char *err, size_t errlen)
{
	static const char *const names[] = {"fence.resource", "fence.token", "fence.owner"};
	size_t		len = strlen(pgoptions);
	char	   *word = malloc(len + 1);
	const char *p = pgoptions,
			   *pending = NULL;	/* a "-c" whose NAME=VALUE is next */
	size_t		pending_len = 0;
	int			rc = -1;

	if (word == NULL)
		return -1;
	for (;;)
	{
		const char *start;
		char	   *setting = NULL; /* into word[], which is ours to cut */
		size_t		n = 0;
		int			i;

		while (is_space(*p))
			p++;
		if (*p == '\0')
			break;
		start = p;
		for (; *p != '\0' && !is_space(*p); p++)
		{
			if (*p == '\\' && p[1] != '\0')
				p++;
			word[n++] = *p;
		}
		word[n] = '\0';
		if (pending == NULL && strcmp(word, "-c") == 0)
		{
			pending = start;
			pending_len = (size_t) (p - start);
			continue;
		}
		if (pending != NULL)
			setting = word;
		else if (strncmp(word, "-c", 2) == 0)
			setting = word + 2;
		else if (strncmp(word, "--", 2) == 0)
			setting = word + 2;
		if (setting != NULL && strncasecmp(setting, "fence.", 6) == 0 && strchr(setting, '=') != NULL)
		{
			char	   *eq = strchr(setting, '=');

			*eq = '\0';
			if (strcasecmp(setting, "fence.tokens") == 0)
			{
				if (parse_tokens(eq + 1, c, err, errlen) != 0)
					goto done;
			}
			else
				for (i = 0; i < 3; i++)
					if (strcasecmp(setting, names[i]) == 0)
					{
						free(c->single[i]);
						if ((c->single[i] = strdup(eq + 1)) == NULL)
							goto done;
					}
			/* any other fence.* setting is kept */
			if (strcasecmp(setting, "fence.tokens") == 0 || strcasecmp(setting, names[0]) == 0 ||
				strcasecmp(setting, names[1]) == 0 || strcasecmp(setting, names[2]) == 0)
			{
				pending = NULL;
				continue;
			}
		}
		if ((pending != NULL && append(&c->kept, pending, pending_len, 0) != 0) ||
			append(&c->kept, start, (size_t) (p - start), 0) != 0)
			goto done;
		pending = NULL;
	}
	if (pending != NULL && append(&c->kept, pending, pending_len, 0) != 0)
		goto done;
	rc = 0;
done:
	free(word);
	return rc;
}

