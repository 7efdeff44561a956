/*
 * client/test/test_fence.c
 *	  Tests of libfence against the real redis-server and PostgreSQL named by
 *	  FENCE_REDIS_URL and the PG* variables (test/run.sh starts both).
 *
 * Resource names carry the process id, since other suites share the
 * servers.  Tests that need PostgreSQL are skipped when the fence
 * extension cannot be created there.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "fence.h"
#include "fence_int.h"			/* FENCE_HANDOFF_MS, FENCE_WAIT_BEAT_MS */
#include "tap.h"
#define TEST_PREFIX "client"
#define TESTLIB_RAW_REDIS
#include "testlib.h"


static redisReply *
rcmd(const char *fmt,...)
{
	va_list		ap;
	redisReply *r;

	va_start(ap, fmt);
	r = redisvCommand(raw, fmt, ap);
	va_end(ap);
	return r;
}

/*
 * The ACL rule that grants every Pub/Sub channel: "&*", from Redis 6.2 on
 * (7.0 grants none by default).  Redis 6.0 has no channel rules and
 * refuses "&*"; "on", said twice, changes nothing there.
 */
static const char *
acl_channels(void)
{
	static const char *rule = NULL;
	redisReply *r;
	int			major = 0,
				minor = 0;

	if (rule != NULL)
		return rule;
	r = rcmd("INFO server");
	if (r && r->type == REDIS_REPLY_STRING)
	{
		const char *v = strstr(r->str, "redis_version:");

		if (v != NULL)
			(void) sscanf(v, "redis_version:%d.%d", &major, &minor);
	}
	freeReplyObject(r);
	rule = major > 6 || (major == 6 && minor >= 2) ? "&*" : "on";
	return rule;
}

static long long
rnum(const char *fmt, const char *key)
{
	redisReply *r = rcmd(fmt, key);
	long long	v = -999;

	if (r && r->type == REDIS_REPLY_INTEGER)
		v = r->integer;
	freeReplyObject(r);
	return v;
}

static void
rdo(const char *fmt, const char *a, const char *b)
{
	freeReplyObject(rcmd(fmt, a, b));
}

#define key(resource, suffix) key_of((resource), (suffix), 0)

static long long
pg_mark(const char *resource)
{
	const char *params[1] = {resource};
	PGresult   *res = PQexecParams(pg, "SELECT token FROM fence.fences WHERE resource = $1",
								   1, NULL, params, NULL, NULL, 0);
	long long	v = -1;

	if (PQresultStatus(res) == PGRES_TUPLES_OK)
		v = PQntuples(res) ? atoll(PQgetvalue(res, 0, 0)) : 0;
	PQclear(res);
	return v;
}

/* --- parsing ------------------------------------------------------------ */

static int
test_url_good(void)
{
	fence_url	u;
	char		err[256];
	int			rc = 1;

	memset(&u, 0, sizeof(u));
	CHECK(fence_parse_url("redis://localhost", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(!u.is_unix && strcmp(u.host, "localhost") == 0 && u.port == 6379 && u.db == 0);
	CHECK(u.user == NULL && u.password == NULL);
	fence_url_free(&u);

	CHECK(fence_parse_url("redis://127.0.0.1:7000/3", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(strcmp(u.host, "127.0.0.1") == 0 && u.port == 7000 && u.db == 3);
	fence_url_free(&u);

	CHECK(fence_parse_url("redis://:s3cret@h:1/", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(u.user == NULL && strcmp(u.password, "s3cret") == 0 && u.port == 1 && u.db == 0);
	fence_url_free(&u);

	CHECK(fence_parse_url("redis://alice:p%40ss%3Aw@db.example.com:6380/15", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(strcmp(u.user, "alice") == 0 && strcmp(u.password, "p@ss:w") == 0);
	CHECK(strcmp(u.host, "db.example.com") == 0 && u.port == 6380 && u.db == 15);
	fence_url_free(&u);

	CHECK(fence_parse_url("redis://[::1]:6379", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(strcmp(u.host, "::1") == 0 && u.port == 6379);
	fence_url_free(&u);

	CHECK(fence_parse_url("unix:///run/redis.sock", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(u.is_unix && strcmp(u.path, "/run/redis.sock") == 0 && u.db == 0);
	fence_url_free(&u);

	CHECK(fence_parse_url("unix:///tmp/r.sock?db=2", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(u.is_unix && strcmp(u.path, "/tmp/r.sock") == 0 && u.db == 2);
	fence_url_free(&u);

	/* Sentinel: default port 26379, master name %-decoded, ?db=N */
	CHECK(fence_parse_url("redis-sentinel://s1,s2:26380,[::1]/my%2Fmaster?db=3", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(u.kind == FENCE_URL_SENTINEL && u.nhosts == 3 && u.db == 3);
	CHECK(strcmp(u.hosts[0].host, "s1") == 0 && u.hosts[0].port == 26379);
	CHECK(strcmp(u.hosts[1].host, "s2") == 0 && u.hosts[1].port == 26380);
	CHECK(strcmp(u.hosts[2].host, "::1") == 0 && u.hosts[2].port == 26379);
	CHECK(strcmp(u.master, "my/master") == 0 && u.user == NULL && u.password == NULL);
	CHECK(strcmp(u.host, "s1") == 0 && u.port == 26379);
	fence_url_free(&u);
	CHECK(fence_parse_url("redis-sentinel://bob:p%2Cw@h:1/m", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(strcmp(u.user, "bob") == 0 && strcmp(u.password, "p,w") == 0 && u.nhosts == 1);
	fence_url_free(&u);

	/* Cluster: default port 6379, no database */
	CHECK(fence_parse_url("redis-cluster://:pw@a:7000,b", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(u.kind == FENCE_URL_CLUSTER && u.nhosts == 2 && u.db == 0 && u.master == NULL);
	CHECK(strcmp(u.hosts[0].host, "a") == 0 && u.hosts[0].port == 7000);
	CHECK(strcmp(u.hosts[1].host, "b") == 0 && u.hosts[1].port == 6379);
	CHECK(strcmp(u.password, "pw") == 0);
	fence_url_free(&u);
	CHECK(fence_parse_url("redis-cluster://a/", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(u.kind == FENCE_URL_CLUSTER && u.nhosts == 1 && !u.tls.enabled);
	fence_url_free(&u);

	/* TLS: rediss schemes, parameters after '?' (values %-decoded, '/' as is) */
	CHECK(fence_parse_url("rediss://h", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(u.kind == FENCE_URL_NODE && u.tls.enabled && u.port == 6379 && u.tls.ca_cert_file == NULL &&
		  !u.tls.insecure_skip_verify);
	fence_url_free(&u);
	CHECK(fence_parse_url("rediss://u:p%3F@h:6380/2?tls-ca-cert-file=/etc/ca%20s.pem&tls-server-name=r.example"
						  "&tls-cert-file=/c.pem&tls-key-file=/k.pem&tls-ca-cert-dir=/d",
						  &u, err, sizeof(err)) == FENCE_OK);
	CHECK(u.tls.enabled && u.port == 6380 && u.db == 2 && strcmp(u.password, "p?") == 0);
	CHECK(strcmp(u.tls.ca_cert_file, "/etc/ca s.pem") == 0 && strcmp(u.tls.ca_cert_dir, "/d") == 0);
	CHECK(strcmp(u.tls.server_name, "r.example") == 0);
	CHECK(strcmp(u.tls.cert_file, "/c.pem") == 0 && strcmp(u.tls.key_file, "/k.pem") == 0);
	fence_url_free(&u);
	CHECK(fence_parse_url("rediss://h?tls-insecure-skip-verify=yes", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(u.tls.insecure_skip_verify == 1);
	fence_url_free(&u);
	CHECK(fence_parse_url("rediss-sentinel://s1,s2/m?db=3&tls-ca-cert-file=/ca.pem", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(u.kind == FENCE_URL_SENTINEL && u.tls.enabled && u.db == 3 && u.nhosts == 2 &&
		  u.hosts[0].port == 26379 && strcmp(u.master, "m") == 0 && strcmp(u.tls.ca_cert_file, "/ca.pem") == 0);
	fence_url_free(&u);
	CHECK(fence_parse_url("rediss-cluster://a:7000,b?tls-server-name=c.example", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(u.kind == FENCE_URL_CLUSTER && u.tls.enabled && u.nhosts == 2 && strcmp(u.tls.server_name, "c.example") == 0);
	fence_url_free(&u);
	/* a refused TLS URL says what is wrong */
	CHECK(fence_parse_url("redis://h?tls-ca-cert-file=/ca.pem", &u, err, sizeof(err)) == FENCE_ERR);
	CHECK(strstr(err, "needs a TLS URL (rediss://") != NULL);
	CHECK(fence_parse_url("rediss://h?tls-cert-file=/c.pem", &u, err, sizeof(err)) == FENCE_ERR);
	CHECK(strstr(err, "tls-cert-file and tls-key-file go together") != NULL);
	rc = 0;
fail:
	fence_url_free(&u);
	return rc;
}

/* fence_url_skips_verify: the command's warning, with fence_url opaque */
static int
test_url_skips_verify(void)
{
	int			rc = 1;

	CHECK(fence_url_skips_verify("rediss://h?tls-insecure-skip-verify=yes") == 1);
	CHECK(fence_url_skips_verify("redis://a:1 rediss://b:2?tls-insecure-skip-verify=yes") == 1);
	CHECK(fence_url_skips_verify("rediss-cluster://a:7000,b?tls-insecure-skip-verify=yes") == 1);
	CHECK(fence_url_skips_verify("rediss://h") == 0);
	CHECK(fence_url_skips_verify("redis://a:1 redis://b:2") == 0);
	CHECK(fence_url_skips_verify("ftp://h?tls-insecure-skip-verify=yes") == 0);
	rc = 0;
fail:
	return rc;
}

/* --- fence.tokens: test/tokens_vectors.txt --------------------------------- */

#define VECTOR_MAX_ENTRIES 16

/* The entries fence_parse_tokens gives, as the vectors write them. */
typedef struct vector_entries
{
	size_t		n;
	char		text[2048];		/* RESOURCE|TOKEN|OWNER joined by ';' */
	char	   *resources[VECTOR_MAX_ENTRIES];
	char	   *owners[VECTOR_MAX_ENTRIES];
	long long	tokens[VECTOR_MAX_ENTRIES];
} vector_entries;

static int
vector_entry(void *arg, const char *resource, long long token, const char *owner)
{
	vector_entries *v = arg;
	size_t		used = strlen(v->text);
	int			w;

	if (v->n == VECTOR_MAX_ENTRIES)
		return 1;
	w = snprintf(v->text + used, sizeof(v->text) - used, "%s%s|%lld|%s",
				 v->n > 0 ? ";" : "", resource, token, owner);
	if (w < 0 || (size_t) w >= sizeof(v->text) - used)
		return 1;
	v->resources[v->n] = strdup(resource);
	v->owners[v->n] = strdup(owner);
	v->tokens[v->n] = token;
	v->n++;
	return 0;
}

static void
vector_entries_free(vector_entries *v)
{
	size_t		i;

	for (i = 0; i < v->n; i++)
	{
		free(v->resources[i]);
		free(v->owners[i]);
	}
	memset(v, 0, sizeof(*v));
}

/*
 * The vectors the server's readers are tested on too: every well-formed
 * value reads as the entries filed for it, and so does what the writer
 * (fence_format_tokens) makes of those entries.  The refused ones are
 * read only to show the lenient reader survives them.
 */
static int
test_tokens_vectors(void)
{
	const char *path = getenv("FENCE_TOKENS_VECTORS");
	FILE	   *f = fopen(path ? path : "../test/tokens_vectors.txt", "r");
	char		line[2048],
				err[256];
	vector_entries first = {0},
				again = {0};
	char	   *written = NULL;
	int			well = 0,
				refused = 0,
				rc = 1;

	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f) != NULL)
	{
		char	   *tab;

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		CHECK((tab = strchr(line, '\t')) != NULL);
		*tab++ = '\0';
		if (*tab == '!')
		{
			(void) fence_parse_tokens(line, vector_entry, &first, err, sizeof(err));
			vector_entries_free(&first);
			refused++;
			continue;
		}
		CHECK(*tab++ == '=');
		err[0] = '\0';
		if (fence_parse_tokens(line, vector_entry, &first, err, sizeof(err)) != FENCE_OK ||
			strcmp(first.text, tab) != 0)
		{
			snprintf(tap_why, sizeof(tap_why), "fence.tokens '%.100s': read as '%.100s' (%.100s), filed as '%.100s'",
					 line, first.text, err, tab);
			goto fail_quiet;
		}
		CHECK((written = fence_format_tokens(first.n, (const char *const *) first.resources,
											 first.tokens, (const char *const *) first.owners)) != NULL);
		if (fence_parse_tokens(written, vector_entry, &again, err, sizeof(err)) != FENCE_OK ||
			strcmp(again.text, tab) != 0)
		{
			snprintf(tap_why, sizeof(tap_why), "fence.tokens '%.100s' written as '%.100s': read as '%.100s', filed as '%.100s'",
					 line, written, again.text, tab);
			goto fail_quiet;
		}
		free(written);
		written = NULL;
		vector_entries_free(&first);
		vector_entries_free(&again);
		well++;
	}
	CHECK(well >= 10 && refused >= 30);
	rc = 0;
	goto done;
fail:
fail_quiet:
done:
	free(written);
	vector_entries_free(&first);
	vector_entries_free(&again);
	if (f != NULL)
		fclose(f);
	return rc;
}

static int
test_url_malformed(void)
{
	static const char *bad[] = {
		"", "localhost:6379", "http://localhost", "redis://",
		"redis://:6379", "redis://h:0", "redis://h:65536", "redis://h:port",
		"redis://h:12x", "redis://h/x", "redis://h/-1", "redis://user@h",
		"redis://u:p%zz@h", "redis://[::1", "redis://h o", "unix://",
		"unix://relative.sock", "unix:///s?db=x", "unix:///s?foo=1",
		"redis-sentinel://h", "redis-sentinel://h/", "redis-sentinel://h/?db=1",
		"redis-sentinel://h/m/x", "redis-sentinel://h/m?db=x", "redis-sentinel://h/m?x=1",
		"redis-sentinel://h,,i/m", "redis-sentinel://h,/m", "redis-sentinel://,h/m",
		"redis-sentinel://h:0/m", "redis-sentinel:///m", "redis-sentinel://h/m%zz",
		"redis-cluster://", "redis-cluster://h/0", "redis-cluster://h,", "redis-cluster://h:99999",
		"redis-cluster://u@h", "redis-cluster://h h", "redis://a,b",
		/* TLS parameters: only on TLS URLs, known, whole, once each */
		"redis://h?tls-ca-cert-file=/ca.pem", "redis-sentinel://h/m?tls-cert-file=c",
		"redis-cluster://h?tls-server-name=x", "unix:///s?tls-ca-cert-file=/ca.pem",
		"rediss://h?tls-ca=x", "rediss://h?db=1", "rediss://h?", "rediss://h?tls-server-name",
		"rediss://h?tls-server-name=", "rediss://h?tls-server-name=a&", "rediss://h?&tls-server-name=a",
		"rediss://h?tls-server-name=a&tls-server-name=b", "rediss://h?tls-cert-file=c",
		"rediss://h?tls-key-file=k", "rediss://h?tls-insecure-skip-verify=1",
		"rediss://h?tls-insecure-skip-verify=yes&tls-insecure-skip-verify=yes",
		"rediss://h?tls-ca-cert-file=%zz", "rediss-cluster://h/0?tls-server-name=x",
		"rediss-sentinel://h?tls-server-name=x", "redis://:pa?ss@h", NULL
	};
	fence_url	u;
	char		err[256];
	fence_ctx  *c = NULL;
	int			i,
				rc = 1;

	for (i = 0; bad[i]; i++)
	{
		err[0] = '\0';
		if (fence_parse_url(bad[i], &u, err, sizeof(err)) != FENCE_ERR || err[0] == '\0')
		{
			snprintf(tap_why, sizeof(tap_why), "accepted bad URL \"%s\"", bad[i]);
			return 1;
		}
	}
	/* and through the context: an argument error, not an I/O error */
	c = fence_connect("redis//nope");
	CHECK(c != NULL && c->err == FENCE_ERR_ARG && strstr(c->errstr, "redis//nope") != NULL);
	rc = 0;
fail:
	fence_free(c);
	return rc;
}

static int
test_duration_good(void)
{
	long long	ms = -1;
	char		err[256];
	int			rc = 1;

	CHECK(fence_parse_duration("250ms", &ms, err, sizeof(err)) == FENCE_OK && ms == 250);
	CHECK(fence_parse_duration("10s", &ms, err, sizeof(err)) == FENCE_OK && ms == 10000);
	CHECK(fence_parse_duration("2m", &ms, err, sizeof(err)) == FENCE_OK && ms == 120000);
	CHECK(fence_parse_duration("1h", &ms, err, sizeof(err)) == FENCE_OK && ms == 3600000);
	CHECK(fence_parse_duration("1500", &ms, err, sizeof(err)) == FENCE_OK && ms == 1500);
	CHECK(fence_parse_duration("0", &ms, err, sizeof(err)) == FENCE_OK && ms == 0);
	rc = 0;
fail:
	return rc;
}

static int
test_duration_malformed(void)
{
	static const char *bad[] = {
		"", "ms", "-5", "+5", "1.5s", "10 s", "10S", "5d", "s10", "10sec",
		"99999999999999999999", "9223372036854775807ms", "10ms ", NULL
	};
	long long	ms;
	char		err[256];
	int			i;

	for (i = 0; bad[i]; i++)
	{
		err[0] = '\0';
		if (fence_parse_duration(bad[i], &ms, err, sizeof(err)) != FENCE_ERR || err[0] == '\0')
		{
			snprintf(tap_why, sizeof(tap_why), "accepted bad duration \"%s\"", bad[i]);
			return 1;
		}
	}
	return 0;
}

/* --- keys ---------------------------------------------------------------- */

char	   *fence_key(const char *resource, const char *suffix);

/* The hash tag Redis Cluster hashes: from the first '{' to the next '}'. */
static int
tag_of(const char *key, char *tag, size_t len)
{
	const char *open = strchr(key, '{'),
			   *close = open ? strchr(open + 1, '}') : NULL;

	if (close == NULL || close == open + 1 || (size_t) (close - open) > len)
		return -1;
	memcpy(tag, open + 1, close - open - 1);
	tag[close - open - 1] = '\0';
	return 0;
}

/*
 * Ordinary names keep "fence:{R}:lock"; braces and '%' are escaped so that
 * the tag is never empty, never cut short, and two names never share keys.
 */
static int
test_key_names(void)
{
	static const char *names[] = {
		"inventory", "}x", "{", "}", "{}", "a{b}c", "}{", "%", "%7D", "%7d",
		"%25", "x}", "{x}y", "\xff\x01 \n", NULL
	};
	char	   *k[4] = {NULL, NULL, NULL, NULL};
	char		t1[4000],
				t2[4000];
	int			i,
				j,
				rc = 1;

	k[0] = fence_key("inventory", "lock");
	CHECK(k[0] && strcmp(k[0], "fence:{inventory}:lock") == 0);
	free(k[0]);
	k[0] = fence_key("}x", "lock");
	CHECK(k[0] && strcmp(k[0], "fence:{%7Dx}:lock") == 0);
	free(k[0]);
	k[0] = fence_key("a{b}%c", "token");
	CHECK(k[0] && strcmp(k[0], "fence:{a%7Bb%7D%25c}:token") == 0);
	free(k[0]);
	k[0] = NULL;
	for (i = 0; names[i]; i++)
	{
		k[0] = fence_key(names[i], "lock");
		k[1] = fence_key(names[i], "token");
		CHECK(k[0] && k[1]);
		/* one non-empty tag for both keys, and nothing after it but ":suffix" */
		CHECK(tag_of(k[0], t1, sizeof(t1)) == 0 && tag_of(k[1], t2, sizeof(t2)) == 0);
		CHECK(strcmp(t1, t2) == 0 && t1[0] != '\0');
		CHECK(strcmp(k[0] + 7 + strlen(t1), "}:lock") == 0);
		for (j = 0; names[j]; j++)
		{
			if (j == i)
				continue;
			k[2] = fence_key(names[j], "lock");
			CHECK(k[2] && strcmp(k[0], k[2]) != 0);
			free(k[2]);
			k[2] = NULL;
		}
		free(k[0]);
		free(k[1]);
		k[0] = k[1] = NULL;
	}
	rc = 0;
fail:
	for (i = 0; i < 4; i++)
		free(k[i]);
	return rc;
}

/*
 * The scripts libfence runs are the files in lua/ byte for byte, header and
 * all (what a client of another language sends must hash the same), the
 * waiting times written into them are those of fence_int.h, and the queue's
 * functions, which each of acquire, release and qlock must carry whole (a
 * Redis script cannot include another), are one text in all three.
 */
#define STR_(x) #x
#define XSTR(x) STR_(x)

static int
test_script_files(void)
{
	static const char *const files[FENCE_NSCRIPTS] = {
		"lua/acquire.lua", "lua/release.lua", "lua/extend.lua", "lua/heal.lua",
		"lua/show.lua", "lua/qlock.lua", "lua/qclaim.lua"
	};
	char		buf[16384];
	int			i;

	for (i = 0; i < FENCE_NSCRIPTS; i++)
	{
		FILE	   *f = fopen(files[i], "rb");
		size_t		n;

		CHECK(f != NULL);
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		CHECK(n > 0 && n < sizeof(buf) - 1);
		CHECK(strcmp(buf, fence_script_source(i)) == 0);
		CHECK(strncmp(buf, "-- ", 3) == 0 && strstr(buf, "\n-- KEYS: ") && strstr(buf, "\n-- Reply: "));
	}
	CHECK(strstr(fence_script_source(FENCE_SCRIPT_ACQUIRE),
				 "'PX', " XSTR(FENCE_HANDOFF_MS) ")\n") != NULL);
	CHECK(strstr(fence_script_source(FENCE_SCRIPT_ACQUIRE),
				 "pttl = " XSTR(FENCE_HANDOFF_MS) "\n") != NULL);
	for (i = FENCE_SCRIPT_ACQUIRE; i < FENCE_NSCRIPTS; i++)
	{
		const char *src = fence_script_source(i);

		if (i != FENCE_SCRIPT_ACQUIRE && i != FENCE_SCRIPT_RELEASE && i != FENCE_SCRIPT_QLOCK)
			continue;
		CHECK(strstr(src, "now + " XSTR(FENCE_WAIT_PLACE_MS) ", o)") != NULL);
		CHECK(strstr(src, "'PEXPIRE', k, " XSTR(FENCE_HANDOFF_MS) ")") != NULL);
	}
	{
		/* acquire's queue functions: from now_ms to the end of hand */
		const char *acquire = fence_script_source(FENCE_SCRIPT_ACQUIRE);
		const char *from = strstr(acquire, "local function now_ms()\n");
		const char *hand = from ? strstr(from, "local function hand(o)\n") : NULL;
		const char *to = hand ? strstr(hand, "\nend\n") : NULL;

		CHECK(to != NULL);
		to += strlen("\nend\n");
		CHECK((size_t) (to - from) < sizeof(buf));
		memcpy(buf, from, (size_t) (to - from));
		buf[to - from] = '\0';
		CHECK(strstr(fence_script_source(FENCE_SCRIPT_RELEASE), buf) != NULL);
		CHECK(strstr(fence_script_source(FENCE_SCRIPT_QLOCK), buf) != NULL);
	}
	return 0;
fail:
	return 1;
}

/* --- Redis ---------------------------------------------------------------- */

static int
test_connect_refused(void)
{
	fence_ctx  *c = fence_connect_timeout("redis://127.0.0.1:1", 1000, 1000);
	int			rc = 1;

	CHECK(c != NULL && c->err == FENCE_ERR_IO && c->errstr[0] != '\0');
	rc = 0;
fail:
	fence_free(c);
	return rc;
}

static int
test_acquire_busy_release(void)
{
	fence_ctx  *a = fence_connect(redis_url),
			   *b = fence_connect(redis_url);
	fence_lease *la = NULL,
			   *lb = NULL;
	const char *res = R("abr");
	long long	t1;
	char	   *owner = NULL;
	int			rc = 1;

	CHECKC(a->err == 0, a);
	CHECKC(b->err == 0, b);
	la = fence_acquire(a, res, 5000);
	CHECKC(la != NULL, a);
	t1 = fence_lease_token(la);
	CHECK(t1 >= 1);
	CHECK(strlen(fence_lease_owner(la)) == 32);
	CHECK(strcmp(fence_lease_resource(la), res) == 0);
	CHECK(fence_lease_state(la) == FENCE_LEASE_HELD);
	owner = rget(key(res, "lock"));
	CHECK(owner && strcmp(owner, fence_lease_owner(la)) == 0);
	CHECK(rnum("PTTL %s", key(res, "lock")) > 4000);

	lb = fence_acquire(b, res, 5000);
	CHECK(lb == NULL && b->err == FENCE_ERR_BUSY);
	CHECK(fence_busy_pttl(b) > 4000 && fence_busy_pttl(b) <= 5000);
	/* the busy attempt took no token */
	free(owner);
	owner = rget(key(res, "token"));
	CHECK(owner && atoll(owner) == t1);

	CHECKC(fence_release(a, la) == FENCE_OK, a);
	CHECK(rnum("EXISTS %s", key(res, "lock")) == 0);
	CHECK(fence_lease_state(la) == FENCE_LEASE_LOST);
	/* a second release is refused: the lease is not held any more */
	CHECK(fence_release(a, la) == FENCE_ERR && a->err == FENCE_ERR_LOST);

	lb = fence_acquire(b, res, 5000);
	CHECKC(lb != NULL, b);
	CHECK(fence_lease_token(lb) == t1 + 1);
	CHECK(strcmp(fence_lease_owner(la), fence_lease_owner(lb)) != 0);
	CHECKC(fence_release(b, lb) == FENCE_OK, b);
	rc = 0;
fail:
	free(owner);
	fence_lease_free(la);
	fence_lease_free(lb);
	fence_free(a);
	fence_free(b);
	return rc;
}

static int
test_extend(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("extend");
	int			rc = 1;

	l = fence_acquire(a, res, 1000);
	CHECKC(l != NULL, a);
	CHECK(rnum("PTTL %s", key(res, "lock")) <= 1000);
	CHECKC(fence_extend(a, l, 20000) == FENCE_OK, a);
	CHECK(rnum("PTTL %s", key(res, "lock")) > 19000);
	CHECK(fence_lease_ttl(l) == 20000);
	CHECKC(fence_extend_owner(a, res, fence_lease_owner(l), 30000) == FENCE_OK, a);
	CHECK(rnum("PTTL %s", key(res, "lock")) > 29000);
	CHECK(fence_extend(a, l, -1) == FENCE_ERR && a->err == FENCE_ERR_ARG);
	CHECKC(fence_release_owner(a, res, fence_lease_owner(l)) == FENCE_OK, a);
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

static int
test_owner_mismatch(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("mismatch");
	char	   *v = NULL;
	long long	pttl;
	int			rc = 1;

	l = fence_acquire(a, res, 10000);
	CHECKC(l != NULL, a);
	CHECK(fence_release_owner(a, res, "not-the-owner") == FENCE_ERR && a->err == FENCE_ERR_LOST);
	CHECK(fence_extend_owner(a, res, "not-the-owner", 60000) == FENCE_ERR && a->err == FENCE_ERR_LOST);
	/* the key is untouched: same owner, TTL not raised */
	v = rget(key(res, "lock"));
	CHECK(v && strcmp(v, fence_lease_owner(l)) == 0);
	pttl = rnum("PTTL %s", key(res, "lock"));
	CHECK(pttl > 0 && pttl <= 10000);

	/* someone else takes over: our release and extend must not touch it */
	rdo("SET %s %s PX 10000", key(res, "lock"), "intruder");
	CHECK(fence_extend(a, l, 10000) == FENCE_ERR && a->err == FENCE_ERR_LOST);
	CHECK(fence_lease_state(l) == FENCE_LEASE_LOST);
	CHECK(fence_release(a, l) == FENCE_ERR && a->err == FENCE_ERR_LOST);
	free(v);
	v = rget(key(res, "lock"));
	CHECK(v && strcmp(v, "intruder") == 0);
	CHECK(fence_release_owner(a, res, "") == FENCE_ERR && a->err == FENCE_ERR_ARG);
	rc = 0;
fail:
	free(v);
	rdo("DEL %s%s", key(res, "lock"), "");
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

long long	fence_drift_ms(long long ttl_ms);

static int
test_bad_arguments(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	char		big[2000];
	int			rc = 1;

	l = fence_acquire(a, "", 1000);
	CHECK(l == NULL && a->err == FENCE_ERR_ARG);
	l = fence_acquire(a, NULL, 1000);
	CHECK(l == NULL && a->err == FENCE_ERR_ARG);
	l = fence_acquire(a, R("args"), 0);
	CHECK(l == NULL && a->err == FENCE_ERR_ARG);
	l = fence_acquire(a, R("args"), -5);
	CHECK(l == NULL && a->err == FENCE_ERR_ARG);
	l = fence_acquire_wait(a, R("args"), 1000, -1);
	CHECK(l == NULL && a->err == FENCE_ERR_ARG);
	/* a TTL not above the drift margin would be lost before it is held */
	CHECK(fence_drift_ms(FENCE_MIN_TTL_MS) < FENCE_MIN_TTL_MS);
	CHECK(fence_drift_ms(FENCE_MIN_TTL_MS - 1) >= FENCE_MIN_TTL_MS - 1);
	l = fence_acquire(a, R("args"), FENCE_MIN_TTL_MS - 1);
	CHECK(l == NULL && a->err == FENCE_ERR_ARG);
	l = fence_acquire(a, R("args"), FENCE_MAX_TTL_MS + 1);
	CHECK(l == NULL && a->err == FENCE_ERR_ARG);
	l = fence_acquire_wait(a, R("args"), 1000, FENCE_MAX_TTL_MS + 1);
	CHECK(l == NULL && a->err == FENCE_ERR_ARG);
	CHECK(fence_extend_owner(a, R("args"), "o", FENCE_MIN_TTL_MS - 1) == FENCE_ERR && a->err == FENCE_ERR_ARG);
	l = fence_acquire(a, R("args"), FENCE_MIN_TTL_MS);
	CHECKC(l != NULL, a);
	fence_lease_free(l);
	l = NULL;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	l = fence_acquire(a, big, 1000);
	CHECK(l == NULL && a->err == FENCE_ERR_ARG);
	big[FENCE_MAX_RESOURCE_LEN + 1] = '\0';
	l = fence_acquire(a, big, 1000);
	CHECK(l == NULL && a->err == FENCE_ERR_ARG);
	big[FENCE_MAX_RESOURCE_LEN] = '\0';
	l = fence_acquire(a, big, 1000);
	CHECKC(l != NULL, a);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = NULL;
	CHECK(strcmp(fence_strerror(FENCE_ERR_STALE), "stale fencing token") == 0);
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

static int
test_acquire_wait(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("wait");
	long long	t0,
				dt;
	int			rc = 1;

	/* holder's lease runs out after 300 ms: the waiter gets it soon after */
	rdo("SET %s %s PX 300", key(res, "lock"), "holder");
	t0 = ms_now();
	l = fence_acquire_wait(a, res, 5000, 3000);
	dt = ms_now() - t0;
	CHECKC(l != NULL, a);
	CHECK(dt >= 250 && dt < 2500);
	fence_release(a, l);
	fence_lease_free(l);

	/* a long holder: give up at the deadline, not before, not long after */
	rdo("SET %s %s PX 10000", key(res, "lock"), "holder");
	t0 = ms_now();
	l = fence_acquire_wait(a, res, 5000, 400);
	dt = ms_now() - t0;
	CHECK(l == NULL && a->err == FENCE_ERR_TIMEOUT);
	CHECK(dt >= 390 && dt < 1500);
	rc = 0;
fail:
	rdo("DEL %s%s", key(res, "lock"), "");
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* --- waiting for a lease ------------------------------------------------- */

/* Waiters in the queue of "resource". */
static long long
queued(const char *resource)
{
	return rnum("ZCARD %s", key(resource, "queue"));
}

/* Wait (at most 10 s) until "n" waiters are in the queue of "resource". */
static int
wait_queued(const char *resource, long long n)
{
	long long	t0 = ms_now();

	while (queued(resource) < n)
	{
		if (ms_now() - t0 > 10000)
			return 0;
		sleep_ms(2);
	}
	return 1;
}

/* How many keys "resource" has in Redis, and whether one lacks an expiry. */
static long long
keys_of(const char *resource, int *forever)
{
	char		pattern[300];
	redisReply *r;
	long long	n = 0;
	size_t		i;

	snprintf(pattern, sizeof(pattern), "fence:{%s}:*", resource);
	r = rcmd("KEYS %s", pattern);
	*forever = 0;
	for (i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++)
	{
		n++;
		if (strcmp(r->element[i]->str, key(resource, "token")) != 0 &&
			rnum("PTTL %s", r->element[i]->str) < 0)
			*forever = 1;
	}
	freeReplyObject(r);
	return n;
}

/*
 * A release wakes the waiter at once: far sooner than its next look of its
 * own (the holder's TTL is long, and a polling waiter sleeps hundreds of
 * ms at a time after a while).  Waiting costs no token.
 */
static int
test_wait_wakes_on_release(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("wake");
	waiter		w = {redis_url, res, 5000, 10000, 0};
	int			started = 0,
				forever;
	long long	t;
	int			rc = 1;

	l = fence_acquire(a, res, 30000);
	CHECKC(l != NULL, a);
	CHECK(waiter_start(&w) == 0);
	started = 1;
	CHECK(wait_queued(res, 1));
	sleep_ms(600);
	CHECK(w.got_ms == 0 && rnum("GET %s", key(res, "token")) == -999);
	t = ms_now();
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	waiter_join(&w);
	started = 0;
	CHECK(w.token == fence_lease_token(l) + 1);
	if (w.got_ms - t > 100)
	{
		snprintf(tap_why, sizeof(tap_why), "waiter acquired %lld ms after the release", w.got_ms - t);
		goto fail;
	}
	/* it released with nobody waiting: only the counter is left */
	CHECK(keys_of(res, &forever) == 1);
	rc = 0;
fail:
	if (started)
		waiter_join(&w);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * Owner names: "NAME/" in front of the random digits, for the leases a
 * context acquires once it has one; a named waiter is woken and handed
 * the lease as fast as any (its wake list is named after its whole id);
 * bad names are refused and change nothing.
 */
static int
test_owner_name(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("name");
	waiter		w = {redis_url, res, 5000, 10000, 0};
	char		err[256],
				long_name[FENCE_MAX_OWNER_NAME + 2];
	char	   *held = NULL;
	int			started = 0;
	long long	t;
	int			rc = 1;

	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	CHECK(fence_check_owner_name("web1:4242:pg_dump", err, sizeof(err)) == FENCE_OK);
	CHECK(fence_check_owner_name("a.b", err, sizeof(err)) == FENCE_ERR && strstr(err, "'.'") != NULL);
	CHECK(fence_check_owner_name("a/b", err, sizeof(err)) == FENCE_ERR);
	CHECK(fence_check_owner_name("a b", err, sizeof(err)) == FENCE_ERR);
	CHECK(fence_check_owner_name("", err, sizeof(err)) == FENCE_ERR);
	CHECK(fence_check_owner_name(long_name, err, sizeof(err)) == FENCE_ERR);
	long_name[FENCE_MAX_OWNER_NAME] = '\0';
	CHECK(fence_check_owner_name(long_name, err, sizeof(err)) == FENCE_OK);

	CHECKC(fence_set_owner_name(a, "holder:1") == FENCE_OK, a);
	CHECK(fence_set_owner_name(a, "bad name") == FENCE_ERR && a->err == FENCE_ERR_ARG);
	l = fence_acquire(a, res, 30000);
	CHECKC(l != NULL, a);
	CHECK(strncmp(fence_lease_owner(l), "holder:1/", 9) == 0 &&
		  strlen(fence_lease_owner(l)) == 9 + 32 &&
		  strspn(fence_lease_owner(l) + 9, "0123456789abcdef") == 32);
	held = rget(key(res, "lock"));
	CHECK(held != NULL && strcmp(held, fence_lease_owner(l)) == 0);
	w.name = long_name;
	CHECK(waiter_start(&w) == 0);
	started = 1;
	CHECK(wait_queued(res, 1));
	t = ms_now();
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	waiter_join(&w);
	started = 0;
	CHECK(w.token == fence_lease_token(l) + 1);
	CHECK(strncmp(w.owner, long_name, FENCE_MAX_OWNER_NAME) == 0 && w.owner[FENCE_MAX_OWNER_NAME] == '/');
	if (w.got_ms - t > 100)
	{
		snprintf(tap_why, sizeof(tap_why), "named waiter acquired %lld ms after the release", w.got_ms - t);
		goto fail;
	}
	fence_lease_free(l);
	l = NULL;
	/* no name again: the digits alone */
	CHECKC(fence_set_owner_name(a, NULL) == FENCE_OK, a);
	l = fence_acquire(a, res, 30000);
	CHECKC(l != NULL, a);
	CHECK(strlen(fence_lease_owner(l)) == 32);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	if (started)
		waiter_join(&w);
	free(held);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * Waiters are served in the order they came, and once all are through no
 * queue, place or wake list is left behind.
 */
static int
test_wait_fifo(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("fifo");
	int			order = 0,
				started = 0,
				forever,
				i;
	waiter		w[4];
	int			rc = 1;

	l = fence_acquire(a, res, 30000);
	CHECKC(l != NULL, a);
	for (i = 0; i < 4; i++)
	{
		w[i] = (waiter) {redis_url, res, 5000, 10000, 20, 0, &order};
		CHECK(waiter_start(&w[i]) == 0);
		started++;
		CHECK(wait_queued(res, i + 1));
	}
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	for (; started > 0; started--)
		waiter_join(&w[4 - started]);
	for (i = 0; i < 4; i++)
	{
		if (w[i].nth != i + 1 || w[i].token != fence_lease_token(l) + 1 + i)
		{
			snprintf(tap_why, sizeof(tap_why), "waiter %d came %d-th with token %lld (err %d: %s)",
					 i + 1, w[i].nth, w[i].token, w[i].err, w[i].errstr);
			goto fail;
		}
	}
	CHECK(keys_of(res, &forever) == 1);
	rc = 0;
fail:
	while (started > 0)
		waiter_join(&w[4 - started--]);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * A holder that releases and comes straight back for the lease queues
 * behind the waiter it released to: it cannot starve it.
 */
static int
test_wait_no_barging(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL,
			   *again = NULL;
	const char *res = R("barge");
	waiter		w = {redis_url, res, 5000, 10000, 50};
	int			started = 0;
	int			rc = 1;

	l = fence_acquire(a, res, 30000);
	CHECKC(l != NULL, a);
	CHECK(waiter_start(&w) == 0);
	started = 1;
	CHECK(wait_queued(res, 1));
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	again = fence_acquire_wait(a, res, 5000, 5000);
	CHECKC(again != NULL, a);
	waiter_join(&w);
	started = 0;
	CHECK(w.token == fence_lease_token(l) + 1);
	CHECK(fence_lease_token(again) == w.token + 1);
	CHECKC(fence_release(a, again) == FENCE_OK, a);
	rc = 0;
fail:
	if (started)
		waiter_join(&w);
	fence_lease_free(l);
	fence_lease_free(again);
	fence_free(a);
	return rc;
}

typedef struct pinger
{
	const char *res;
	int			rounds;
	long long	worst_ms;		/* longest acquire */
	int			failed;
	char		why[FENCE_ERRSTR_LEN];
} pinger;

static void *
ping_main(void *arg)
{
	pinger	   *p = arg;
	fence_ctx  *c = fence_connect(redis_url);
	int			i;

	for (i = 0; i < p->rounds && !p->failed; i++)
	{
		long long	t0 = ms_now();
		fence_lease *l = fence_acquire_wait(c, p->res, 5000, 5000);

		if (l == NULL || fence_release(c, l) != FENCE_OK)
		{
			p->failed = 1;
			snprintf(p->why, sizeof(p->why), "%s", c->errstr);
		}
		else if (ms_now() - t0 > p->worst_ms)
			p->worst_ms = ms_now() - t0;
		fence_lease_free(l);
	}
	fence_free(c);
	return NULL;
}

/*
 * No wake-up is lost: two threads that release and come straight back,
 * a few hundred times.  A release that came between a waiter's busy
 * attempt and its BLPOP, if it were missed, would leave the waiter asleep
 * until its next look (FENCE_WAIT_BEAT_MS, as the holder's TTL is long).
 */
static int
test_wait_no_lost_wakeup(void)
{
	const char *res = R("pingpong");
	pinger		p[2] = {{res, 300}, {res, 300}};
	pthread_t	th[2];
	int			i,
				rc = 1;

	for (i = 0; i < 2; i++)
		CHECK(pthread_create(&th[i], NULL, ping_main, &p[i]) == 0);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 2; i++)
	{
		if (p[i].failed || p[i].worst_ms >= FENCE_WAIT_BEAT_MS / 2)
		{
			snprintf(tap_why, sizeof(tap_why), "thread %d: longest acquire %lld ms %s", i,
					 p[i].worst_ms, p[i].why);
			goto fail;
		}
	}
	rc = 0;
fail:
	return rc;
}

/* Fork a process that waits for "res" (30 s); its pid, or -1. */
static pid_t
fork_waiter(const char *res)
{
	pid_t		pid = fork();

	if (pid == 0)
	{
		fence_ctx  *c = fence_connect(redis_url);
		fence_lease *l = fence_acquire_wait(c, res, 30000, 30000);

		_exit(l != NULL ? 0 : 1);
	}
	return pid;
}

/*
 * BLPOPs the ACL refused so far; -1 where the server does not count them
 * (rejected_calls came with Redis 6.2).
 */
static long long
blpop_refused(void)
{
	redisReply *r = rcmd("INFO commandstats");
	const char *p = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, "cmdstat_") : NULL;
	long long	n = 0;

	if (p != NULL && strstr(p, "rejected_calls=") == NULL)
		n = -1;
	else if (p != NULL && (p = strstr(p, "cmdstat_blpop:")) != NULL &&
			 (p = strstr(p, "rejected_calls=")) != NULL)
		n = atoll(p + 15);
	freeReplyObject(r);
	return n;
}

/* Clients blocked in Redis (BLPOP), -1 if unknown. */
static int
blocked_clients(void)
{
	redisReply *r = rcmd("INFO clients");
	const char *p = r && r->type == REDIS_REPLY_STRING ? strstr(r->str, "blocked_clients:") : NULL;
	int			n = p != NULL ? atoi(p + 16) : -1;

	freeReplyObject(r);
	return n;
}

/*
 * A waiter killed with -9 before it was handed the lock holds nobody up
 * for long: the lock handed to it lapses after FENCE_HANDOFF_MS, and the
 * next waiter takes it.
 */
static int
test_wait_dead_waiter(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("deadwaiter");
	waiter		w = {redis_url, res, 5000, 10000, 0};
	char	   *owner = NULL;
	pid_t		pid = -1;
	int			started = 0;
	long long	t,
				t0;
	int			rc = 1;

	l = fence_acquire(a, res, 30000);
	CHECKC(l != NULL, a);
	pid = fork_waiter(res);
	CHECK(pid > 0);
	CHECK(wait_queued(res, 1));
	CHECK(waiter_start(&w) == 0);
	started = 1;
	CHECK(wait_queued(res, 2));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	pid = -1;
	/*
	 * Redis noticed the closed connection: only the thread's BLPOP is left
	 * (a waiter that dies while the lock is handed to it is a holder that
	 * died: see scripts.c).
	 */
	t0 = ms_now();
	while (blocked_clients() > 1)
	{
		CHECK(ms_now() - t0 < 10000);
		sleep_ms(2);
	}
	t = ms_now();
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	/* handed to the dead waiter, for a short while */
	owner = rget(key(res, "lock"));
	CHECK(owner != NULL && strcmp(owner, fence_lease_owner(l)) != 0);
	CHECK(w.got_ms == 0 && rnum("PTTL %s", key(res, "lock")) <= FENCE_HANDOFF_MS);
	waiter_join(&w);
	started = 0;
	CHECK(w.token == fence_lease_token(l) + 1);
	if (w.got_ms - t < FENCE_HANDOFF_MS - 20 ||
		w.got_ms - t > FENCE_HANDOFF_MS + FENCE_WAIT_BEAT_MS + 500)
	{
		snprintf(tap_why, sizeof(tap_why), "the next waiter acquired %lld ms after the release",
				 w.got_ms - t);
		goto fail;
	}
	CHECK(queued(res) == 0);
	rc = 0;
fail:
	if (pid > 0)
	{
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (started)
		waiter_join(&w);
	free(owner);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * A holder killed with -9 wakes nobody: its waiters take the lease when it
 * expires, first come first served, not at their next look
 * (FENCE_WAIT_BEAT_MS, which 1300 ms is no multiple of).
 */
static int
test_wait_holder_dies(void)
{
	const char *res = R("deadholder");
	waiter		w[2] = {{redis_url, res, 5000, 10000, 20}, {redis_url, res, 5000, 10000, 0}};
	int			order = 0,
				started = 0,
				fds[2] = {-1, -1},
				i;
	long long	token = 0,
				expiry;
	pid_t		pid = -1;
	int			rc = 1;

	CHECK(pipe(fds) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
	{
		fence_ctx  *c = fence_connect(redis_url);
		fence_lease *l = fence_acquire(c, res, 1300);

		token = l ? fence_lease_token(l) : 0;
		if (write(fds[1], &token, sizeof(token)) != sizeof(token))
			_exit(1);
		pause();
		_exit(0);
	}
	CHECK(read(fds[0], &token, sizeof(token)) == sizeof(token) && token > 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	pid = -1;
	for (i = 0; i < 2; i++)
	{
		w[i].order = &order;
		CHECK(waiter_start(&w[i]) == 0);
		started++;
		CHECK(wait_queued(res, i + 1));
	}
	expiry = ms_now() + rnum("PTTL %s", key(res, "lock"));
	for (; started > 0; started--)
		waiter_join(&w[2 - started]);
	CHECK(w[0].nth == 1 && w[0].token == token + 1);
	CHECK(w[1].nth == 2 && w[1].token == token + 2);
	if (w[0].got_ms < expiry - 5 || w[0].got_ms > expiry + 150)
	{
		snprintf(tap_why, sizeof(tap_why), "the first waiter acquired %lld ms after the lease expired",
				 w[0].got_ms - expiry);
		goto fail;
	}
	rc = 0;
fail:
	if (pid > 0)
	{
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	while (started > 0)
		waiter_join(&w[2 - started--]);
	if (fds[0] >= 0)
	{
		close(fds[0]);
		close(fds[1]);
	}
	return rc;
}

/*
 * A waiter that gives the lease back after it was handed to it (here: no
 * replica acknowledged it, FENCE_ERR_REPLICAS) passes it on to the next
 * waiter at once.
 */
static int
test_wait_gives_up_passes_on(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("passon");
	waiter		w[2] = {{redis_url, res, 5000, 10000, 0, 1}, {redis_url, res, 5000, 10000, 0}};
	int			started = 0,
				i;
	int			rc = 1;

	l = fence_acquire(a, res, 30000);
	CHECKC(l != NULL, a);
	for (i = 0; i < 2; i++)
	{
		CHECK(waiter_start(&w[i]) == 0);
		started++;
		CHECK(wait_queued(res, i + 1));
	}
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	for (; started > 0; started--)
		waiter_join(&w[2 - started]);
	CHECK(w[0].token == 0 && w[0].err == FENCE_ERR_REPLICAS);
	/* the first took a token, then gave the lock back */
	CHECK(w[1].token == fence_lease_token(l) + 2);
	if (w[1].got_ms - w[0].got_ms > 100)
	{
		snprintf(tap_why, sizeof(tap_why), "the next waiter acquired %lld ms after the first gave up",
				 w[1].got_ms - w[0].got_ms);
		goto fail;
	}
	rc = 0;
fail:
	while (started > 0)
		waiter_join(&w[2 - started--]);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * An ACL that does not allow BLPOP: waiters sleep instead of blocking, and
 * still get the lease, in order, at their next look.
 */
static int
test_wait_without_blpop(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("noblpop");
	const char *user = R("noblpop");
	fence_url	u;
	char		url[512],
				err[256];
	waiter		w = {url, res, 5000, 10000, 0};
	int			started = 0;
	long long	t,
				refused;
	redisReply *r;
	int			rc = 1;

	memset(&u, 0, sizeof(u));
	r = rcmd("ACL SETUSER %s on >pw ~* %s +@all -blpop", user, acl_channels());
	CHECK(r && r->type == REDIS_REPLY_STATUS);
	freeReplyObject(r);
	CHECK(fence_parse_url(redis_url, &u, err, sizeof(err)) == FENCE_OK);
	snprintf(url, sizeof(url), "redis://%s:pw@%s:%d", user, u.host, u.port);
	l = fence_acquire(a, res, 30000);
	CHECKC(l != NULL, a);
	refused = blpop_refused();
	CHECK(waiter_start(&w) == 0);
	started = 1;
	CHECK(wait_queued(res, 1));
	t = ms_now();
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	waiter_join(&w);
	started = 0;
	CHECK(w.token == fence_lease_token(l) + 1);
	CHECK(w.got_ms - t <= FENCE_WAIT_BEAT_MS + 500);
	/* Redis 6.0 counts no refusals: the waiter's timing above is the check */
	CHECK(refused < 0 || blpop_refused() > refused);
	rc = 0;
fail:
	if (started)
		waiter_join(&w);
	freeReplyObject(rcmd("ACL DELUSER %s", user));
	fence_url_free(&u);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * A handover costs Redis little: the acquire a woken waiter sends behind
 * its BLPOP finds the lock handed to it and only sets its TTL and takes a
 * token (it used to run the busy path, TYPE, TIME and
 * all, between the release and the waiter's wake-up).  MONITOR shows the
 * commands each script runs, one script's together: those of the acquire
 * that ran after the release must be no more than EXISTS, SET NX, GET
 * (counter), GET (lock), SET and INCR, and none of TYPE, TIME, ZRANGE; the
 * release that handed the lock over deletes nothing (its SET overwrites).
 */
static int
test_handover_commands(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("handover");
	waiter		w = {redis_url, res, 5000, 10000, 0};
	int			started = 0;
	fence_url	u;
	char		err[256],
				marker[64],
				lock[300],
				token[300],
				ran[4][512];
	redisContext *mon = NULL;
	redisReply *r = NULL;
	int			nran[2] = {0, 0},
				which = -1,
				seen = 0,
				rc = 1;

	memset(&u, 0, sizeof(u));
	snprintf(lock, sizeof(lock), "\"%s\"", key(res, "lock"));
	snprintf(token, sizeof(token), "\"%s\"", key(res, "token"));
	snprintf(marker, sizeof(marker), "handover-end-%d", (int) getpid());
	l = fence_acquire(a, res, 30000);
	CHECKC(l != NULL, a);
	CHECK(waiter_start(&w) == 0);
	started = 1;
	CHECK(wait_queued(res, 1));
	CHECK(fence_parse_url(redis_url, &u, err, sizeof(err)) == FENCE_OK);
	mon = redisConnect(u.host, u.port);
	CHECK(mon != NULL && !mon->err);
	r = redisCommand(mon, "MONITOR");
	CHECK(r != NULL && r->type == REDIS_REPLY_STATUS);
	freeReplyObject(r);
	r = NULL;
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	waiter_join(&w);
	started = 0;
	CHECK(w.token == fence_lease_token(l) + 1);
	freeReplyObject(rcmd("PING %s", marker));

	/*
	 * Lines "TIME [0 CLIENT] "CMD" ARGS...", a script's commands as
	 * [0 lua] after its EVALSHA: the release's (its lock key, no token
	 * key) is script 0, the waiter's acquire after it script 1.
	 */
	{
		struct timeval tv = {10, 0};

		redisSetTimeout(mon, tv);
	}
	while (redisGetReply(mon, (void **) &r) == REDIS_OK && r != NULL)
	{
		const char *line = r->type == REDIS_REPLY_STATUS ? r->str : "";

		if (strstr(line, marker) != NULL)
			break;
		if (strstr(line, "\"EVALSHA\"") != NULL || strstr(line, "\"EVAL\"") != NULL)
		{
			which = -1;
			if (seen == 0 && strstr(line, lock) != NULL && strstr(line, token) == NULL)
				which = 0, seen = 1;
			else if (seen == 1 && strstr(line, token) != NULL)
				which = 1, seen = 2;
		}
		else if (strstr(line, " lua] ") != NULL && which >= 0)
		{
			const char *cmd = strstr(line, " lua] ") + 6;

			if (which == 1 && nran[1] < 4)
				snprintf(ran[nran[1]], sizeof(ran[0]), "%.60s", cmd);
			nran[which]++;
			if (which == 1 ? (strncmp(cmd, "\"TYPE\"", 6) == 0 || strncmp(cmd, "\"TIME\"", 6) == 0 ||
							  strncmp(cmd, "\"ZRANGE", 7) == 0) :
				strncmp(cmd, "\"DEL\"", 5) == 0)
			{
				snprintf(tap_why, sizeof(tap_why), "the %s ran %.80s",
						 which == 0 ? "release that handed over" : "woken waiter's acquire", cmd);
				goto fail;
			}
		}
		else
			which = -1;
		freeReplyObject(r);
		r = NULL;
	}
	if (seen != 2 || nran[1] > 6)
	{
		snprintf(tap_why, sizeof(tap_why), "%s (the acquire ran %d commands: %.50s %.50s %.50s)",
				 seen != 2 ? "MONITOR did not show the release and the acquire" : "too many commands",
				 nran[1], nran[1] > 0 ? ran[0] : "", nran[1] > 1 ? ran[1] : "",
				 nran[1] > 2 ? ran[2] : "");
		goto fail;
	}
	rc = 0;
fail:
	freeReplyObject(r);
	if (started)
		waiter_join(&w);
	if (mon != NULL)
		redisFree(mon);
	fence_url_free(&u);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* Tokens above 2^53 stay exact; INCR at 2^63-1 is an error, not a wrap. */
static int
test_counter_exact(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("exact");
	int			rc = 1;

	rdo("SET %s %s", key(res, "token"), "9007199254740993");
	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	CHECK(fence_lease_token(l) == 9007199254740994LL);
	fence_release(a, l);
	fence_lease_free(l);

	rdo("SET %s %s", key(res, "token"), "9223372036854775806");
	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	CHECK(fence_lease_token(l) == 9223372036854775807LL);
	fence_release(a, l);
	fence_lease_free(l);

	l = fence_acquire(a, res, 5000);
	CHECK(l == NULL && a->err == FENCE_ERR_OVERFLOW);
	/* nothing left behind: no lock, counter unchanged */
	CHECK(rnum("EXISTS %s", key(res, "lock")) == 0);
	{
		char	   *v = rget(key(res, "token"));
		int			same = v && strcmp(v, "9223372036854775807") == 0;

		free(v);
		CHECK(same);
	}
	rc = 0;
fail:
	rdo("DEL %s %s", key(res, "token"), key(res, "lock"));
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * Keys in a state fence never writes: a counter that is not a canonical
 * positive integer, keys of the wrong type, a lock without expiry.  Each is
 * refused at once with FENCE_ERR_STATE, before the lock is taken, and
 * leaves nothing behind.
 */
static int
test_corrupt_keys(void)
{
	static const char *bad[] = {
		"-5", "-1", "0", "-0", "-9223372036854775808", "abc", "007", "1e3", " 1", "1 ", "1.0", "+1", "",
		"9223372036854775808", "99999999999999999999", "0x10", NULL
	};
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	fence_info	info;
	const char *res = R("corrupt");
	char	   *v = NULL;
	long long	t0;
	int			i,
				rc = 1;

	memset(&info, 0, sizeof(info));
	CHECKC(a->err == 0, a);
	for (i = 0; bad[i]; i++)
	{
		rdo("SET %s %s", key(res, "token"), bad[i]);
		l = fence_acquire(a, res, 5000);
		if (l != NULL || a->err != FENCE_ERR_STATE)
		{
			snprintf(tap_why, sizeof(tap_why), "counter \"%s\": lease %p, err %d: %s",
					 bad[i], (void *) l, a->err, a->errstr);
			goto fail;
		}
		CHECK(rnum("EXISTS %s", key(res, "lock")) == 0);
		v = rget(key(res, "token"));
		CHECK(v && strcmp(v, bad[i]) == 0);
		free(v);
		v = NULL;
		CHECK(fence_show(a, res, &info) == FENCE_ERR && a->err == FENCE_ERR_STATE);
	}
	/* a counter refused while another owner holds the lock: an error, not busy */
	rdo("SET %s %s", key(res, "token"), "0");
	rdo("SET %s %s PX 60000", key(res, "lock"), "someone");
	CHECK(fence_acquire(a, res, 5000) == NULL && a->err == FENCE_ERR_STATE);
	v = rget(key(res, "lock"));
	CHECK(v && strcmp(v, "someone") == 0);
	free(v);
	v = rget(key(res, "token"));
	CHECK(v && strcmp(v, "0") == 0);
	free(v);
	v = NULL;
	rdo("DEL %s %s", key(res, "lock"), key(res, "token"));
	/* a counter of another type */
	rdo("DEL %s%s", key(res, "token"), "");
	rdo("HSET %s f %s", key(res, "token"), "1");
	CHECK(fence_acquire(a, res, 5000) == NULL && a->err == FENCE_ERR_STATE);
	CHECK(rnum("EXISTS %s", key(res, "lock")) == 0);
	rdo("DEL %s%s", key(res, "token"), "");

	/* a lock without expiry, or of another type: an error, not "busy" */
	rdo("SET %s %s", key(res, "lock"), "someone");
	t0 = ms_now();
	CHECK(fence_acquire_wait(a, res, 5000, 3000) == NULL && a->err == FENCE_ERR_STATE);
	CHECK(ms_now() - t0 < 1000);
	CHECK(strstr(a->errstr, "expiry") != NULL);
	rdo("DEL %s%s", key(res, "lock"), "");
	rdo("HSET %s owner %s", key(res, "lock"), "someone");
	rdo("PEXPIRE %s %s", key(res, "lock"), "60000");
	t0 = ms_now();
	CHECK(fence_acquire_wait(a, res, 5000, 3000) == NULL && a->err == FENCE_ERR_STATE);
	CHECK(ms_now() - t0 < 1000);
	CHECK(fence_show(a, res, &info) == FENCE_ERR && a->err == FENCE_ERR_STATE);
	CHECK(fence_release_owner(a, res, "someone") == FENCE_ERR && a->err == FENCE_ERR_STATE);
	CHECK(fence_extend_owner(a, res, "someone", 5000) == FENCE_ERR && a->err == FENCE_ERR_STATE);
	rdo("DEL %s%s", key(res, "lock"), "");
	/* no counter was created along the way */
	CHECK(rnum("EXISTS %s", key(res, "token")) == 0);
	/* and a sound state still works */
	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	CHECK(fence_lease_token(l) == 1);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	free(v);
	fence_info_free(&info);
	rdo("DEL %s %s", key(res, "lock"), key(res, "token"));
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* Redis's count of calls to COMMAND (INFO commandstats), or -1. */
static long long
calls_of(const char *command)
{
	redisReply *r = rcmd("INFO commandstats");
	char		pat[64];
	const char *p;
	long long	n = -1;

	snprintf(pat, sizeof(pat), "cmdstat_%s:calls=", command);
	if (r && r->type == REDIS_REPLY_STRING)
	{
		p = strstr(r->str, pat);
		n = p ? atoll(p + strlen(pat)) : 0;
	}
	freeReplyObject(r);
	return n;
}

/*
 * An acquire of a free lock with a sound counter reads nothing
 * before its INCR (the counter used to be checked with TYPE and GET on every
 * call, half of the script's cost).  Redis counts the commands a script
 * runs: 200 such cycles must not add a TYPE or a GET per acquire (release
 * runs one GET; other tests may run beside this one, hence the margin).
 */
static int
test_acquire_reads_nothing(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("fastpath");
	long long	type0,
				get0,
				token = 0;
	int			i,
				rc = 1;

	CHECKC(a->err == 0, a);
	/* once to load the script and to create the counter */
	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL && fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = NULL;
	type0 = calls_of("type");
	get0 = calls_of("get");
	CHECK(type0 >= 0 && get0 >= 0);
	for (i = 0; i < 200; i++)
	{
		l = fence_acquire(a, res, 5000);
		CHECKC(l != NULL, a);
		CHECK(fence_lease_token(l) > token);
		token = fence_lease_token(l);
		CHECKC(fence_release(a, l) == FENCE_OK, a);
		fence_lease_free(l);
		l = NULL;
	}
	CHECK(token == 201);
	if (calls_of("type") - type0 >= 50 || calls_of("get") - get0 >= 250)
	{
		snprintf(tap_why, sizeof(tap_why), "200 cycles ran %lld TYPE and %lld GET",
				 calls_of("type") - type0, calls_of("get") - get0);
		goto fail;
	}
	rc = 0;
fail:
	rdo("DEL %s %s", key(res, "lock"), key(res, "token"));
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

static int
test_noscript_fallback(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("noscript");
	int			rc = 1;

	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	/* the server forgets every script; the next EVALSHA gets NOSCRIPT */
	freeReplyObject(rcmd("SCRIPT FLUSH"));
	CHECKC(fence_extend(a, l, 5000) == FENCE_OK, a);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* A number of INFO stats ("total_writes_processed"), or -1 when none. */
static long long
info_stat(const char *name)
{
	redisReply *r = rcmd("INFO stats");
	char		pat[64];
	const char *p;
	long long	n = -1;

	snprintf(pat, sizeof(pat), "\n%s:", name);
	if (r && r->type == REDIS_REPLY_STRING && (p = strstr(r->str, pat)) != NULL)
		n = atoll(p + strlen(pat));
	freeReplyObject(r);
	return n;
}

/*
 * A worker loop's step, fence_release_acquire, gives one lease
 * back and takes the next in one write on a single node: Redis answers
 * both scripts with one write of its own (its total_writes_processed
 * grows by one a step, where two calls make two), and runs the release
 * first.
 */
static int
test_release_acquire(void)
{
	fence_ctx  *a = fence_connect(redis_url),
			   *b = NULL;
	fence_lease *l = NULL,
			   *next = NULL,
			   *other = NULL;
	const char *r1 = R("relacq-1"),
			   *r2 = R("relacq-2");
	long long	t1,
				w0,
				w1;
	int			released = -1,
				i,
				rc = 1;
	char	   *v = NULL;

	CHECKC(a->err == 0, a);
	/* the loop's first step: nothing to give back */
	next = fence_release_acquire(a, NULL, r1, 5000, 0, &released);
	CHECKC(next != NULL && released == FENCE_OK, a);
	l = next;
	t1 = fence_lease_token(l);

	/* r1 given back, r2 taken */
	next = fence_release_acquire(a, l, r2, 5000, 0, &released);
	CHECKC(next != NULL, a);
	CHECK(released == FENCE_OK && a->err == 0);
	CHECK(fence_lease_state(l) == FENCE_LEASE_LOST);
	CHECK(rnum("EXISTS %s", key(r1, "lock")) == 0);
	v = rget(key(r2, "lock"));
	CHECK(v != NULL && strcmp(v, fence_lease_owner(next)) == 0);
	free(v);
	v = NULL;
	fence_lease_free(l);
	l = next;

	/* the same resource again: the release runs first, so it is free */
	next = fence_release_acquire(a, l, r2, 5000, 0, &released);
	CHECKC(next != NULL && released == FENCE_OK, a);
	CHECK(fence_lease_token(next) == fence_lease_token(l) + 1);
	fence_lease_free(l);
	l = next;

	/* one write a step, where two calls are two (other tests may write
	 * meanwhile: a margin) */
	w0 = info_stat("total_writes_processed");
	for (i = 0; i < 40; i++)
	{
		next = fence_release_acquire(a, l, i % 2 ? r2 : r1, 5000, 0, &released);
		CHECKC(next != NULL && released == FENCE_OK, a);
		fence_lease_free(l);
		l = next;
	}
	w1 = info_stat("total_writes_processed");
	if (w0 >= 0 && w1 - w0 > 55)
	{
		snprintf(tap_why, sizeof(tap_why), "40 steps: Redis wrote %lld times", w1 - w0);
		goto fail;
	}

	/* a busy next lease: NULL and FENCE_ERR_BUSY, the old one given back */
	b = fence_connect(redis_url);
	CHECKC(b->err == 0, b);
	other = fence_acquire(b, r1, 5000);
	CHECKC(other != NULL, b);
	next = fence_release_acquire(a, l, r1, 5000, 0, &released);
	CHECK(next == NULL && a->err == FENCE_ERR_BUSY && released == FENCE_OK);
	CHECK(rnum("EXISTS %s", key(r2, "lock")) == 0);
	fence_lease_free(l);
	l = NULL;
	CHECKC(fence_release(b, other) == FENCE_OK, b);
	fence_lease_free(other);
	other = NULL;

	/*
	 * The lease to give back was lost (it expired, another owner took it):
	 * the release touches nothing of the new owner's and says so, and the
	 * acquire is still answered as it would be alone.
	 */
	l = fence_acquire(a, r1, 5000);
	CHECKC(l != NULL, a);
	rdo("SET %s someone-else PX 5000", key(r1, "lock"), NULL);
	next = fence_release_acquire(a, l, r2, 5000, 0, &released);
	CHECKC(next != NULL && a->err == 0, a);
	CHECK(released == FENCE_ERR_LOST);
	CHECK(fence_lease_token(next) > t1);
	CHECK(fence_lease_state(l) == FENCE_LEASE_LOST);
	v = rget(key(r1, "lock"));
	CHECK(v != NULL && strcmp(v, "someone-else") == 0);
	free(v);
	v = NULL;
	fence_lease_free(l);
	l = next;
	/* lost, and the next lease busy: each told */
	rdo("SET %s someone-else PX 5000", key(r2, "lock"), NULL);
	next = fence_release_acquire(a, l, r1, 5000, 0, &released);
	CHECK(next == NULL && a->err == FENCE_ERR_BUSY && released == FENCE_ERR_LOST);
	fence_lease_free(l);
	l = NULL;
	rdo("DEL %s %s", key(r1, "lock"), key(r2, "lock"));

	/* arguments refused: nothing sent, the old lease still held */
	l = fence_acquire(a, r1, 5000);
	CHECKC(l != NULL, a);
	next = fence_release_acquire(a, l, "", 5000, 0, &released);
	CHECK(next == NULL && a->err == FENCE_ERR_ARG && released == FENCE_ERR_ARG);
	CHECK(rnum("EXISTS %s", key(r1, "lock")) == 1);
	/* and with a wait: the next lease is handed over by its holder's release */
	other = fence_acquire(b, r2, 5000);
	CHECKC(other != NULL, b);
	rdo("PEXPIRE %s 300", key(r2, "lock"), NULL);
	next = fence_release_acquire(a, l, r2, 5000, 3000, &released);
	CHECKC(next != NULL && released == FENCE_OK, a);
	CHECK(rnum("EXISTS %s", key(r1, "lock")) == 0);
	CHECKC(fence_release(a, next) == FENCE_OK, a);
	rc = 0;
fail:
	free(v);
	rdo("DEL %s %s", key(r1, "lock"), key(r2, "lock"));
	if (next != l)
		fence_lease_free(next);
	fence_lease_free(l);
	fence_lease_free(other);
	fence_free(a);
	fence_free(b);
	return rc;
}

/* Owner ids stay unique across fork(): the child must not reuse the pool. */
static int
test_owner_after_fork(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	char		child_owner[64] = "";
	int			fds[2] = {-1, -1};
	pid_t		pid;
	int			status,
				rc = 1;

	CHECKC(a->err == 0, a);
	/* fill the pool in the parent first */
	l = fence_acquire(a, R("fork-p0"), 5000);
	CHECKC(l != NULL, a);
	fence_release(a, l);
	fence_lease_free(l);
	l = NULL;
	CHECK(pipe(fds) == 0);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
	{
		/* a fresh context in the child */
		fence_ctx  *c = fence_connect(redis_url);
		fence_lease *cl;
		ssize_t		n = 0;

		(void) a;
		cl = fence_acquire(c, R("fork-c"), 5000);
		if (cl != NULL)
			n = write(fds[1], fence_lease_owner(cl), 32);
		(void) n;
		fence_free(c);
		/* and the inherited one (the parent waits meanwhile, so the shared
		 * socket is the child's alone): its pool must be refilled */
		cl = fence_acquire(a, R("fork-c2"), 5000);
		if (cl != NULL)
			n = write(fds[1], fence_lease_owner(cl), 32);
		_exit(0);
	}
	close(fds[1]);
	fds[1] = -1;
	{
		size_t		got = 0;
		ssize_t		n;

		while (got < 64 && (n = read(fds[0], child_owner + got, 64 - got)) > 0)
			got += (size_t) n;
		CHECK(got == 64);
	}
	waitpid(pid, &status, 0);
	l = fence_acquire(a, R("fork-p"), 5000);
	CHECKC(l != NULL, a);
	CHECK(strncmp(child_owner + 32, fence_lease_owner(l), 32) != 0);
	CHECK(strncmp(child_owner, fence_lease_owner(l), 32) != 0);
	fence_release(a, l);
	rc = 0;
fail:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	rdo("DEL %s %s", key(R("fork-c"), "lock"), key(R("fork-c2"), "lock"));
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* The inodes of this process's sockets (a connection is one inode). */
static int
socket_inodes(unsigned long *out, int max)
{
	int			fds[64],
				n = list_sockets(fds, 64),
				k = 0;

	for (int i = 0; i < n && k < max; i++)
	{
		char		path[64],
					target[64];
		ssize_t		len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		out[k++] = strtoul(target + strlen("socket:["), NULL, 10);
	}
	return k;
}

/* Fork as asked: fork(), or the bare system call (no atfork handlers). */
static pid_t
fork_as(int raw)
{
	if (!raw)
		return fork();
#ifdef SYS_fork
	return (pid_t) syscall(SYS_fork);
#else
	return (pid_t) syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#endif
}

/*
 * A child that uses a context it inherited through fork() connects anew
 * and never writes on its parent's connection (the two would interleave
 * their requests on one socket), and draws owner ids of its own: libfence
 * knows the process it runs in without a getpid() per call (pid.c), and
 * must know it after every kind of fork, the bare system call included,
 * which runs no pthread_atfork handler (as _Fork() and other runtimes'
 * clones do not).  The child looks at its own sockets, so a connection
 * another test makes meanwhile cannot pass for its own.  Exit status of
 * the child: 0, or which check failed.
 */
static int
fork_child_anew(int raw)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	char		owner[33] = "";
	int			fds[2] = {-1, -1};
	pid_t		pid;
	int			status,
				rc = 1;

	CHECKC(a->err == 0, a);
	/* the parent's connection is open, its pool of random bytes filled */
	l = fence_acquire(a, R("forkraw-p0"), 5000);
	CHECKC(l != NULL && fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = NULL;
	CHECK(pipe(fds) == 0);
	fflush(stdout);
	pid = fork_as(raw);
	CHECK(pid >= 0);
	if (pid == 0)
	{
		unsigned long before[64],
					after[64];
		int			nb = socket_inodes(before, 64),
					na,
					fresh = 0;
		fence_lease *cl = fence_acquire(a, R("forkraw-c"), 5000);

		if (cl == NULL || fence_release(a, cl) != FENCE_OK)
			_exit(2);
		if (write(fds[1], fence_lease_owner(cl), 32) != 32)
			_exit(3);
		na = socket_inodes(after, 64);
		for (int i = 0; i < na; i++)
		{
			int			known = 0;

			for (int j = 0; j < nb; j++)
				known |= after[i] == before[j];
			fresh += !known;
		}
		_exit(fresh == 1 ? 0 : 4);
	}
	close(fds[1]);
	fds[1] = -1;
	{
		size_t		got = 0;
		ssize_t		n;

		while (got < 32 && (n = read(fds[0], owner + got, 32 - got)) > 0)
			got += (size_t) n;
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
	{
		snprintf(tap_why, sizeof(tap_why), "child: %s",
				 !WIFEXITED(status) ? "killed" : WEXITSTATUS(status) == 2 ? "acquire failed" :
				 WEXITSTATUS(status) == 4 ? "used its parent's connection" : "pipe");
		goto fail;
	}
	/* the parent's connection goes on working; its owner ids are its own */
	l = fence_acquire(a, R("forkraw-p"), 5000);
	CHECKC(l != NULL, a);
	CHECK(strncmp(owner, fence_lease_owner(l), 32) != 0);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

static int
test_fork_child_anew(void)
{
	return fork_child_anew(0);
}

static int
test_raw_fork_child_anew(void)
{
	return fork_child_anew(1);
}

/*
 * Every socket libfence opens (the context's, the heartbeat's, one opened
 * again after a dropped connection) and libpq's is closed on exec, so that
 * a child the application starts holds none of them.
 */
static PGconn *cloexec_pg;

/* A connection opened again after the server dropped ours, and libpq's. */
static void
drop_and_connect_pg(void)
{
	freeReplyObject(rcmd("CLIENT KILL TYPE normal SKIPME yes"));
	cloexec_pg = PQconnectdb("");
}

static int
test_sockets_cloexec(void)
{
	int			rc;

	/* ours, the heartbeat's, PostgreSQL's */
	rc = lease_fds_cloexec(redis_url, 0, drop_and_connect_pg, 3);
	if (rc == 0 && PQstatus(cloexec_pg) != CONNECTION_OK)
	{
		snprintf(tap_why, sizeof(tap_why), "PostgreSQL: %s", PQerrorMessage(cloexec_pg));
		rc = 1;
	}
	PQfinish(cloexec_pg);
	return rc;
}

/*
 * The race: a thread of the application forks and execs while libfence
 * is connecting (testlib.h); a socket that got FD_CLOEXEC only once its
 * connect was over would be caught.  Each connect leaves a socket in
 * TIME_WAIT: not too many of them.
 */
static int
test_cloexec_fork_race(void)
{
	return cloexec_race(redis_url, 0, 3000, 1500, 100, "a Redis socket");
}

/* Calls of "cmd" so far, from INFO commandstats (0 if none). */
static long long
cmd_calls(const char *cmd)
{
	redisReply *r = rcmd("INFO commandstats");
	char		pat[64];
	const char *p;
	long long	n = 0;

	snprintf(pat, sizeof(pat), "cmdstat_%s:calls=", cmd);
	if (r && r->type == REDIS_REPLY_STRING && (p = strstr(r->str, pat)) != NULL)
		n = atoll(p + strlen(pat));
	freeReplyObject(r);
	return n;
}

void		fence_sha1_hex(const void *data, size_t len, char hex[41]);

/*
 * One round trip per operation, even on a fresh connection: the script's
 * SHA is computed locally, so no SCRIPT LOAD is needed once any client has
 * run the script (a NOSCRIPT falls back to EVAL once).
 */
static int
test_round_trips(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("rtt");
	redisReply *r;
	char		sha[41];
	long long	evalsha,
				eval,
				script,
				total;
	int			rc = 1;

	/* our SHA-1 names scripts the way Redis does */
	r = rcmd("SCRIPT LOAD %s", "return 'fence'");
	CHECK(r && r->type == REDIS_REPLY_STRING);
	fence_sha1_hex("return 'fence'", 14, sha);
	CHECK(strcmp(sha, r->str) == 0);
	freeReplyObject(r);

	/* some client has run the scripts before (here: a warm-up) */
	a = fence_connect(redis_url);
	CHECKC(a->err == 0, a);
	l = fence_acquire(a, R("rtt-warm"), 5000);
	CHECKC(l != NULL, a);
	CHECKC(fence_extend(a, l, 5000) == FENCE_OK, a);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = NULL;
	fence_free(a);

	/* a fresh connection: one EVALSHA per operation, nothing else */
	a = fence_connect(redis_url);
	CHECKC(a->err == 0, a);
	evalsha = cmd_calls("evalsha");
	eval = cmd_calls("eval");
	script = cmd_calls("script|load");
	total = evalsha + eval + script;
	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	CHECK(cmd_calls("evalsha") == evalsha + 1);
	CHECK(cmd_calls("script|load") == script);	/* no SCRIPT LOAD */
	CHECKC(fence_extend(a, l, 5000) == FENCE_OK, a);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	CHECK(cmd_calls("evalsha") == evalsha + 3);
	CHECK(cmd_calls("evalsha") + cmd_calls("eval") + cmd_calls("script|load") == total + 3);
	(void) eval;
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* ACL user and SELECT from the URL. */
static int
test_auth_select(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	fence_url	u;
	char		url[512],
				err[256],
				user[64];
	const char *res = R("acl");
	redisReply *r;
	int			rc = 1;

	memset(&u, 0, sizeof(u));
	snprintf(user, sizeof(user), "fencetest%d", (int) getpid());
	r = rcmd("ACL SETUSER %s on >pw%s ~* %s +@all", user, user, acl_channels());
	CHECK(r && r->type == REDIS_REPLY_STATUS);
	freeReplyObject(r);
	CHECK(fence_parse_url(redis_url, &u, err, sizeof(err)) == FENCE_OK && !u.is_unix);
	snprintf(url, sizeof(url), "redis://%s:pw%s@%s:%d/5", user, user, u.host, u.port);
	a = fence_connect(url);
	CHECKC(a->err == 0, a);
	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	/* it landed in database 5, not 0 */
	CHECK(rnum("EXISTS %s", key(res, "lock")) == 0);
	freeReplyObject(rcmd("SELECT 5"));
	CHECK(rnum("EXISTS %s", key(res, "lock")) == 1);
	rdo("DEL %s %s", key(res, "lock"), key(res, "token"));
	freeReplyObject(rcmd("SELECT 0"));
	fence_free(a);

	/* refused logins are FENCE_ERR_AUTH, wherever Redis says no */
	snprintf(url, sizeof(url), "redis://%s:wrong@%s:%d", user, u.host, u.port);
	a = fence_connect(url);
	CHECK(a->err == FENCE_ERR_AUTH && strstr(a->errstr, "AUTH") != NULL);
	fence_free(a);
	snprintf(url, sizeof(url), "redis://nobody%d:pw@%s:%d", (int) getpid(), u.host, u.port);
	a = fence_connect(url);
	CHECK(a->err == FENCE_ERR_AUTH);
	fence_free(a);
	snprintf(url, sizeof(url), "redis://%s:pw%s@%s:%d/999", user, user, u.host, u.port);
	a = fence_connect(url);
	CHECK(a->err == FENCE_ERR_AUTH && strstr(a->errstr, "SELECT") != NULL);
	fence_free(a);
	/* an ACL that does not allow the scripts */
	r = rcmd("ACL SETUSER %s-ro on >ro ~* %s -@all +get", user, acl_channels());
	CHECK(r && r->type == REDIS_REPLY_STATUS);
	freeReplyObject(r);
	snprintf(url, sizeof(url), "redis://%s-ro:ro@%s:%d", user, u.host, u.port);
	a = fence_connect(url);
	CHECKC(a->err == 0, a);
	CHECK(fence_acquire(a, res, 5000) == NULL && a->err == FENCE_ERR_AUTH);
	CHECK(fence_release_owner(a, res, "x") == FENCE_ERR && a->err == FENCE_ERR_AUTH);
	rc = 0;
fail:
	freeReplyObject(rcmd("SELECT 0"));
	freeReplyObject(rcmd("ACL DELUSER %s %s-ro", user, user));
	fence_url_free(&u);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* --- heartbeat ------------------------------------------------------------ */

static int
test_heartbeat_renews(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("hbrenew");
	int			rc = 1;

	lost_calls = 0;
	l = fence_acquire(a, res, 1000);
	CHECKC(l != NULL, a);
	CHECKC(fence_heartbeat_start(a, l, count_lost, NULL) == FENCE_OK, a);
	CHECK(fence_heartbeat_start(a, l, count_lost, NULL) == FENCE_ERR && a->err == FENCE_ERR_ARG);
	sleep_ms(2500);				/* two and a half TTLs */
	CHECK(fence_lease_state(l) == FENCE_LEASE_HELD);
	CHECK(rnum("PTTL %s", key(res, "lock")) > 0);
	CHECK(lost_calls == 0);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	CHECK(lost_calls == 0);
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* The key expires under a running heartbeat: loss seen, callback, SQL refused. */
static int
test_heartbeat_expired(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("hbexpire");
	PGresult   *r = NULL;
	long long	t0;
	int			rc = 1;

	lost_calls = 0;
	l = fence_acquire(a, res, 600);
	CHECKC(l != NULL, a);
	CHECKC(fence_heartbeat_start(a, l, count_lost, NULL) == FENCE_OK, a);
	rdo("PEXPIRE %s %s", key(res, "lock"), "1");
	t0 = ms_now();
	while (lost_calls == 0 && ms_now() - t0 < 2000)
		sleep_ms(10);
	CHECK(lost_calls == 1);
	CHECK(ms_now() - t0 <= 1000);	/* one heartbeat interval, plus slack for a loaded host */
	CHECK(fence_lease_state(l) == FENCE_LEASE_LOST);
	if (pg_ready)
	{
		r = fence_exec(a, l, pg, "SELECT 1", 0, NULL);
		CHECK(r == NULL && a->err == FENCE_ERR_LOST);
		CHECK(fence_announce(a, l, pg) == FENCE_ERR && a->err == FENCE_ERR_LOST);
	}
	/* lost is final even if the key came back */
	rdo("SET %s %s", key(res, "lock"), fence_lease_owner(l));
	CHECK(fence_extend(a, l, 600) == FENCE_ERR && a->err == FENCE_ERR_LOST);
	sleep_ms(300);
	CHECK(lost_calls == 1);
	rc = 0;
fail:
	PQclear(r);
	rdo("DEL %s%s", key(res, "lock"), "");
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * The heartbeat cannot reach Redis: a server that accepts connections and
 * never answers.  The lease turns suspect (fenced SQL refused), then lost
 * at the local deadline, with the callback.
 */
static int
test_heartbeat_unreachable(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_ctx  *hole = NULL;
	fence_lease *l = NULL;
	const char *res = R("hbhole");
	struct sockaddr_in sa;
	socklen_t	salen = sizeof(sa);
	char		url[64];
	PGresult   *r = NULL;
	int			fd = -1,
				seen_suspect = 0;
	long long	t0;
	int			rc = 1;

	lost_calls = 0;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(fd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(bind(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0);
	CHECK(listen(fd, 16) == 0);
	CHECK(getsockname(fd, (struct sockaddr *) &sa, &salen) == 0);
	snprintf(url, sizeof(url), "redis://127.0.0.1:%d", ntohs(sa.sin_port));
	hole = fence_connect_timeout(url, 200, 200);

	l = fence_acquire(a, res, 900);
	CHECKC(l != NULL, a);
	t0 = ms_now();
	/* the heartbeat connects to the black hole instead of Redis */
	CHECKC(fence_heartbeat_start(hole, l, count_lost, NULL) == FENCE_OK, hole);
	while (lost_calls == 0 && ms_now() - t0 < 3000)
	{
		if (fence_lease_state(l) == FENCE_LEASE_SUSPECT && !seen_suspect)
		{
			seen_suspect = 1;
			if (pg_ready)
			{
				r = fence_exec(a, l, pg, "SELECT 1", 0, NULL);
				CHECK(r == NULL && a->err == FENCE_ERR_SUSPECT);
			}
		}
		sleep_ms(5);
	}
	CHECK(seen_suspect);
	CHECK(lost_calls == 1);
	/* lost no earlier than the deadline (ttl - drift), not much later */
	CHECK(ms_now() - t0 >= 850 && ms_now() - t0 < 2500);
	CHECK(fence_lease_state(l) == FENCE_LEASE_LOST);
	rc = 0;
fail:
	PQclear(r);
	fence_lease_free(l);
	fence_free(hole);
	fence_free(a);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The first heartbeat comes ttl/3 after the acquire, not after the start. */
static int
test_heartbeat_first_beat(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("hbfirst");
	long long	t0;
	int			renewed = 0,
				rc = 1;

	l = fence_acquire(a, res, 3000);
	CHECKC(l != NULL, a);
	sleep_ms(1500);				/* say, a slow announce */
	t0 = ms_now();
	CHECKC(fence_heartbeat_start(a, l, NULL, NULL) == FENCE_OK, a);
	/* overdue since 500 ms: renewed now, not 1 s from now */
	while (ms_now() - t0 < 700 && !renewed)
	{
		renewed = rnum("PTTL %s", key(res, "lock")) > 2500;
		sleep_ms(5);
	}
	CHECK(renewed);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* --- the proxy of test/e2e/lib/proxy.py -------------------------------------- */

typedef struct test_proxy
{
	pid_t		pid;
	int			port;
	int			ctl;
} test_proxy;

/* Start proxy.py in front of the test Redis; 0 when it runs. */
static int
proxy_start(test_proxy *p)
{
	const char *script = getenv("FENCE_PROXY_PY");
	fence_url	u;
	char		err[256],
				port[16],
				line[64];
	int			fds[2];
	size_t		got = 0;
	struct pollfd pfd;

	memset(p, 0, sizeof(*p));
	if (script == NULL)
		script = "../test/e2e/lib/proxy.py";
	if (fence_parse_url(redis_url, &u, err, sizeof(err)) != FENCE_OK)
		return -1;
	snprintf(port, sizeof(port), "%d", u.port);
	if (pipe(fds) != 0)
	{
		fence_url_free(&u);
		return -1;
	}
	fflush(stdout);
	p->pid = fork();
	if (p->pid == 0)
	{
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execlp("python3", "python3", script, "0", u.host, port, "0", (char *) NULL);
		_exit(127);
	}
	fence_url_free(&u);
	close(fds[1]);
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	while (got < sizeof(line) - 1 && poll(&pfd, 1, 10000) == 1)
	{
		ssize_t		n = read(fds[0], line + got, 1);

		if (n <= 0 || line[got] == '\n')
			break;
		got++;
	}
	line[got] = '\0';
	close(fds[0]);
	if (p->pid < 0 || sscanf(line, "ports %d %d", &p->port, &p->ctl) != 2)
		return -1;
	return 0;
}

/* Send one control command; 0 when the proxy answered "ok". */
static int
proxy_ctl(test_proxy *p, const char *cmd)
{
	struct sockaddr_in sa;
	char		buf[128];
	int			fd = socket(AF_INET, SOCK_STREAM, 0),
				ok = -1;
	ssize_t		n;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(p->ctl);
	if (fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0)
	{
		snprintf(buf, sizeof(buf), "%s\n", cmd);
		if (write(fd, buf, strlen(buf)) == (ssize_t) strlen(buf) &&
			(n = read(fd, buf, sizeof(buf) - 1)) > 0)
		{
			buf[n] = '\0';
			ok = strncmp(buf, "ok", 2) == 0 ? 0 : -1;
		}
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

static void
proxy_stop(test_proxy *p)
{
	if (p->pid > 0)
	{
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
	}
	p->pid = 0;
}

/*
 * The release that wakes a waiter comes between the waiter's busy attempt
 * and its BLPOP: the proxy in front of the waiter delays Redis's answer to
 * that attempt by 150 ms (less than FENCE_HANDOFF_MS, for which the
 * wake-up and the lock are kept for it), and the holder releases
 * meanwhile.  The wake-up must wait for the BLPOP: the waiter acquires as
 * soon as the answer reaches it, not at its next look FENCE_WAIT_BEAT_MS
 * later.
 */
static int
test_wait_wakeup_before_blpop(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("early");
	test_proxy	px;
	char		url[64];
	waiter		w = {url, res, 5000, 10000, 0};
	char		wake[64];
	redisReply *r = NULL;
	int			started = 0;
	long long	t;
	int			rc = 1;

	memset(&px, 0, sizeof(px));
	l = fence_acquire(a, res, 30000);
	CHECKC(l != NULL, a);
	CHECK(proxy_start(&px) == 0);
	snprintf(url, sizeof(url), "redis://127.0.0.1:%d", px.port);
	CHECK(proxy_ctl(&px, "delay 150") == 0);
	CHECK(waiter_start(&w) == 0);
	started = 1;
	/* its attempt ran in Redis; the answer is on its way */
	CHECK(wait_queued(res, 1));
	r = rcmd("ZRANGE %s 0 0", key(res, "queue"));
	CHECK(r && r->type == REDIS_REPLY_ARRAY && r->elements == 1);
	snprintf(wake, sizeof(wake), "wake:%s", r->element[0]->str);
	t = ms_now();
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	/* the wake-up is there, and nobody blocks on it yet */
	CHECK(rnum("LLEN %s", key(res, wake)) == 1);
	CHECK(proxy_ctl(&px, "delay 0") == 0);
	waiter_join(&w);
	started = 0;
	CHECK(w.token == fence_lease_token(l) + 1);
	if (w.got_ms - t > 150 + FENCE_WAIT_BEAT_MS / 5)
	{
		snprintf(tap_why, sizeof(tap_why), "waiter acquired %lld ms after the release, its answer came at most 150 ms after",
				 w.got_ms - t);
		goto fail;
	}
	rc = 0;
fail:
	if (started)
		waiter_join(&w);
	freeReplyObject(r);
	proxy_stop(&px);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * Behind a network that goes silent, every heartbeat call (the extend, the
 * reconnect and its AUTH) is bounded by the time left to the lease's local
 * deadline: the loss is declared at the deadline, not when a call that
 * started before it gives up.  With 1 s per call and a 3 s TTL, a heartbeat
 * whose calls are not bounded so blocks until about 3.25 s, while Redis may
 * hand the lease to another at 3 s.
 */
static int
test_heartbeat_deadline(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_ctx  *hb = NULL;
	fence_lease *l = NULL;
	test_proxy	px;
	const char *res = R("hbdeadline");
	char		url[128],
				user[64];
	redisReply *r;
	long long	t_before,
				t_after,
				t_lost = -1,
				deadline_lo,
				deadline_hi;
	int			rc = 1;

	lost_calls = 0;
	memset(&px, 0, sizeof(px));
	snprintf(user, sizeof(user), "fencehb%d", (int) getpid());
	r = rcmd("ACL SETUSER %s on >pw ~* %s +@all", user, acl_channels());
	CHECK(r && r->type == REDIS_REPLY_STATUS);
	freeReplyObject(r);
	CHECK(proxy_start(&px) == 0);
	snprintf(url, sizeof(url), "redis://%s:pw@127.0.0.1:%d", user, px.port);
	hb = fence_connect_timeout(url, 1000, 1000);
	CHECKC(hb->err == 0, hb);

	t_before = ms_now();
	l = fence_acquire(a, res, 3000);
	t_after = ms_now();
	CHECKC(l != NULL, a);
	deadline_lo = t_before + 3000 - 32;
	deadline_hi = t_after + 3000 - 32;
	CHECKC(fence_heartbeat_start(hb, l, count_lost, NULL) == FENCE_OK, hb);
	CHECK(proxy_ctl(&px, "silence") == 0);
	while (ms_now() - t_before < 5000)
	{
		if (lost_calls > 0)
		{
			t_lost = ms_now();
			break;
		}
		sleep_ms(1);
	}
	CHECK(t_lost > 0);
	printf("# heartbeat_deadline: lost %lld ms after the acquire, deadline %lld..%lld ms\n",
		   t_lost - t_before, deadline_lo - t_before, deadline_hi - t_before);
	if (t_lost < deadline_lo || t_lost > deadline_hi + 60)
	{
		snprintf(tap_why, sizeof(tap_why), "lost %lld ms after the acquire, deadline %lld..%lld",
				 t_lost - t_before, deadline_lo - t_before, deadline_hi - t_before);
		goto fail;
	}
	/* Redis still holds the key for a while: the loss came first */
	CHECK(rnum("PTTL %s", key(res, "lock")) > 0);
	rc = 0;
fail:
	rdo("DEL %s%s", key(res, "lock"), "");
	freeReplyObject(rcmd("ACL DELUSER %s", user));
	fence_lease_free(l);
	fence_free(hb);
	fence_free(a);
	proxy_stop(&px);
	return rc;
}

/*
 * Wait (3 s at most) until Redis has dropped the lock of "res": by then the
 * lease must not read HELD.
 */
static int
gone_and_not_held(const char *res, fence_lease *l)
{
	long long	t0 = ms_now();

	while (ms_now() - t0 < 3000)
	{
		if (rnum("PTTL %s", key(res, "lock")) == -2)
			return fence_lease_state(l) != FENCE_LEASE_HELD;
		sleep_ms(1);
	}
	return 0;
}

/*
 * The application's extend races the heartbeat's: the heartbeat's PEXPIRE
 * 3000 runs first but its reply comes 300 ms late (the proxy delays it),
 * the application's PEXPIRE 600 runs last.  Redis then drops the key 600 ms
 * on, so the lease must not be HELD once the key is gone: the deadline
 * follows the extend Redis ran last, not the reply that came last.
 */
static int
test_extend_race(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_ctx  *hb = NULL;
	fence_lease *l = NULL;
	test_proxy	px;
	const char *res = R("race");
	char		url[64];
	long long	t_acq;
	int			ran = 0,
				rc = 1;

	CHECK(proxy_start(&px) == 0);
	snprintf(url, sizeof(url), "redis://127.0.0.1:%d", px.port);
	hb = fence_connect(url);
	CHECKC(hb->err == 0, hb);
	l = fence_acquire(a, res, 3000);
	t_acq = ms_now();
	CHECKC(l != NULL, a);
	CHECK(proxy_ctl(&px, "delay 300") == 0);
	CHECKC(fence_heartbeat_start(hb, l, NULL, NULL) == FENCE_OK, hb);
	/* wait until Redis has run the heartbeat's extend (the TTL went back up) */
	while (!ran && ms_now() - t_acq < 3000)
	{
		ran = rnum("PTTL %s", key(res, "lock")) > 3000 - (ms_now() - t_acq) + 300;
		sleep_ms(2);
	}
	CHECK(ran);
	/* its reply is still in the proxy: the application shortens the lease */
	CHECKC(fence_extend(a, l, 600) == FENCE_OK, a);
	fence_heartbeat_stop(l);
	CHECK(gone_and_not_held(res, l));
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(hb);
	fence_free(a);
	proxy_stop(&px);
	return rc;
}

/*
 * An extend whose reply never came may still run, and run late: a PEXPIRE
 * 600 held in the network is delivered after a PEXPIRE 3000 that was
 * answered.  Until the lease ends, its deadline must allow for that.
 */
static int
test_extend_unknown_outcome(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_ctx  *p = NULL;
	fence_lease *l = NULL;
	test_proxy	px;
	const char *res = R("unknown");
	char		url[64];
	int			rc = 1;

	CHECK(proxy_start(&px) == 0);
	snprintf(url, sizeof(url), "redis://127.0.0.1:%d", px.port);
	p = fence_connect_timeout(url, 1000, 300);
	CHECKC(p->err == 0, p);
	l = fence_acquire(a, res, 3000);
	CHECKC(l != NULL, a);
	CHECK(proxy_ctl(&px, "hold") == 0);
	CHECK(fence_extend(p, l, 600) == FENCE_ERR && p->err == FENCE_ERR_IO);
	CHECKC(fence_extend(a, l, 3000) == FENCE_OK, a);
	/* the held PEXPIRE 600 runs now, after the one that was answered */
	CHECK(proxy_ctl(&px, "release") == 0);
	CHECK(gone_and_not_held(res, l));
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(p);
	fence_free(a);
	proxy_stop(&px);
	return rc;
}

/* --- PostgreSQL ------------------------------------------------------------ */

static int
test_announce_exec(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("exec");
	const char *params[2] = {"20", "22"};
	PGresult   *r = NULL;
	long long	mark = -1;
	int			rc = 1;

	if (!pg_ready)
		SKIP("extension fence not available");
	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	/* a statement that fails takes its advance down with it */
	r = fence_exec(a, l, pg, "SELECT 1/0", 0, NULL);
	CHECK(r == NULL && a->err == FENCE_ERR_PG && strstr(a->errstr, "division by zero") != NULL);
	CHECK(pg_mark(res) == 0);
	/* no mark yet: fence_pg_mark says 0, no error */
	CHECKC(fence_pg_mark(a, pg, res, &mark) == FENCE_OK, a);
	CHECK(mark == 0);
	CHECKC(fence_announce(a, l, pg) == FENCE_OK, a);
	CHECK(pg_mark(res) == fence_lease_token(l));
	CHECKC(fence_pg_mark(a, pg, res, &mark) == FENCE_OK, a);
	CHECK(mark == fence_lease_token(l));
	/* a write commits with the check */
	r = PQexec(pg, "CREATE TEMP TABLE IF NOT EXISTS fence_client_t (x int)");
	CHECK(PQresultStatus(r) == PGRES_COMMAND_OK);
	PQclear(r);
	r = fence_exec(a, l, pg, "INSERT INTO fence_client_t VALUES ($1), ($2)", 2, params);
	CHECKC(r != NULL, a);
	CHECK(strcmp(PQcmdTuples(r), "2") == 0);
	PQclear(r);
	r = PQexec(pg, "SELECT sum(x) FROM fence_client_t");
	CHECK(PQresultStatus(r) == PGRES_TUPLES_OK && strcmp(PQgetvalue(r, 0, 0), "42") == 0);
	PQclear(r);
	r = fence_exec(a, l, pg, "SELECT $1::int + $2::int", 2, params);
	CHECKC(r != NULL, a);
	CHECK(PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "42") == 0);
	CHECK(PQtransactionStatus(pg) == PQTRANS_IDLE);
	PQclear(r);

	/* a failing statement: FENCE_ERR_PG, rolled back, connection usable */
	r = fence_exec(a, l, pg, "SELECT nonsense FROM nowhere", 0, NULL);
	CHECK(r == NULL && a->err == FENCE_ERR_PG && strstr(a->errstr, "nowhere") != NULL);
	CHECK(PQtransactionStatus(pg) == PQTRANS_IDLE);

	/* inside the caller's transaction: the caller decides */
	r = PQexec(pg, "BEGIN");
	PQclear(r);
	r = fence_exec(a, l, pg, "SELECT 1", 0, NULL);
	CHECKC(r != NULL, a);
	CHECK(PQtransactionStatus(pg) == PQTRANS_INTRANS);
	PQclear(r);
	r = PQexec(pg, "ROLLBACK");
	PQclear(r);
	r = NULL;
	CHECK(fence_exec(a, l, pg, NULL, 0, NULL) == NULL && a->err == FENCE_ERR_ARG);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	PQclear(r);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* A session that holds a fence row until a lease is lost. */
typedef struct row_locker
{
	const char *resource;
	fence_lease *lease;
	int			ready;			/* 1 locked, -1 failed */
	pthread_mutex_t mu;
	pthread_cond_t cv;
} row_locker;

static void *
row_locker_main(void *arg)
{
	row_locker *k = arg;
	PGconn	   *c = PQconnectdb("");
	const char *params[1] = {k->resource};
	PGresult   *r = PQexec(c, "BEGIN");
	int			ok;

	PQclear(r);
	r = PQexecParams(c, "SELECT 1 FROM fence.fences WHERE resource = $1 FOR UPDATE",
					 1, NULL, params, NULL, NULL, 0);
	ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
	PQclear(r);
	pthread_mutex_lock(&k->mu);
	k->ready = ok ? 1 : -1;
	pthread_cond_signal(&k->cv);
	pthread_mutex_unlock(&k->mu);
	/* hold the row until the lease is gone */
	while (ok && fence_lease_state(k->lease) != FENCE_LEASE_LOST)
		sleep_ms(5);
	PQclear(PQexec(c, "COMMIT"));
	PQfinish(c);
	return NULL;
}

/*
 * The announce waits for a fence row another session holds, and the lease
 * runs out meanwhile: the token is announced, but fence_announce reports
 * the loss instead of success.
 */
static int
test_announce_outlasts_lease(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("annlost");
	row_locker	k;
	pthread_t	th;
	int			started = 0,
				rc = 1;

	if (!pg_ready)
		SKIP("extension fence not available");
	memset(&k, 0, sizeof(k));
	pthread_mutex_init(&k.mu, NULL);
	pthread_cond_init(&k.cv, NULL);
	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	CHECKC(fence_announce(a, l, pg) == FENCE_OK, a);	/* the row exists */
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = fence_acquire(a, res, 300);
	CHECKC(l != NULL, a);
	k.resource = res;
	k.lease = l;
	CHECK(pthread_create(&th, NULL, row_locker_main, &k) == 0);
	started = 1;
	pthread_mutex_lock(&k.mu);
	while (k.ready == 0)
		pthread_cond_wait(&k.cv, &k.mu);
	pthread_mutex_unlock(&k.mu);
	CHECK(k.ready == 1);
	CHECK(fence_announce(a, l, pg) == FENCE_ERR && a->err == FENCE_ERR_LOST);
	CHECK(pg_mark(res) == fence_lease_token(l));	/* announced all the same */
	CHECK(PQtransactionStatus(pg) == PQTRANS_IDLE);
	rc = 0;
fail:
	if (started)
		pthread_join(th, NULL);	/* lets go when the 300 ms lease is over */
	pthread_mutex_destroy(&k.mu);
	pthread_cond_destroy(&k.cv);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* Rows of "tbl" (a table of this test's connection), -1 on error. */
static long long
pg_count(const char *tbl)
{
	char		sql[128];
	PGresult   *r;
	long long	n = -1;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", tbl);
	r = PQexec(pg, sql);
	if (PQresultStatus(r) == PGRES_TUPLES_OK)
		n = atoll(PQgetvalue(r, 0, 0));
	PQclear(r);
	return n;
}

/*
 * The lease runs out while the fenced statement runs: on an idle
 * connection fence_exec checks the lease again before it commits, and
 * rolls back (the advance too).  Inside the caller's transaction it reports
 * the loss and leaves the transaction to the caller.
 */
static int
test_exec_lease_lost(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("execlost");
	const char *slow = "INSERT INTO fence_client_l SELECT 1 FROM pg_sleep(0.4)";
	PGresult   *r = NULL;
	long long	mark;
	int			rc = 1;

	if (!pg_ready)
		SKIP("extension fence not available");
	r = PQexec(pg, "CREATE TEMP TABLE IF NOT EXISTS fence_client_l (x int)");
	CHECK(PQresultStatus(r) == PGRES_COMMAND_OK);
	PQclear(r);
	r = NULL;
	mark = pg_mark(res);
	l = fence_acquire(a, res, 300);
	CHECKC(l != NULL, a);
	/* not announced: an advance that committed would move the mark */
	r = fence_exec(a, l, pg, slow, 0, NULL);
	CHECK(r == NULL && a->err == FENCE_ERR_LOST);
	CHECK(PQtransactionStatus(pg) == PQTRANS_IDLE);
	CHECK(pg_count("fence_client_l") == 0);
	CHECK(pg_mark(res) == mark);
	fence_lease_free(l);

	l = fence_acquire(a, res, 300);
	CHECKC(l != NULL, a);
	r = PQexec(pg, "BEGIN");
	PQclear(r);
	r = fence_exec(a, l, pg, slow, 0, NULL);
	CHECK(r == NULL && a->err == FENCE_ERR_LOST);
	CHECK(PQtransactionStatus(pg) == PQTRANS_INTRANS);
	r = PQexec(pg, "ROLLBACK");
	PQclear(r);
	r = NULL;
	CHECK(pg_count("fence_client_l") == 0);
	rc = 0;
fail:
	PQclear(r);
	if (PQtransactionStatus(pg) != PQTRANS_IDLE)
		PQclear(PQexec(pg, "ROLLBACK"));
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * A database not set up for fence: fence's own SQL refused for a role
 * without the grant (42501) gets a hint with the GRANT, in announce,
 * fence_exec (inside a transaction and not) and fence_pg_mark; the
 * caller's statement refused the same way gets none, and a call that
 * works clears it.
 */
static int
test_pg_hint(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("hint");
	char		role[64],
				sql[256],
				conninfo[128];
	PGconn	   *c = NULL;
	PGresult   *r = NULL;
	long long	mark;
	int			rc = 1;

	if (!pg_ready)
		SKIP("extension fence not available");
	snprintf(role, sizeof(role), "test_nogrant_%d", (int) getpid());
	snprintf(sql, sizeof(sql), "CREATE ROLE %s LOGIN", role);
	r = PQexec(pg, sql);
	CHECK(PQresultStatus(r) == PGRES_COMMAND_OK);
	PQclear(r);
	r = NULL;
	snprintf(conninfo, sizeof(conninfo), "user=%s", role);
	c = PQconnectdb(conninfo);
	CHECK(PQstatus(c) == CONNECTION_OK);
	l = fence_acquire(a, res, 10000);
	CHECKC(l != NULL, a);
	CHECK(fence_pg_hint(a) == NULL);
	CHECK(fence_announce(a, l, c) == FENCE_ERR && a->err == FENCE_ERR_PG);
	CHECK(fence_pg_hint(a) != NULL && strstr(fence_pg_hint(a), "GRANT EXECUTE ON FUNCTION fence.advance(") != NULL &&
		  strstr(fence_pg_hint(a), role) != NULL);
	CHECK(fence_exec(a, l, c, "SELECT 1", 0, NULL) == NULL && fence_pg_hint(a) != NULL);
	PQclear(PQexec(c, "BEGIN"));
	CHECK(fence_exec(a, l, c, "SELECT 1", 0, NULL) == NULL && fence_pg_hint(a) != NULL);
	PQclear(PQexec(c, "ROLLBACK"));
	CHECK(fence_pg_mark(a, c, res, &mark) == FENCE_ERR && fence_pg_hint(a) != NULL);
	/* a call that works clears it */
	CHECKC(fence_announce(a, l, pg) == FENCE_OK, a);
	CHECK(fence_pg_hint(a) == NULL);
	/* the caller's own statement fails with 3F000: no hint */
	CHECK(fence_pg_mark(a, c, res, &mark) == FENCE_ERR && fence_pg_hint(a) != NULL);
	r = fence_exec(a, l, pg, "SELECT * FROM nosuchschema.t", 0, NULL);
	CHECK(r == NULL && a->err == FENCE_ERR_PG && strstr(a->errstr, "nosuchschema") != NULL);
	CHECK(fence_pg_hint(a) == NULL);
	rc = 0;
fail:
	PQclear(r);
	PQfinish(c);
	if (l != NULL)
		(void) fence_release(a, l);
	fence_lease_free(l);
	fence_free(a);
	snprintf(sql, sizeof(sql), "DROP ROLE IF EXISTS test_nogrant_%d", (int) getpid());
	PQclear(PQexec(pg, sql));
	return rc;
}

/*
 * COPY needs data streamed by the caller, which fence_exec cannot do: it
 * is refused (FENCE_ERR_ARG), at once, with nothing written and the
 * connection usable.  (Before, the result loop spun on the COPY state.)
 */
static int
test_exec_copy(void)
{
	static const char *copies[] = {
		"COPY fence_client_c FROM STDIN",
		"copy fence_client_c (x) from stdin with (format csv)",
		"COPY fence_client_c TO STDOUT",
		"COPY (SELECT x FROM fence_client_c) TO STDOUT",
		"/* why */ COPY (DELETE FROM fence_client_c RETURNING x) TO STDOUT",
		NULL
	};
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("copy");
	PGresult   *r = NULL;
	long long	mark;
	int			i,
				tx,
				rc = 1;

	if (!pg_ready)
		SKIP("extension fence not available");
	tap_watchdog(60);			/* a COPY that hangs must fail, not hang */
	r = PQexec(pg, "CREATE TEMP TABLE IF NOT EXISTS fence_client_c (x int); "
			   "TRUNCATE fence_client_c; INSERT INTO fence_client_c VALUES (1), (2)");
	CHECK(PQresultStatus(r) == PGRES_COMMAND_OK);
	PQclear(r);
	r = NULL;
	mark = pg_mark(res);
	l = fence_acquire(a, res, 10000);
	CHECKC(l != NULL, a);
	/* not announced: an advance that committed would move the mark */
	for (tx = 0; tx < 2; tx++)
	{
		for (i = 0; copies[i]; i++)
		{
			if (tx)
				PQclear(PQexec(pg, "BEGIN"));
			r = fence_exec(a, l, pg, copies[i], 0, NULL);
			if (r != NULL || a->err != FENCE_ERR_ARG || strstr(a->errstr, "COPY") == NULL)
			{
				snprintf(tap_why, sizeof(tap_why), "%s%s: err %d: %s", tx ? "in a transaction: " : "",
						 copies[i], a->err, a->errstr);
				goto fail;
			}
			if (tx)
			{
				/* the caller's transaction is the caller's to end */
				CHECK(PQtransactionStatus(pg) == PQTRANS_INTRANS ||
					  PQtransactionStatus(pg) == PQTRANS_INERROR);
				PQclear(PQexec(pg, "ROLLBACK"));
			}
			CHECK(PQtransactionStatus(pg) == PQTRANS_IDLE);
			CHECK(pg_count("fence_client_c") == 2);
			CHECK(pg_mark(res) == mark);
		}
	}
	/* and the connection still works */
	r = fence_exec(a, l, pg, "SELECT count(*) FROM fence_client_c", 0, NULL);
	CHECKC(r != NULL, a);
	CHECK(strcmp(PQgetvalue(r, 0, 0), "2") == 0);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	alarm(0);
	PQclear(r);
	if (PQtransactionStatus(pg) != PQTRANS_IDLE)
		PQclear(PQexec(pg, "ROLLBACK"));
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* Round trips to PostgreSQL while "pg" is traced: its ReadyForQuery messages. */
static FILE *trace;

static void
trace_start(void)
{
	trace = tmpfile();
	PQtrace(pg, trace);
#ifdef PQTRACE_SUPPRESS_TIMESTAMPS
	PQsetTraceFlags(pg, PQTRACE_SUPPRESS_TIMESTAMPS);
#endif
}

static int
trace_stop(void)
{
	char		line[4096];
	int			n = 0;

	PQuntrace(pg);
	rewind(trace);
	while (fgets(line, sizeof(line), trace) != NULL)
		if (strstr(line, "ReadyForQuery") != NULL)
			n++;
	fclose(trace);
	return n;
}

/*
 * The round trips docs/libfence.md and client/README.md state, counted: announce
 * 1 (and 2 more to PostgreSQL and 1 to Redis per heal), fence_exec 2 on an
 * idle connection (the statement, then the commit after the lease check)
 * and 1 inside the caller's transaction.
 */
static int
test_pg_round_trips(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("pgrtt");
	PGresult   *r = NULL;
	char		prev[32];
	long long	evalsha;
	int			n,
				rc = 1;

	if (!pg_ready)
		SKIP("extension fence not available");
#if !defined(LIBPQ_HAS_PIPELINING) || defined(FENCE_NO_PIPELINE)
	SKIP("libpq without pipeline mode");
#endif
	rdo("SET %s %s", key(res, "token"), "41");
	l = fence_acquire(a, res, 10000);
	CHECKC(l != NULL, a);
	trace_start();
	CHECKC(fence_announce(a, l, pg) == FENCE_OK, a);
	CHECK((n = trace_stop()) == 1);
	trace_start();
	r = fence_exec(a, l, pg, "SELECT $1::int", 1, (const char *const[]) {"7"});
	CHECK((n = trace_stop()) == 2);
	CHECKC(r != NULL, a);
	PQclear(r);
	PQclear(PQexec(pg, "BEGIN"));
	trace_start();
	r = fence_exec(a, l, pg, "SELECT 1", 0, NULL);
	CHECK((n = trace_stop()) == 1);
	CHECKC(r != NULL, a);
	PQclear(r);
	r = NULL;
	PQclear(PQexec(pg, "COMMIT"));
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);

	/* healing: Redis hands out PostgreSQL's mark again */
	snprintf(prev, sizeof(prev), "%lld", pg_mark(res) - 1);
	rdo("SET %s %s", key(res, "token"), prev);
	l = fence_acquire(a, res, 10000);
	CHECKC(l != NULL, a);
	evalsha = cmd_calls("evalsha");
	trace_start();
	CHECKC(fence_announce(a, l, pg) == FENCE_OK, a);
	CHECK((n = trace_stop()) == 3);
	CHECK(cmd_calls("evalsha") == evalsha + 1);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	PQclear(r);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* An older holder is fenced off once a newer one announced. */
static int
test_stale_after_takeover(void)
{
	fence_ctx  *a = fence_connect(redis_url),
			   *b = fence_connect(redis_url);
	fence_lease *la = NULL,
			   *lb = NULL;
	const char *res = R("takeover");
	PGresult   *r = NULL;
	char	   *v = NULL;
	int			rc = 1;

	if (!pg_ready)
		SKIP("extension fence not available");
	la = fence_acquire(a, res, 5000);
	CHECKC(la != NULL, a);
	CHECKC(fence_announce(a, la, pg) == FENCE_OK, a);
	/* A's lock vanishes (as if it expired while A was paused); B takes over */
	rdo("DEL %s%s", key(res, "lock"), "");
	lb = fence_acquire(b, res, 5000);
	CHECKC(lb != NULL, b);
	CHECK(fence_lease_token(lb) > fence_lease_token(la));
	CHECKC(fence_announce(b, lb, pg) == FENCE_OK, b);
	/* A still believes (its local deadline has not passed) but PG says no */
	CHECK(fence_lease_state(la) == FENCE_LEASE_HELD);
	r = PQexec(pg, "CREATE TEMP TABLE IF NOT EXISTS fence_client_s (x int)");
	CHECK(PQresultStatus(r) == PGRES_COMMAND_OK);
	PQclear(r);
	r = fence_exec(a, la, pg, "INSERT INTO fence_client_s VALUES (1)", 0, NULL);
	CHECK(r == NULL && a->err == FENCE_ERR_STALE);
	/* the stale write did not land */
	r = PQexec(pg, "SELECT count(*) FROM fence_client_s");
	CHECK(PQresultStatus(r) == PGRES_TUPLES_OK && strcmp(PQgetvalue(r, 0, 0), "0") == 0);
	PQclear(r);
	r = NULL;
	CHECK(PQtransactionStatus(pg) == PQTRANS_IDLE);
	CHECK(pg_mark(res) == fence_lease_token(lb));
	/* and A's release leaves B's lock alone */
	CHECK(fence_release(a, la) == FENCE_ERR && a->err == FENCE_ERR_LOST);
	v = rget(key(res, "lock"));
	CHECK(v && strcmp(v, fence_lease_owner(lb)) == 0);
	CHECKC(fence_release(b, lb) == FENCE_OK, b);
	rc = 0;
fail:
	free(v);
	PQclear(r);
	fence_lease_free(la);
	fence_lease_free(lb);
	fence_free(a);
	fence_free(b);
	return rc;
}

/* Redis loses everything (FLUSHALL): the client lifts the counter past PG. */
static int
test_heal_flushall(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("heal");
	long long	mark;
	char	   *v = NULL;
	int			rc = 1;

	if (!pg_ready)
		SKIP("extension fence not available");
	/* push PostgreSQL's mark well ahead: 5 acquisitions */
	for (int i = 0; i < 5; i++)
	{
		l = fence_acquire(a, res, 5000);
		CHECKC(l != NULL, a);
		CHECKC(fence_announce(a, l, pg) == FENCE_OK, a);
		CHECKC(fence_release(a, l) == FENCE_OK, a);
		fence_lease_free(l);
		l = NULL;
	}
	mark = pg_mark(res);
	CHECK(mark >= 5);

	freeReplyObject(rcmd("FLUSHALL"));
	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	CHECK(fence_lease_token(l) == 1);	/* Redis starts over... */
	CHECKC(fence_announce(a, l, pg) == FENCE_OK, a);
	CHECK(fence_lease_token(l) > mark);	/* ...and the client catches up */
	CHECK(pg_mark(res) == fence_lease_token(l));
	v = rget(key(res, "token"));
	CHECK(v && atoll(v) == fence_lease_token(l));
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = NULL;

	/* failover shape: Redis hands out PG's mark again, to another owner */
	mark = pg_mark(res);
	{
		char		prev[32];

		snprintf(prev, sizeof(prev), "%lld", mark - 1);
		rdo("SET %s %s", key(res, "token"), prev);
	}
	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	CHECK(fence_lease_token(l) == mark);
	CHECKC(fence_announce(a, l, pg) == FENCE_OK, a);
	CHECK(fence_lease_token(l) == mark + 1);
	CHECK(pg_mark(res) == mark + 1);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = NULL;

	/* a counter corrupted between acquire and heal: refused, untouched */
	rdo("SET %s %s", key(res, "token"), "1");
	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	rdo("SET %s %s", key(res, "token"), "-7");
	CHECK(fence_announce(a, l, pg) == FENCE_ERR && a->err == FENCE_ERR_STATE);
	free(v);
	v = rget(key(res, "token"));
	CHECK(v && strcmp(v, "-7") == 0);
	rdo("SET %s %s", key(res, "token"), "9");
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	free(v);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* rows of fence_client_first; -1 when it cannot be read */
static long long
first_rows(void)
{
	PGresult   *r = PQexec(pg, "SELECT count(*) FROM fence_client_first");
	long long	n = PQresultStatus(r) == PGRES_TUPLES_OK ? atoll(PQgetvalue(r, 0, 0)) : -1;

	PQclear(r);
	return n;
}

/*
 * The first fenced statement under a fresh lease is its announce: its
 * transaction moves the mark before the statement runs, so an older
 * holder is refused from then on, and a Redis counter behind PostgreSQL
 * is healed as fence_announce heals it (the statement runs once, under the
 * healed token).  A token PostgreSQL took once is not healed: refused, it
 * is stale; a fresh lease another owner has since taken over is lost.
 */
static int
test_exec_first_announces(void)
{
	fence_ctx  *a = fence_connect(redis_url),
			   *b = fence_connect(redis_url);
	fence_lease *la = NULL,
			   *lb = NULL;
	fence_leases *set = NULL;
	const char *res = R("execfirst"),
			   *pair[2] = {R("execfirst-x"), R("execfirst-y")};
	const char *insert = "INSERT INTO fence_client_first VALUES (1)";
	PGresult   *r = NULL;
	char		prev[32];
	long long	mark;
	int			rc = 1;

	if (!pg_ready)
		SKIP("extension fence not available");
	r = PQexec(pg, "CREATE TEMP TABLE IF NOT EXISTS fence_client_first (x int)");
	CHECK(PQresultStatus(r) == PGRES_COMMAND_OK);
	PQclear(r);
	r = NULL;

	/* a fresh lease's first statement moves the mark: the older is refused */
	la = fence_acquire(a, res, 10000);
	CHECKC(la != NULL, a);
	CHECKC(fence_announce(a, la, pg) == FENCE_OK, a);
	rdo("DEL %s%s", key(res, "lock"), "");
	lb = fence_acquire(b, res, 10000);
	CHECKC(lb != NULL, b);
	r = fence_exec(b, lb, pg, insert, 0, NULL);
	CHECKC(r != NULL, b);
	PQclear(r);
	r = NULL;
	CHECK(pg_mark(res) == fence_lease_token(lb));
	r = fence_exec(a, la, pg, insert, 0, NULL);
	CHECK(r == NULL && a->err == FENCE_ERR_STALE);
	CHECK(first_rows() == 1);
	CHECKC(fence_release(b, lb) == FENCE_OK, b);
	fence_lease_free(lb);
	lb = NULL;
	fence_lease_free(la);
	la = NULL;

	/* Redis hands out PostgreSQL's mark again: healed, the statement runs once */
	mark = pg_mark(res);
	snprintf(prev, sizeof(prev), "%lld", mark - 1);
	rdo("SET %s %s", key(res, "token"), prev);
	la = fence_acquire(a, res, 10000);
	CHECKC(la != NULL, a);
	CHECK(fence_lease_token(la) == mark);
	r = fence_exec(a, la, pg, insert, 0, NULL);
	CHECKC(r != NULL, a);
	PQclear(r);
	r = NULL;
	CHECK(fence_lease_token(la) == mark + 1);
	CHECK(pg_mark(res) == mark + 1);
	CHECK(first_rows() == 2);

	/* taken once, refused later: stale, no heal (the counter stays) */
	rdo("DEL %s%s", key(res, "lock"), "");
	lb = fence_acquire(b, res, 10000);
	CHECKC(lb != NULL, b);
	CHECKC(fence_announce(b, lb, pg) == FENCE_OK, b);
	r = fence_exec(a, la, pg, insert, 0, NULL);
	CHECK(r == NULL && a->err == FENCE_ERR_STALE);
	CHECK(fence_lease_token(la) == mark + 1);
	fence_lease_free(la);
	la = NULL;

	/* a fresh lease taken over before its first statement: lost, not healed */
	rdo("SET %s %s", key(res, "token"), prev);
	rdo("DEL %s%s", key(res, "lock"), "");
	la = fence_acquire(a, res, 10000);
	CHECKC(la != NULL, a);
	rdo("SET %s %s", key(res, "lock"), "someone-else");
	r = fence_exec(a, la, pg, insert, 0, NULL);
	CHECK(r == NULL && a->err == FENCE_ERR_LOST);
	CHECK(first_rows() == 2);
	CHECK(pg_mark(res) == fence_lease_token(lb));
	rdo("DEL %s%s", key(res, "lock"), "");
	fence_lease_free(la);
	la = NULL;
	fence_lease_free(lb);
	lb = NULL;

	/* inside the caller's transaction a refusal is final: no heal */
	mark = pg_mark(res);
	snprintf(prev, sizeof(prev), "%lld", mark - 1);
	rdo("SET %s %s", key(res, "token"), prev);
	la = fence_acquire(a, res, 10000);
	CHECKC(la != NULL, a);
	PQclear(PQexec(pg, "BEGIN"));
	r = fence_exec(a, la, pg, insert, 0, NULL);
	CHECK(r == NULL && a->err == FENCE_ERR_STALE);
	CHECK(fence_lease_token(la) == mark);
	PQclear(PQexec(pg, "ROLLBACK"));
	CHECKC(fence_release(a, la) == FENCE_OK, a);
	fence_lease_free(la);
	la = NULL;

	/* a refusal of the statement itself is final: it ran once */
	r = PQexec(pg, "CREATE TEMP SEQUENCE IF NOT EXISTS fence_client_first_seq");
	CHECK(PQresultStatus(r) == PGRES_COMMAND_OK);
	PQclear(r);
	la = fence_acquire(a, res, 10000);
	CHECKC(la != NULL, a);
	r = fence_exec(a, la, pg, "SELECT nextval('fence_client_first_seq'), fence.advance($1, 1::bigint)",
				   1, &res);
	CHECK(r == NULL && a->err == FENCE_ERR_STALE);
	r = PQexec(pg, "SELECT last_value FROM fence_client_first_seq");
	CHECK(PQresultStatus(r) == PGRES_TUPLES_OK && strcmp(PQgetvalue(r, 0, 0), "1") == 0);
	PQclear(r);
	r = NULL;
	CHECKC(fence_release(a, la) == FENCE_OK, a);
	fence_lease_free(la);
	la = NULL;

	/* a set: the member Redis forgot is healed, the statement runs once */
	rdo("SET %s %s", key(pair[0], "token"), "5");
	la = fence_acquire(a, pair[0], 10000);
	CHECKC(la != NULL, a);
	CHECKC(fence_announce(a, la, pg) == FENCE_OK, a);
	CHECKC(fence_release(a, la) == FENCE_OK, a);
	fence_lease_free(la);
	la = NULL;
	mark = pg_mark(pair[0]);
	snprintf(prev, sizeof(prev), "%lld", mark - 1);
	rdo("SET %s %s", key(pair[0], "token"), prev);
	set = fence_acquire_many(a, pair, 2, 10000);
	CHECKC(set != NULL, a);
	r = fence_leases_exec(a, set, pg, insert, 0, NULL);
	CHECKC(r != NULL, a);
	CHECK(fence_lease_token(fence_leases_member(set, 0)) == mark + 1);
	CHECK(pg_mark(pair[0]) == mark + 1);
	CHECK(pg_mark(pair[1]) == fence_lease_token(fence_leases_member(set, 1)));
	CHECK(first_rows() == 3);
	CHECKC(fence_leases_release(a, set) == FENCE_OK, a);
	rc = 0;
fail:
	PQclear(r);
	if (PQtransactionStatus(pg) != PQTRANS_IDLE)
		PQclear(PQexec(pg, "ROLLBACK"));
	fence_leases_free(set);
	fence_lease_free(la);
	fence_lease_free(lb);
	fence_free(a);
	fence_free(b);
	return rc;
}

/* Healing must not happen once the lock is someone else's. */
static int
test_heal_needs_lock(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("heallock");
	char		big[32];
	char	   *v = NULL;
	int			rc = 1;

	if (!pg_ready)
		SKIP("extension fence not available");
	/* PostgreSQL at 100, Redis counter lost */
	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	rdo("SET %s %s", key(res, "token"), "99");
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	CHECK(fence_lease_token(l) == 100);
	CHECKC(fence_announce(a, l, pg) == FENCE_OK, a);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	rdo("DEL %s%s", key(res, "token"), "");

	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	rdo("SET %s %s", key(res, "lock"), "thief");
	CHECK(fence_announce(a, l, pg) == FENCE_ERR && a->err == FENCE_ERR_LOST);
	v = rget(key(res, "token"));
	snprintf(big, sizeof(big), "%s", v ? v : "");
	CHECK(strcmp(big, "1") == 0);	/* counter untouched */
	rc = 0;
fail:
	free(v);
	rdo("DEL %s %s", key(res, "lock"), key(res, "token"));
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * Heals while the heartbeat renews the lease, which a lost callback could
 * read from its thread: the token changes only on the announcing thread
 * (the heartbeat reads the owner, TTL and deadline, never the token), and
 * the lease stays held throughout.  (Built with -fsanitize=thread, this
 * test reports no race.)
 */
static int
test_heal_under_heartbeat(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_lease *l = NULL;
	const char *res = R("healbeat");
	long long	t0,
				before;
	int			heals = 0,
				rc = 1;

	if (!pg_ready)
		SKIP("extension fence not available");
	l = fence_acquire(a, res, 300);		/* a beat every 100 ms */
	CHECKC(l != NULL, a);
	CHECKC(fence_heartbeat_start(a, l, count_lost, NULL) == FENCE_OK, a);
	t0 = ms_now();
	while (ms_now() - t0 < 1000)
	{
		char		ahead[24];
		const char *params[3] = {res, ahead, "someone-else"};
		PGresult   *r;

		/* PostgreSQL ahead of Redis: the announce must heal */
		before = fence_lease_token(l);
		snprintf(ahead, sizeof(ahead), "%lld", before + 2);
		r = PQexecParams(pg, "SELECT fence.advance($1::text, $2::bigint, $3::text)",
						 3, NULL, params, NULL, NULL, 0);
		CHECK(PQresultStatus(r) == PGRES_TUPLES_OK);
		PQclear(r);
		CHECKC(fence_announce(a, l, pg) == FENCE_OK, a);
		CHECK(fence_lease_token(l) == before + 3);
		heals++;
	}
	CHECK(heals >= 3);
	CHECK(fence_lease_state(l) == FENCE_LEASE_HELD);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

int
main(void)
{
	if (raw_redis_setup("client_setup") != 0)
		return 1;
	pg_setup();

	TEST(url_good);
	TEST(url_skips_verify);
	TEST(tokens_vectors);
	TEST(url_malformed);
	TEST(duration_good);
	TEST(duration_malformed);
	TEST(key_names);
	TEST(script_files);
	TEST(connect_refused);
	TEST(acquire_busy_release);
	TEST(extend);
	TEST(owner_mismatch);
	TEST(bad_arguments);
	TEST(acquire_wait);
	TEST(wait_wakes_on_release);
	TEST(owner_name);
	TEST(wait_fifo);
	TEST(wait_no_barging);
	TEST(wait_no_lost_wakeup);
	TEST(wait_wakeup_before_blpop);
	TEST(wait_dead_waiter);
	TEST(wait_holder_dies);
	TEST(wait_gives_up_passes_on);
	TEST(wait_without_blpop);
	TEST(handover_commands);
	TEST(counter_exact);
	TEST(corrupt_keys);
	TEST(acquire_reads_nothing);
	TEST(noscript_fallback);
	TEST(round_trips);
	TEST(release_acquire);
	TEST(owner_after_fork);
	TEST(fork_child_anew);
	TEST(raw_fork_child_anew);
	TEST(sockets_cloexec);
	TEST(cloexec_fork_race);
	TEST(auth_select);
	TEST(heartbeat_renews);
	TEST(heartbeat_expired);
	TEST(heartbeat_unreachable);
	TEST(heartbeat_deadline);
	TEST(heartbeat_first_beat);
	TEST(extend_race);
	TEST(extend_unknown_outcome);
	TEST(announce_exec);
	TEST(announce_outlasts_lease);
	TEST(exec_lease_lost);
	TEST(exec_copy);
	TEST(pg_hint);
	TEST(pg_round_trips);
	TEST(stale_after_takeover);
	TEST(heal_flushall);
	TEST(exec_first_announces);
	TEST(heal_needs_lock);
	TEST(heal_under_heartbeat);

	PQfinish(pg);
	redisFree(raw);
	printf("# client C tests: %d passed, %d failed, %d skipped\n", tap_passed, tap_failed, tap_skipped);
	return tap_failed ? 1 : 0;
}
