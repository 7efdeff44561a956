/*
 * client/url.c
 *	  Redis URLs: where a fence_ctx connects and how it logs in.
 *
 * Two forms are understood:
 *
 *	 redis://[[user]:password@]host[:port][/db]
 *	 unix:///path/to/socket[?db=N]
 *
 * User and password may be percent-encoded (so that ':' or '@' can appear in
 * them); an IPv6 host goes in brackets.  Anything else is refused with a
 * message that says what was expected: a typo in a URL must not silently
 * connect somewhere else.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fence_int.h"

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Copy "len" bytes of "s", decoding %XX escapes.  Returns NULL on a bad
 * escape or when out of memory ("*oom" tells which).
 */
static char *
pct_decode(const char *s, size_t len, int *oom)
{
	char	   *out = malloc(len + 1);
	size_t		i,
				j = 0;

	*oom = 0;
	if (out == NULL)
	{
		*oom = 1;
		return NULL;
	}
	for (i = 0; i < len; i++)
	{
		if (s[i] == '%')
		{
			int			hi,
						lo;

			if (i + 2 >= len)
			{
				free(out);
				return NULL;
			}
			hi = hexval((unsigned char) s[i + 1]);
			lo = hexval((unsigned char) s[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
			{
				free(out);
				return NULL;
			}
			out[j++] = (char) (hi * 16 + lo);
			i += 2;
		}
		else
			out[j++] = s[i];
	}
	out[j] = '\0';
	return out;
}

/* Parse a non-negative decimal in [min, max]; the whole string must match. */
static int
parse_int(const char *s, size_t len, long min, long max, long *out)
{
	long		v = 0;
	size_t		i;

	if (len == 0 || len > 10)
		return -1;
	for (i = 0; i < len; i++)
	{
		if (!isdigit((unsigned char) s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

#define URL_FAIL(...) \
	do { \
		snprintf(errbuf, errlen, __VA_ARGS__); \
		fence_url_free(out); \
		return FENCE_ERR; \
	} while (0)

/*
 * Parse "url" into "out" (which the caller later frees with
 * fence_url_free).  On failure a message goes to "errbuf" and "out" is left
 * empty.
 */
int
fence_parse_url(const char *url, fence_url *out, char *errbuf, size_t errlen)
{
	int			oom = 0;
	long		v;

	memset(out, 0, sizeof(*out));
	if (url == NULL || *url == '\0')
		URL_FAIL("empty Redis URL");

	if (strncmp(url, "unix://", 7) == 0)
	{
		const char *path = url + 7;
		const char *q = strchr(path, '?');
		size_t		plen = q ? (size_t) (q - path) : strlen(path);

		if (plen == 0 || path[0] != '/')
			URL_FAIL("invalid Redis URL \"%s\": expected unix:///path/to/socket[?db=N]", url);
		out->is_unix = 1;
		out->path = strndup(path, plen);
		if (out->path == NULL)
			URL_FAIL("out of memory");
		if (q != NULL)
		{
			if (strncmp(q, "?db=", 4) != 0 ||
				parse_int(q + 4, strlen(q + 4), 0, 1000000, &v) != 0)
				URL_FAIL("invalid Redis URL \"%s\": the only query parameter is db=N", url);
			out->db = (int) v;
		}
		return FENCE_OK;
	}

	if (strncmp(url, "redis://", 8) == 0)
	{
		const char *rest = url + 8;
		const char *slash = strchr(rest, '/');
		const char *end = slash ? slash : rest + strlen(rest);
		const char *at = NULL;
		const char *p;
		const char *host;
		const char *hostend;
		const char *portstr = NULL;

		/* The userinfo ends at the last '@' before the path. */
		for (p = rest; p < end; p++)
			if (*p == '@')
				at = p;
		host = rest;
		if (at != NULL)
		{
			const char *colon = memchr(rest, ':', at - rest);

			if (colon == NULL)
				URL_FAIL("invalid Redis URL \"%s\": credentials must be written [user]:password@", url);
			if (colon > rest)
			{
				out->user = pct_decode(rest, colon - rest, &oom);
				if (out->user == NULL)
					URL_FAIL(oom ? "out of memory" : "invalid Redis URL \"%s\": bad %%-escape in user name", url);
			}
			out->password = pct_decode(colon + 1, at - colon - 1, &oom);
			if (out->password == NULL)
				URL_FAIL(oom ? "out of memory" : "invalid Redis URL \"%s\": bad %%-escape in password", url);
			host = at + 1;
		}

		if (*host == '[')
		{
			const char *rb = memchr(host, ']', end - host);

			if (rb == NULL || rb == host + 1)
				URL_FAIL("invalid Redis URL \"%s\": unterminated [IPv6 address]", url);
			out->host = strndup(host + 1, rb - host - 1);
			hostend = rb + 1;
			if (hostend < end && *hostend != ':')
				URL_FAIL("invalid Redis URL \"%s\": unexpected text after ']'", url);
		}
		else
		{
			hostend = memchr(host, ':', end - host);
			if (hostend == NULL)
				hostend = end;
			if (hostend == host)
				URL_FAIL("invalid Redis URL \"%s\": missing host", url);
			for (p = host; p < hostend; p++)
				if (!(isalnum((unsigned char) *p) || *p == '.' || *p == '-' || *p == '_'))
					URL_FAIL("invalid Redis URL \"%s\": bad character '%c' in host", url, *p);
			out->host = strndup(host, hostend - host);
		}
		if (out->host == NULL)
			URL_FAIL("out of memory");

		out->port = 6379;
		if (hostend < end)
		{
			/* *hostend == ':' */
			portstr = hostend + 1;
			if (parse_int(portstr, end - portstr, 1, 65535, &v) != 0)
				URL_FAIL("invalid Redis URL \"%s\": port must be a number from 1 to 65535", url);
			out->port = (int) v;
		}

		if (slash != NULL && slash[1] != '\0')
		{
			if (parse_int(slash + 1, strlen(slash + 1), 0, 1000000, &v) != 0)
				URL_FAIL("invalid Redis URL \"%s\": database must be a number after '/'", url);
			out->db = (int) v;
		}
		return FENCE_OK;
	}

	if (strstr(url, "://") != NULL)
		URL_FAIL("unsupported Redis URL scheme in \"%s\": use redis:// or unix://", url);
	URL_FAIL("invalid Redis URL \"%s\": expected redis://host[:port][/db] or unix:///path", url);
}

void
fence_url_free(fence_url *url)
{
	if (url == NULL)
		return;
	free(url->host);
	free(url->path);
	free(url->user);
	if (url->password != NULL)
	{
		/* do not leave the secret lying around in freed memory */
		memset(url->password, 0, strlen(url->password));
		free(url->password);
	}
	memset(url, 0, sizeof(*url));
}
