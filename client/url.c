/*
 * client/url.c
 *	  Redis URLs: where a fence_ctx connects, how it logs in, and whether it
 *	  speaks TLS.
 *
 * These forms are understood; the ones with "rediss" speak TLS:
 *
 *	 redis[s]://[[user]:password@]host[:port][/db][?tls-...]
 *	 unix:///path/to/socket[?db=N]
 *	 redis[s]-sentinel://[[user]:password@]host[:port][,host[:port]...]/MASTER[?db=N][&tls-...]
 *	 redis[s]-cluster://[[user]:password@]host[:port][,host[:port]...][?tls-...]
 *
 * Sentinels listen on port 26379 by default, the others on 6379.  For
 * Sentinel the credentials and the database are those of the master (the
 * sentinels themselves are asked without credentials); a cluster has only
 * database 0.  User, password and master name may be percent-encoded (so
 * that ':', '@', ',', '/' or '?' can appear in them); an IPv6 host goes in
 * brackets.  The query starts at the first '?'.  Its TLS parameters carry
 * the names redis.conf gives the same files (tls-ca-cert-file,
 * tls-ca-cert-dir, tls-cert-file, tls-key-file), plus tls-server-name and
 * tls-insecure-skip-verify=yes; their values may be percent-encoded too.
 * Anything else is refused with a message that says what was expected: a
 * typo in a URL must not silently connect somewhere else, nor a TLS
 * parameter on a redis:// URL silently go without TLS.  A quorum is not
 * one URL but several (store.c splits them).
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

/*
 * Fail with a message about the URL; the messages quote it as "shown"
 * (its password masked), never as it was given.
 */
#define URL_FAIL(...) \
	do { \
		snprintf(errbuf, errlen, __VA_ARGS__); \
		fence_url_free(out); \
		free(shown); \
		return FENCE_ERR; \
	} while (0)

static const char *const url_forms[] = {
	"redis://[[user]:password@]host[:port][/db]",
	"redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/MASTER[?db=N]",
	"redis-cluster://[[user]:password@]host[:port][,host[:port]...]"
};

/* The schemes of TCP URLs, and what each one takes. */
#define Q_DB	1				/* query parameter db=N */
#define Q_TLS	2				/* the tls-... parameters */

static const struct scheme
{
	const char *prefix;
	int			kind;			/* FENCE_URL_* */
	int			tls;
	int			defport;
	int			multi;			/* a list of hosts */
	int			query;			/* Q_* */
}			schemes[] = {
	{"redis://", FENCE_URL_NODE, 0, 6379, 0, 0},
	{"rediss://", FENCE_URL_NODE, 1, 6379, 0, Q_TLS},
	{"redis-sentinel://", FENCE_URL_SENTINEL, 0, 26379, 1, Q_DB},
	{"rediss-sentinel://", FENCE_URL_SENTINEL, 1, 26379, 1, Q_DB | Q_TLS},
	{"redis-cluster://", FENCE_URL_CLUSTER, 0, 6379, 1, 0},
	{"rediss-cluster://", FENCE_URL_CLUSTER, 1, 6379, 1, Q_TLS},
};

/* The TLS parameters, and where in fence_tls_opts each one goes. */
static char **
tls_param(fence_tls_opts *t, const char *name, size_t len)
{
#define TLS_PARAM(str, field) \
	if (len == sizeof(str) - 1 && memcmp(name, str, len) == 0) \
		return &t->field
	TLS_PARAM("tls-ca-cert-file", ca_cert_file);
	TLS_PARAM("tls-ca-cert-dir", ca_cert_dir);
	TLS_PARAM("tls-cert-file", cert_file);
	TLS_PARAM("tls-key-file", key_file);
	TLS_PARAM("tls-server-name", server_name);
#undef TLS_PARAM
	return NULL;
}

#define TLS_PARAMS "tls-ca-cert-file, tls-ca-cert-dir, tls-cert-file, tls-key-file, tls-server-name, tls-insecure-skip-verify"

/*
 * Parse the query "q" (after the '?') into "out"; "allowed" (Q_*) says
 * which parameters the scheme takes.  Returns NULL on success, else what
 * is wrong (in "buf").
 */
static const char *
parse_query(const char *q, int allowed, fence_url *out, char *buf, size_t buflen)
{
	int			seen_db = 0,
				seen_insecure = 0;

	if (*q == '\0')
		return "empty query after '?'";
	while (*q != '\0')
	{
		const char *amp = strchr(q, '&');
		const char *end = amp ? amp : q + strlen(q);
		const char *eq = memchr(q, '=', end - q);
		size_t		nlen = eq ? (size_t) (eq - q) : (size_t) (end - q);
		char	  **field;
		char	   *value;
		int			oom = 0;

		if (eq == NULL || eq + 1 == end)
		{
			snprintf(buf, buflen, "query parameter \"%.*s\" needs a value (name=value)", (int) nlen, q);
			return buf;
		}
		if (nlen > 4 && memcmp(q, "tls-", 4) == 0 && !(allowed & Q_TLS))
		{
			snprintf(buf, buflen, "TLS parameter \"%.*s\" needs a TLS URL (rediss://, rediss-sentinel:// or rediss-cluster://)",
					 (int) nlen, q);
			return buf;
		}
		if ((value = pct_decode(eq + 1, end - eq - 1, &oom)) == NULL)
		{
			if (oom)
				return "out of memory";
			snprintf(buf, buflen, "bad %%-escape in query parameter \"%.*s\"", (int) nlen, q);
			return buf;
		}
		if ((allowed & Q_DB) && nlen == 2 && memcmp(q, "db", 2) == 0)
		{
			long		v;

			if (seen_db++ || parse_int(value, strlen(value), 0, 1000000, &v) != 0)
			{
				free(value);
				return seen_db > 1 ? "query parameter \"db\" given twice" :
					"db must be a number";
			}
			out->db = (int) v;
			free(value);
		}
		else if ((allowed & Q_TLS) && nlen == 24 && memcmp(q, "tls-insecure-skip-verify", 24) == 0)
		{
			int			yes = strcmp(value, "yes") == 0;

			if (seen_insecure++ || (!yes && strcmp(value, "no") != 0))
			{
				free(value);
				return seen_insecure > 1 ? "query parameter \"tls-insecure-skip-verify\" given twice" :
					"tls-insecure-skip-verify must be yes or no";
			}
			out->tls.insecure_skip_verify = yes;
			free(value);
		}
		else if ((allowed & Q_TLS) && (field = tls_param(&out->tls, q, nlen)) != NULL)
		{
			if (*field != NULL)
			{
				free(value);
				snprintf(buf, buflen, "query parameter \"%.*s\" given twice", (int) nlen, q);
				return buf;
			}
			*field = value;
		}
		else
		{
			free(value);
			snprintf(buf, buflen, "unknown query parameter \"%.*s\"; this URL takes %s", (int) nlen, q,
					 allowed == Q_DB ? "db=N" : allowed == Q_TLS ? TLS_PARAMS :
					 allowed ? "db=N, " TLS_PARAMS : "none");
			return buf;
		}
		q = amp ? amp + 1 : end;
		if (amp != NULL && *q == '\0')
			return "empty query parameter after '&'";
	}
	if ((out->tls.cert_file == NULL) != (out->tls.key_file == NULL))
		return "tls-cert-file and tls-key-file go together: give both, or neither";
	return NULL;
}

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
 * Where the authority of a URL ends: "rest" is what follows "scheme://",
 * "end" the end of the URL.  It runs to the first '/' (a database, a
 * master's name) or '?' (the query), whichever comes first.
 */
static const char *
authority_end(const char *rest, const char *end)
{
	const char *p;

	for (p = rest; p < end; p++)
		if (*p == '/' || *p == '?')
			return p;
	return end;
}

/*
 * The '@' that ends the credentials of the authority [rest, aend), or NULL
 * when it has none: the last one, so that an '@' in a user name or a
 * password needs no escape ("redis://us@er:p@ss@host").  Logging in
 * (parse_authority) and masking (fence_mask_url) both ask this function,
 * so that what is hidden is always what is sent as the password.
 */
static const char *
credentials_end(const char *rest, const char *aend)
{
	const char *at = NULL;
	const char *p;

	for (p = rest; p < aend; p++)
		if (*p == '@')
			at = p;
	return at;
}

/*
 * Is "s" (within "text") the "://" after a scheme?  Returns the length of
 * the scheme before it, or 0.  Any scheme counts: a password in
 * "redis+tls://" or "postgres://" is no less a password.
 */
static size_t
url_prefix_len(const char *text, const char *s)
{
	const char *p = s;

	if (strncmp(s, "://", 3) != 0)
		return 0;
	while (p > text && (isalnum((unsigned char) p[-1]) || strchr("+.-", p[-1]) != NULL))
		p--;
	return s - p;
}

/*
 * Where the credentials of the URL of "len" bytes at "url" lie, as
 * fence_parse_url reads them: "*start" is the offset of the authority
 * (after "scheme://"), "*at" that of the '@' that ends the credentials
 * and "*colon" that of the ':' before the password ("*at" when there is
 * no ':').  Returns 1 when the URL holds credentials, 0 when it holds
 * none ("*colon" and "*at" then equal "*start"), -1 when "url" does not
 * start with "scheme://".
 */
int
fence_url_credentials(const char *url, size_t len, size_t *start, size_t *colon,
					  size_t *at)
{
	const char *sep = memmem(url, len, "://", 3);
	const char *rest,
			   *end = url + len,
			   *a,
			   *c;

	/* the scheme is all of what comes before "://" */
	if (sep == NULL || url_prefix_len(url, sep) != (size_t) (sep - url))
		return -1;
	rest = sep + 3;
	*start = *colon = *at = rest - url;
	if ((a = credentials_end(rest, authority_end(rest, end))) == NULL)
		return 0;
	c = memchr(rest, ':', a - rest);
	*colon = (c ? c : a) - url;
	*at = a - url;
	return 1;
}

/*
 * Append to "out" (room for "outlen", "*used" so far) the "n" bytes at
 * "s"; what does not fit is dropped.
 */
static void
put(char *out, size_t outlen, size_t *used, const char *s, size_t n)
{
	if (*used + 1 >= outlen)
		return;
	if (n > outlen - *used - 1)
		n = outlen - *used - 1;
	memcpy(out + *used, s, n);
	*used += n;
	out[*used] = '\0';
}

/*
 * Copy "text" into "out" (room for "outlen" bytes, cut short when that is
 * too little) with the password of every URL in it written "***": the
 * URLs may stand anywhere ("--redis=URL", a quorum's list, a message),
 * each one running to the next whitespace.  The password is what follows
 * the first ':' of the credentials, which end where the URL parser ends
 * them (credentials_end).  With "strict" 0, a URL with an '@' after its
 * authority (most likely a password with an unescaped '/' or '?', which
 * the parser then reads as a path or a query), or credentials without a
 * ':', is masked from "://" to its last '@': for the messages that quote
 * a refused URL, where hiding too much costs nothing.  Returns the length of the unabridged result; "out"
 * holds all of it when that is below "outlen".
 */
static size_t
mask_urls(const char *text, char *out, size_t outlen, int strict)
{
	const char *p = text;
	size_t		used = 0,
				need = 0;

	if (outlen > 0)
		out[0] = '\0';
	while (*p)
	{
		const char *rest,
				   *end,
				   *aend,
				   *at,
				   *colon,
				   *q;

		if (*p != ':' || url_prefix_len(text, p) == 0)
		{
			put(out, outlen, &used, p, 1);
			need++;
			p++;
			continue;
		}
		rest = p + 3;
		end = rest + strcspn(rest, " \t\n\r\f\v");
		aend = authority_end(rest, end);
		at = credentials_end(rest, aend);
		if (!strict)
			for (q = aend; q < end; q++)
				if (*q == '@')
					at = q;
		colon = at ? memchr(rest, ':', at - rest) : NULL;
		/*
		 * A message hides it all where the user's end is unknown: an '@'
		 * past the authority, or no ':' ("redis://secret@host", a password
		 * written without it, which the parser refuses).
		 */
		if (at != NULL && !strict && (aend <= at || colon == NULL))
			colon = rest - 1;
		if (colon == NULL || colon + 1 == at)
		{
			put(out, outlen, &used, p, 3);
			need += 3;
			p = rest;
			continue;
		}
		put(out, outlen, &used, p, colon + 1 - p);
		put(out, outlen, &used, "***", 3);
		need += (colon + 1 - p) + 3;
		p = at;
	}
	return need;
}

/*
 * Copy "text" into "out" (of "outlen" bytes) with the password of every
 * Redis URL in it written "***", where fence_parse_url finds it.  Returns
 * the length of the whole result (as snprintf does): "out" holds it all
 * when that is below "outlen".  Twice the length of "text", and 4, is
 * always room enough.
 */
size_t
fence_mask_url(const char *text, char *out, size_t outlen)
{
	return mask_urls(text, out, outlen, 1);
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
	const char *at = credentials_end(rest, end);
	const char *p;
	const char *host;
	int			oom = 0;
	int			n = 1;

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
	const struct scheme *sc = NULL;
	const char *why;
	const char *rest;
	const char *q;
	const char *body_end;
	const char *slash;
	char		qbuf[200];
	char	   *shown = NULL;
	size_t		i;
	long		v;

	memset(out, 0, sizeof(*out));
	if (url == NULL || *url == '\0')
		URL_FAIL("empty Redis URL");
	/* what a message may quote: each byte may become "***" at most once */
	if ((shown = malloc(strlen(url) * 2 + 4)) == NULL)
		URL_FAIL("out of memory");
	mask_urls(url, shown, strlen(url) * 2 + 4, 0);

	if (strncmp(url, "unix://", 7) == 0)
	{
		const char *path = url + 7;
		size_t		plen;

		q = strchr(path, '?');
		plen = q ? (size_t) (q - path) : strlen(path);
		if (plen == 0 || path[0] != '/')
			URL_FAIL("invalid Redis URL \"%s\": expected unix:///path/to/socket[?db=N]", shown);
		out->is_unix = 1;
		out->path = strndup(path, plen);
		if (out->path == NULL)
			URL_FAIL("out of memory");
		if (q != NULL && (why = parse_query(q + 1, Q_DB, out, qbuf, sizeof(qbuf))) != NULL)
			URL_FAIL("invalid Redis URL \"%s\": %s", shown, why);
		free(shown);
		return FENCE_OK;
	}

	for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]) && sc == NULL; i++)
		if (strncmp(url, schemes[i].prefix, strlen(schemes[i].prefix)) == 0)
			sc = &schemes[i];
	if (sc == NULL)
	{
		/* no scheme ("user:pw@host"): what comes before an '@' may be a password */
		if (strstr(url, "://") == NULL && strrchr(url, '@') != NULL)
			snprintf(shown, strlen(url) * 2 + 4, "***%s", strrchr(url, '@'));
		if (strstr(url, "://") != NULL)
			URL_FAIL("unsupported Redis URL scheme in \"%s\": use redis://, rediss://, unix://, redis[s]-sentinel:// or redis[s]-cluster://", shown);
		URL_FAIL("invalid Redis URL \"%s\": expected redis://host[:port][/db] or unix:///path", shown);
	}
	out->kind = sc->kind;
	out->tls.enabled = sc->tls;
	rest = url + strlen(sc->prefix);
	q = strchr(rest, '?');
	body_end = q ? q : rest + strlen(rest);
	slash = memchr(rest, '/', body_end - rest);

	if (sc->kind == FENCE_URL_NODE)
	{
		if ((why = parse_authority(rest, slash ? slash : body_end, sc->defport, 0, out)) != NULL)
			URL_FAIL("invalid Redis URL \"%s\": %s", shown, why);
		if (slash != NULL && slash + 1 < body_end)
		{
			if (parse_int(slash + 1, body_end - slash - 1, 0, 1000000, &v) != 0)
				URL_FAIL("invalid Redis URL \"%s\": database must be a number after '/'", shown);
			out->db = (int) v;
		}
	}
	else if (sc->kind == FENCE_URL_SENTINEL)
	{
		int			oom = 0;

		if (slash == NULL || slash + 1 == body_end)
			URL_FAIL("invalid Redis URL \"%s\": the master's name is missing; expected %s",
					 shown, url_forms[1]);
		if ((why = parse_authority(rest, slash, sc->defport, 1, out)) != NULL)
			URL_FAIL("invalid Redis URL \"%s\": %s", shown, why);
		if (memchr(slash + 1, '/', body_end - slash - 1) != NULL)
			URL_FAIL("invalid Redis URL \"%s\": unexpected '/' after the master's name (write it %%2F)", shown);
		out->master = pct_decode(slash + 1, body_end - slash - 1, &oom);
		if (out->master == NULL)
			URL_FAIL(oom ? "out of memory" : "invalid Redis URL \"%s\": bad %%-escape in the master's name", shown);
	}
	else
	{
		if ((why = parse_authority(rest, slash ? slash : body_end, sc->defport, 1, out)) != NULL)
			URL_FAIL("invalid Redis URL \"%s\": %s", shown, why);
		if (slash != NULL && slash + 1 < body_end)
			URL_FAIL("invalid Redis URL \"%s\": a Redis Cluster has only database 0 and takes nothing after the hosts; expected %s",
					 shown, url_forms[2]);
	}
	if (q != NULL && (why = parse_query(q + 1, sc->query, out, qbuf, sizeof(qbuf))) != NULL)
	{
		/*
		 * An '@' after the '?' is most likely the end of a password that
		 * holds a '?': "why" would quote a piece of it.
		 */
		if (strchr(q, '@') != NULL)
			URL_FAIL("invalid Redis URL \"%s\": the query after '?' is refused (a '?' in a password is written %%3F)",
					 shown);
		URL_FAIL("invalid Redis URL \"%s\": %s", shown, why);
	}
	free(shown);
	return FENCE_OK;
}

/* A deep copy of the TLS settings "src" into "dst"; -1 when out of memory. */
static int
tls_copy(fence_tls_opts *dst, const fence_tls_opts *src)
{
	*dst = *src;
	dst->ca_cert_file = dst->ca_cert_dir = dst->cert_file = dst->key_file =
		dst->server_name = NULL;
	if ((src->ca_cert_file && (dst->ca_cert_file = strdup(src->ca_cert_file)) == NULL) ||
		(src->ca_cert_dir && (dst->ca_cert_dir = strdup(src->ca_cert_dir)) == NULL) ||
		(src->cert_file && (dst->cert_file = strdup(src->cert_file)) == NULL) ||
		(src->key_file && (dst->key_file = strdup(src->key_file)) == NULL) ||
		(src->server_name && (dst->server_name = strdup(src->server_name)) == NULL))
		return -1;
	return 0;
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
	if (tls_copy(&dst->tls, &src->tls) != 0 ||
		(src->host && (dst->host = strdup(src->host)) == NULL) ||
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
 * password, database, TLS): a Sentinel master, a cluster node.
 */
int
fence_url_node(fence_url *dst, const fence_url *login, const char *host, int port)
{
	memset(dst, 0, sizeof(*dst));
	dst->kind = FENCE_URL_NODE;
	dst->port = port;
	dst->db = login->db;
	dst->nhosts = 1;
	if (tls_copy(&dst->tls, &login->tls) != 0 ||
		(dst->host = strdup(host)) == NULL ||
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
	free(url->tls.ca_cert_file);
	free(url->tls.ca_cert_dir);
	free(url->tls.cert_file);
	free(url->tls.key_file);
	free(url->tls.server_name);
	if (url->password != NULL)
	{
		/* do not leave the secret lying around in freed memory */
		memset(url->password, 0, strlen(url->password));
		free(url->password);
	}
	memset(url, 0, sizeof(*url));
}
