/*
 * client/cli/secret.c
 *	  Keeping the Redis password out of argv: where fence takes it from,
 *	  and hiding the one a URL on the command line holds.
 *
 * Anything on a command line can be read by every user of the machine
 * (ps, /proc/PID/cmdline).  So the password may come from elsewhere, as
 * redis-cli takes it: --password-file FILE, else $FENCE_REDIS_PASSWORD,
 * else $REDISCLI_AUTH.  It logs in to every node of the topology whose
 * URL holds none (each URL of a quorum, the master a Sentinel names, each
 * node of a Cluster); a password written in a URL is that URL's own and
 * wins.  fence gives it to libfence inside the URL it connects with,
 * percent-encoded, a string that lives in fence's memory only.
 *
 * And a URL given with its password on the command line is hidden from
 * the process title: once fence has its own copy of the arguments, it
 * writes them back over the original ones with each password replaced by
 * "***", so that ps shows redis://user:***@host.  Someone who looked in
 * the first instant may have seen it: the environment or a file is the
 * safe place, and the help says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char *const url_schemes[] = {
	"redis://", "rediss://", "redis-sentinel://", "rediss-sentinel://",
	"redis-cluster://", "rediss-cluster://"
};

/* The length of the scheme "s" starts with, or 0 for none of ours. */
static size_t
scheme_len(const char *s)
{
	size_t		i;

	for (i = 0; i < sizeof(url_schemes) / sizeof(url_schemes[0]); i++)
		if (strncmp(s, url_schemes[i], strlen(url_schemes[i])) == 0)
			return strlen(url_schemes[i]);
	return 0;
}

/*
 * "spec" (one URL or a quorum's, or any argument that holds one) as it may
 * be shown: passwords as "***", where libfence's URL parser finds them, so
 * that what is hidden is what fence would log in with.  Returns a
 * malloc'd string, or NULL when out of memory.
 */
char *
masked_url(const char *spec)
{
	size_t		len = strlen(spec) * 2 + 4;
	char	   *out = malloc(len);

	if (out != NULL)
		fence_mask_url(spec, out, len);
	return out;
}

/* Does "s" hold a password in a Redis URL? */
static int
holds_password(const char *s)
{
	char	   *masked = masked_url(s);
	int			differs;

	if (masked == NULL)
		return 0;
	differs = strcmp(masked, s) != 0;
	free(masked);
	return differs;
}

/*
 * Hide the passwords of the command line.  Returns a copy of "argv" for
 * fence to parse and pass on (NULL when out of memory), and writes the
 * original arguments over themselves, passwords masked: they lie end to
 * end in one block of memory, which is what ps and /proc/PID/cmdline
 * read; what a mask shortens is filled with NULs at the end of the block.
 */
static char **argv_copy;		/* what hide_secrets gave, freed at exit */

static void
free_argv_copy(void)
{
	int			i;

	for (i = 0; argv_copy[i] != NULL; i++)
		free(argv_copy[i]);
	free(argv_copy);
}

char	  **
hide_secrets(int argc, char **argv)
{
	char	  **copy = argv_copy = calloc(argc + 1, sizeof(char *));
	char	   *area,
			   *end,
			   *w;
	int			i,
				any = 0;

	if (copy == NULL || atexit(free_argv_copy) != 0)
		return NULL;
	for (i = 0; i < argc; i++)
	{
		if ((copy[i] = strdup(argv[i])) == NULL)
			return NULL;		/* the copies go with the process */
		any |= holds_password(argv[i]);
	}
	if (!any)
		return copy;

	/* the block runs from argv[0] to the end of the last argument */
	area = argv[0];
	end = argv[argc - 1] + strlen(argv[argc - 1]) + 1;
	for (i = 1; i < argc; i++)
		if (argv[i] != argv[i - 1] + strlen(argv[i - 1]) + 1)
			return copy;		/* not one block: leave it as it is */
	w = area;
	for (i = 0; i < argc; i++)
	{
		char	   *masked = masked_url(copy[i]);

		/*
		 * a mask is longer than what it hides only for a password of 1 or
		 * 2 bytes: what no longer fits is left out (NULs below)
		 */
		if (masked == NULL || w + strlen(masked) + 1 > end)
		{
			free(masked);
			break;
		}
		argv[i] = w;
		memcpy(w, masked, strlen(masked) + 1);
		w += strlen(masked) + 1;
		free(masked);
	}
	memset(w, 0, end - w);
	return copy;
}

/* Percent-encode "s" for the credentials of a URL; malloc'd, or NULL. */
static char *
pct_encode(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char	   *out = malloc(strlen(s) * 3 + 1),
			   *o = out;
	const unsigned char *p;

	if (out == NULL)
		return NULL;
	for (p = (const unsigned char *) s; *p; p++)
	{
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
			(*p >= '0' && *p <= '9') || strchr("-._~", *p))
			*o++ = (char) *p;
		else
		{
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	*o = '\0';
	return out;
}

/*
 * Read the password in "path": the whole file, less one final newline.
 * Returns it malloc'd, or NULL with the reason in "errbuf".
 */
static char *
read_password_file(const char *path, char *errbuf, size_t errlen)
{
	FILE	   *f = fopen(path, "r");
	struct stat st;
	char		buf[4096];
	size_t		n;

	if (f == NULL)
	{
		snprintf(errbuf, errlen, "--password-file %s: %s", path, strerror(errno));
		return NULL;
	}
	n = fread(buf, 1, sizeof(buf), f);
	if (ferror(f) || !feof(f))
	{
		snprintf(errbuf, errlen, "--password-file %s: %s", path,
				 ferror(f) ? strerror(errno) : "longer than 4095 bytes");
		fclose(f);
		return NULL;
	}
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
		note("warning: --password-file %s can be read by others (chmod 600 it)", path);
	fclose(f);
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	if (n == 0 || memchr(buf, '\0', n) != NULL)
	{
		snprintf(errbuf, errlen, "--password-file %s: %s", path,
				 n == 0 ? "the file is empty" : "the password holds a NUL byte");
		return NULL;
	}
	return strndup(buf, n);
}

/*
 * Append the URL of "len" bytes at "url" to "out" (which has room), with
 * the password "enc" (percent-encoded) when it holds none; an ACL user it
 * names ("user@") stays.  unix:// URLs take no password: -1.
 */
static int
add_password(const char *url, size_t len, const char *enc, char *out)
{
	size_t		start,
				colon,
				at;
	int			has = fence_url_credentials(url, len, &start, &colon, &at);

	if (has < 0 || scheme_len(url) == 0)
	{
		if (strncmp(url, "unix://", 7) == 0)
			return -1;
		strncat(out, url, len); /* not a URL: fence_check_url says so */
		return 0;
	}
	if (has && colon + 1 < at)
	{
		strncat(out, url, len); /* its own password wins */
		return 0;
	}
	/* where the URL parser ends the credentials, the user name with them */
	strncat(out, url, colon);
	strcat(out, ":");
	strcat(out, enc);
	strcat(out, "@");
	if (has)
		strncat(out, url + at + 1, len - at - 1);
	else
		strncat(out, url + start, len - start);
	return 0;
}

/*
 * Give the password from --password-file, $FENCE_REDIS_PASSWORD or
 * $REDISCLI_AUTH (the first there is) to every URL of "o->redis" that
 * holds none; o->redis then points to o->redis_auth.  Returns 0, or an
 * exit status after saying why not.
 */
int
apply_password(options *o)
{
	char		errbuf[512];
	char	   *pw = NULL,
			   *enc,
			   *spec;
	const char *from = NULL,
			   *p;
	int			bad = 0;

	if (o->password_file != NULL)
	{
		if ((pw = read_password_file(o->password_file, errbuf, sizeof(errbuf))) == NULL)
			return report_error(EXIT_USAGE, errbuf, NULL);
		from = "--password-file";
	}
	else if ((p = getenv("FENCE_REDIS_PASSWORD")) != NULL && *p)
	{
		pw = strdup(p);
		from = "FENCE_REDIS_PASSWORD";
	}
	else if ((p = getenv("REDISCLI_AUTH")) != NULL && *p)
	{
		pw = strdup(p);
		from = "REDISCLI_AUTH";
	}
	if (from == NULL)
		return 0;
	if (pw == NULL || (enc = pct_encode(pw)) == NULL)
	{
		free(pw);
		return report_error(EXIT_FAIL, "out of memory", NULL);
	}
	memset(pw, 0, strlen(pw));
	free(pw);
	/* each URL grows by ":", the password and "@" at most */
	spec = calloc(1, strlen(o->redis) * (strlen(enc) + 3) + 1);
	if (spec == NULL)
	{
		free(enc);
		return report_error(EXIT_FAIL, "out of memory", NULL);
	}
	/* each URL of a quorum, as fence_connect splits them */
	for (p = o->redis; *p && !bad;)
	{
		size_t		len;

		p += strspn(p, " \t\n\r\f\v");
		if ((len = strcspn(p, " \t\n\r\f\v")) == 0)
			break;
		if (*spec)
			strcat(spec, " ");
		bad = add_password(p, len, enc, spec) != 0;
		p += len;
	}
	memset(enc, 0, strlen(enc));
	free(enc);
	if (bad)
	{
		free(spec);
		snprintf(errbuf, sizeof(errbuf), "a password from %s cannot go to a unix:// URL: fence logs in over TCP only",
				 from);
		return report_error(EXIT_USAGE, errbuf, NULL);
	}
	trace("Redis password from %s", from);
	o->redis_auth = spec;
	o->redis = spec;
	return 0;
}

/*
 * "spec" (one URL or a quorum's) without the passwords its URLs hold, the
 * users they name kept: malloc'd, or NULL when out of memory.
 */
static char *
without_passwords(const char *spec)
{
	char	   *out = calloc(1, strlen(spec) + 1);
	const char *p = spec;

	while (out != NULL && *p)
	{
		size_t		len = strcspn(p, " \t\n\r\f\v"),
					start,
					colon,
					at;

		if (len == 0)
		{
			strncat(out, p++, 1);
			continue;
		}
		if (fence_url_credentials(p, len, &start, &colon, &at) == 1)
		{
			strncat(out, p, colon);
			if (colon > start)	/* a user: "user@host" */
				strncat(out, p + at, len - at);
			else
				strncat(out, p + at + 1, len - at - 1);
		}
		else
			strncat(out, p, len);
		p += len;
	}
	return out;
}

/*
 * fence run: what COMMAND may know of the Redis password.  By default
 * nothing: $FENCE_REDIS_PASSWORD and $REDISCLI_AUTH are taken out of its
 * environment, and the passwords out of the URLs in $FENCE_REDIS_URL.  The
 * command rarely needs them (its token is in FENCE_TOKEN and PGOPTIONS),
 * and a command that is a script of someone else's, or that runs code it
 * downloads, would learn a password that opens every lease.  A command
 * that itself takes leases (a nested fence run, a program on libfence)
 * needs them: --inherit-password passes the environment on as it is.
 * Done before any thread starts: setenv is not safe after fork in a
 * process with threads.  Returns 0, or an exit status.
 */
int
keep_password_from_child(const options *o)
{
	const char *url = getenv("FENCE_REDIS_URL");

	if (o->inherit_password)
		return 0;
	if (url != NULL)
	{
		char	   *bare = without_passwords(url);

		/* glibc keeps the old string, which o->redis may point into */
		if (bare == NULL || setenv("FENCE_REDIS_URL", bare, 1) != 0)
		{
			free(bare);
			return report_error(EXIT_FAIL, "out of memory", NULL);
		}
		free(bare);
	}
	unsetenv("FENCE_REDIS_PASSWORD");
	unsetenv("REDISCLI_AUTH");
	return 0;
}
