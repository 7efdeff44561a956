/*
 * client/url.c
 *	  Redis URLs: where a fence_ctx connects and how it logs in.
 *
 * Four forms are understood:
 *
 *	 redis://[[user]:password@]host[:port][/db]
 *	 unix:///path/to/socket[?db=N]
 *	 redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/MASTER[?db=N]
 *	 redis-cluster://[[user]:password@]host[:port][,host[:port]...]
 *
 * Sentinels listen on port 26379 by default, the others on 6379.  For
 * Sentinel the credentials and the database are those of the master (the
 * sentinels themselves are asked without credentials); a cluster has only
 * database 0.  User, password and master name may be percent-encoded (so
 * that ':', '@', ',' or '/' can appear in them); an IPv6 host goes in
 * brackets.  Anything else is refused with a message that says what was
 * expected: a typo in a URL must not silently connect somewhere else.
 * A quorum is not one URL but several (context.c splits them).
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

static const char *const url_forms[] = {
	"redis://[[user]:password@]host[:port][/db]",
	"redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/MASTER[?db=N]",
	"redis-cluster://[[user]:password@]host[:port][,host[:port]...]"
};

/*
 * Parse one "host[:port]" (or "[v6]:port") in [s, end) into "hp".  Returns
 * NULL on success, else what is wrong.
 */
static const char *
parse_hostport(const char *s, const char *end, int defport, fence_hostport *hp)
{
	const char *hostend;
	const char *p;
	long		v;

	if (*s == '[')
	{
		const char *rb = memchr(s, ']', end - s);

		if (rb == NULL || rb == s + 1)
			return "unterminated [IPv6 address]";
		hp->host = strndup(s + 1, rb - s - 1);
		hostend = rb + 1;
		if (hostend < end && *hostend != ':')
			return "unexpected text after ']'";
	}
	else
	{
		hostend = memchr(s, ':', end - s);
		if (hostend == NULL)
			hostend = end;
		if (hostend == s)
			return "missing host";
		for (p = s; p < hostend; p++)
			if (!(isalnum((unsigned char) *p) || *p == '.' || *p == '-' || *p == '_'))
				return "bad character in host";
		hp->host = strndup(s, hostend - s);
	}
	if (hp->host == NULL)
		return "out of memory";
	hp->port = defport;
	if (hostend < end)
	{
		/* *hostend == ':' */
		if (parse_int(hostend + 1, end - hostend - 1, 1, 65535, &v) != 0)
			return "port must be a number from 1 to 65535";
		hp->port = (int) v;
	}
	return NULL;
}

/*
 * The part after "scheme://" up to "end": credentials, then one host, or a
 * comma-separated list of them when "multi".  Fills user, password, hosts,
 * nhosts, host and port.  Returns NULL on success, else what is wrong.
 */
static const char *
parse_authority(const char *rest, const char *end, int defport, int multi,
				fence_url *out)
{
	const char *at = NULL;
	const char *p;
	const char *host;
	int			oom = 0;
	int			n = 1;

	/* The userinfo ends at the last '@' before the path. */
	for (p = rest; p < end; p++)
		if (*p == '@')
			at = p;
	host = rest;
	if (at != NULL)
	{
		const char *colon = memchr(rest, ':', at - rest);

		if (colon == NULL)
			return "credentials must be written [user]:password@";
		if (colon > rest)
		{
			out->user = pct_decode(rest, colon - rest, &oom);
			if (out->user == NULL)
				return oom ? "out of memory" : "bad %-escape in user name";
		}
		out->password = pct_decode(colon + 1, at - colon - 1, &oom);
		if (out->password == NULL)
			return oom ? "out of memory" : "bad %-escape in password";
		host = at + 1;
	}
	if (multi)
		for (p = host; p < end; p++)
			n += *p == ',';
	out->hosts = calloc(n, sizeof(fence_hostport));
	if (out->hosts == NULL)
		return "out of memory";
	for (p = host; out->nhosts < n; out->nhosts++)
	{
		const char *comma = multi ? memchr(p, ',', end - p) : NULL;
		const char *hend = comma ? comma : end;
		const char *why;

		if (hend == p)
			return "missing host";
		why = parse_hostport(p, hend, defport, &out->hosts[out->nhosts]);
		if (why != NULL)
		{
			out->nhosts++;		/* free what it allocated */
			return why;
		}
		p = hend + 1;
	}
	out->host = strdup(out->hosts[0].host);
	out->port = out->hosts[0].port;
	return out->host ? NULL : "out of memory";
}

/*
 * Parse "url" into "out" (which the caller later frees with
 * fence_url_free).  On failure a message goes to "errbuf" and "out" is left
 * empty.
 */
int
fence_parse_url(const char *url, fence_url *out, char *errbuf, size_t errlen)
{
	const char *why;
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

		out->kind = FENCE_URL_NODE;
		if ((why = parse_authority(rest, end, 6379, 0, out)) != NULL)
			URL_FAIL("invalid Redis URL \"%s\": %s", url, why);
		if (slash != NULL && slash[1] != '\0')
		{
			if (parse_int(slash + 1, strlen(slash + 1), 0, 1000000, &v) != 0)
				URL_FAIL("invalid Redis URL \"%s\": database must be a number after '/'", url);
			out->db = (int) v;
		}
		return FENCE_OK;
	}

	if (strncmp(url, "redis-sentinel://", 17) == 0)
	{
		const char *rest = url + 17;
		const char *slash = strchr(rest, '/');
		const char *q;
		const char *name_end;
		int			oom = 0;

		out->kind = FENCE_URL_SENTINEL;
		if (slash == NULL)
			URL_FAIL("invalid Redis URL \"%s\": the master's name is missing; expected %s",
					 url, url_forms[1]);
		if ((why = parse_authority(rest, slash, 26379, 1, out)) != NULL)
			URL_FAIL("invalid Redis URL \"%s\": %s", url, why);
		q = strchr(slash, '?');
		name_end = q ? q : slash + strlen(slash);
		if (name_end == slash + 1)
			URL_FAIL("invalid Redis URL \"%s\": the master's name is missing; expected %s",
					 url, url_forms[1]);
		if (memchr(slash + 1, '/', name_end - slash - 1) != NULL)
			URL_FAIL("invalid Redis URL \"%s\": unexpected '/' after the master's name (write it %%2F)", url);
		out->master = pct_decode(slash + 1, name_end - slash - 1, &oom);
		if (out->master == NULL)
			URL_FAIL(oom ? "out of memory" : "invalid Redis URL \"%s\": bad %%-escape in the master's name", url);
		if (q != NULL)
		{
			if (strncmp(q, "?db=", 4) != 0 ||
				parse_int(q + 4, strlen(q + 4), 0, 1000000, &v) != 0)
				URL_FAIL("invalid Redis URL \"%s\": the only query parameter is db=N", url);
			out->db = (int) v;
		}
		return FENCE_OK;
	}

	if (strncmp(url, "redis-cluster://", 16) == 0)
	{
		const char *rest = url + 16;
		const char *slash = strchr(rest, '/');
		const char *end = slash ? slash : rest + strlen(rest);

		out->kind = FENCE_URL_CLUSTER;
		if ((why = parse_authority(rest, end, 6379, 1, out)) != NULL)
			URL_FAIL("invalid Redis URL \"%s\": %s", url, why);
		if (slash != NULL && slash[1] != '\0')
			URL_FAIL("invalid Redis URL \"%s\": a Redis Cluster has only database 0 and takes nothing after the hosts; expected %s",
					 url, url_forms[2]);
		return FENCE_OK;
	}

	if (strstr(url, "://") != NULL)
		URL_FAIL("unsupported Redis URL scheme in \"%s\": use redis://, unix://, redis-sentinel:// or redis-cluster://", url);
	URL_FAIL("invalid Redis URL \"%s\": expected redis://host[:port][/db] or unix:///path", url);
}

/* A deep copy of "src" into "dst"; FENCE_ERR when out of memory. */
int
fence_url_copy(fence_url *dst, const fence_url *src)
{
	int			i;

	*dst = *src;
	dst->host = dst->path = dst->user = dst->password = dst->master = NULL;
	dst->hosts = NULL;
	dst->nhosts = 0;
	if ((src->host && (dst->host = strdup(src->host)) == NULL) ||
		(src->path && (dst->path = strdup(src->path)) == NULL) ||
		(src->user && (dst->user = strdup(src->user)) == NULL) ||
		(src->password && (dst->password = strdup(src->password)) == NULL) ||
		(src->master && (dst->master = strdup(src->master)) == NULL))
		goto oom;
	if (src->nhosts > 0)
	{
		if ((dst->hosts = calloc(src->nhosts, sizeof(fence_hostport))) == NULL)
			goto oom;
		for (i = 0; i < src->nhosts; i++, dst->nhosts++)
		{
			dst->hosts[i].port = src->hosts[i].port;
			if ((dst->hosts[i].host = strdup(src->hosts[i].host)) == NULL)
				goto oom;
		}
	}
	return FENCE_OK;
oom:
	fence_url_free(dst);
	return FENCE_ERR;
}

/*
 * The URL of one node at "host":"port" that logs in as "login" says (user,
 * password, database): a Sentinel master, a cluster node.
 */
int
fence_url_node(fence_url *dst, const fence_url *login, const char *host, int port)
{
	memset(dst, 0, sizeof(*dst));
	dst->kind = FENCE_URL_NODE;
	dst->port = port;
	dst->db = login->db;
	dst->nhosts = 1;
	if ((dst->host = strdup(host)) == NULL ||
		(dst->hosts = calloc(1, sizeof(fence_hostport))) == NULL ||
		(dst->hosts[0].host = strdup(host)) == NULL ||
		(login->user && (dst->user = strdup(login->user)) == NULL) ||
		(login->password && (dst->password = strdup(login->password)) == NULL))
	{
		fence_url_free(dst);
		return FENCE_ERR;
	}
	dst->hosts[0].port = port;
	return FENCE_OK;
}

void
fence_url_free(fence_url *url)
{
	int			i;

	if (url == NULL)
		return;
	free(url->host);
	free(url->path);
	free(url->user);
	free(url->master);
	for (i = 0; i < url->nhosts; i++)
		free(url->hosts[i].host);
	free(url->hosts);
	if (url->password != NULL)
	{
		/* do not leave the secret lying around in freed memory */
		memset(url->password, 0, strlen(url->password));
		free(url->password);
	}
	memset(url, 0, sizeof(*url));
}
