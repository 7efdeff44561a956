/*
 * client/test/test_topo.c
 *	  Tests of libfence on Redis Cluster, Sentinel and a quorum, against
 *	  real servers that test/run.sh starts for the "topo" suite:
 *
 *	  FENCE_TEST_CLUSTER          redis-cluster:// URL of 3 masters
 *	  FENCE_TEST_CLUSTER_PORTS    their ports
 *	  FENCE_TEST_SENTINEL         redis-sentinel:// URL (3 sentinels)
 *	  FENCE_TEST_SENTINEL_PORTS   master port, replica port
 *	  FENCE_TEST_SENTINEL_PIDS    master pid, replica pid
 *	  FENCE_TEST_SENTINELS_PIDS   the 3 sentinels' pids
 *	  FENCE_TEST_QUORUM           5 redis:// URLs, space-separated
 *	  FENCE_TEST_QUORUM_PIDS      their pids
 *
 * A test whose servers are missing is skipped.  Faults are made for real:
 * SIGSTOP freezes a server, FLUSHALL and SCRIPT FLUSH stand for a restart
 * without data, slots are migrated with the commands redis-cli uses.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "fence.h"
#include "tap.h"
#define TEST_PREFIX "topo"
#include "testlib.h"

/* libfence internals under test (fence_key: testlib.h) */
unsigned int fence_key_slot(const char *key, size_t len);

#define MAXN 8

static const char *cluster_url, *sentinel_url, *quorum_url;
static int	cluster_port[MAXN], ncluster;
static int	sentinel_port[2], sentinel_pid[2];
static int	sentinels_pid[MAXN], nsentinels;
static int	quorum_port[MAXN], quorum_pid[MAXN], nquorum;

/* Ports out of "redis://127.0.0.1:P redis://...". */
static int
url_ports(const char *s, int *out)
{
	int			n = 0;
	const char *p = s;

	while (p != NULL && (p = strstr(p, "127.0.0.1:")) != NULL && n < MAXN)
	{
		p += 10;
		out[n++] = atoi(p);
	}
	return n;
}

/* A plain connection to a server, for set-up and checks (NULL if down). */
static redisContext *
raw(int port)
{
	struct timeval tv = {2, 0};
	redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);

	if (c != NULL && c->err)
	{
		redisFree(c);
		return NULL;
	}
	if (c != NULL)
		redisSetTimeout(c, tv);
	return c;
}

static redisReply *
cmd(int port, const char *fmt,...)
{
	redisContext *c = raw(port);
	redisReply *r = NULL;
	va_list		ap;

	if (c == NULL)
		return NULL;
	va_start(ap, fmt);
	r = redisvCommand(c, fmt, ap);
	va_end(ap);
	redisFree(c);
	return r;
}

/* An integer reply, or -999 (also for errors and other types). */
static long long
cmd_int(int port, const char *fmt, const char *a)
{
	redisReply *r = cmd(port, fmt, a);
	long long	v = -999;

	if (r && r->type == REDIS_REPLY_INTEGER)
		v = r->integer;
	if (r)
		freeReplyObject(r);
	return v;
}

/* GET as a number (0 when missing, -1 on anything else). */
static long long
get_num(int port, const char *key)
{
	redisReply *r = cmd(port, "GET %s", key);
	long long	v = -1;

	if (r && r->type == REDIS_REPLY_STRING)
		v = atoll(r->str);
	else if (r && r->type == REDIS_REPLY_NIL)
		v = 0;
	if (r)
		freeReplyObject(r);
	return v;
}

static void
cmd_do(int port, const char *fmt, const char *a, const char *b)
{
	redisReply *r = cmd(port, fmt, a, b);

	if (r)
		freeReplyObject(r);
}

#define key(resource, suffix) key_of((resource), (suffix), 0)

/* "Calls" of a command on one server (INFO commandstats). */
static long long
calls(int port, const char *command)
{
	redisReply *r = cmd(port, "INFO commandstats");
	char		pat[64];
	const char *p;
	long long	n = 0;

	snprintf(pat, sizeof(pat), "cmdstat_%s:calls=", command);
	if (r && r->type == REDIS_REPLY_STRING && (p = strstr(r->str, pat)) != NULL)
		n = atoll(p + strlen(pat));
	if (r)
		freeReplyObject(r);
	return n;
}

/* --- Cluster ------------------------------------------------------------- */

/* The port of the master serving "slot". */
static int
slot_owner(unsigned int slot)
{
	redisReply *r = cmd(cluster_port[0], "CLUSTER SLOTS");
	int			port = -1;
	size_t		i;

	for (i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++)
	{
		redisReply *e = r->element[i];

		if ((unsigned) e->element[0]->integer <= slot && slot <= (unsigned) e->element[1]->integer)
			port = (int) e->element[2]->element[1]->integer;
	}
	if (r)
		freeReplyObject(r);
	return port;
}

static char *
node_id(int port, char *buf, size_t len)
{
	redisReply *r = cmd(port, "CLUSTER MYID");

	snprintf(buf, len, "%s", r && r->type == REDIS_REPLY_STRING ? r->str : "?");
	if (r)
		freeReplyObject(r);
	return buf;
}

/*
 * Our slot of CRC16 matches the server's CLUSTER KEYSLOT, for the keys
 * fence_key() makes from awkward names and from random bytes; and both keys
 * of a resource share a slot, whatever braces its name holds.
 */
static int
test_cluster_keyslot(void)
{
	static const char *names[] = {
		"a", "inventory", "123456789", "{", "{{", "{}", "}{", "a}b", "a{b}c",
		"x{}", "{y}", "ünïcødé", "tab\tname", "sp ace", "fence", ":", "::lock",
		"a}", NULL
	};
	redisContext *c = NULL;
	char		name[80];
	int			i,
				nnames = 0,
				rc = 1;
	unsigned int seed = 12345;

	if (ncluster == 0)
		SKIP("no cluster (FENCE_TEST_CLUSTER)");
	c = raw(cluster_port[0]);
	CHECK(c != NULL);
	/* Redis's documented example: CRC16 of "123456789" is 0x31C3 */
	CHECK(fence_key_slot("123456789", 9) == 0x31C3 % 16384);
	while (names[nnames] != NULL)
		nnames++;
	for (i = 0; i < nnames + 200; i++)
	{
		const char *res = names[i < nnames ? i : 0];
		const char *suffix[2] = {"lock", "token"};
		unsigned int slots[2];
		int			j;

		if (i >= nnames)
		{
			int			k,
						len = 1 + (int) (rand_r(&seed) % 40);

			/* printable bytes with braces well represented */
			for (k = 0; k < len; k++)
			{
				int			x = (int) (rand_r(&seed) % 100);

				name[k] = x < 8 ? '{' : x < 16 ? '}' : (char) (' ' + 1 + x % 94);
			}
			name[len] = '\0';
			res = name;
		}
		for (j = 0; j < 2; j++)
		{
			char	   *k = fence_key(res, suffix[j]);
			redisReply *r;

			CHECK(k != NULL);
			r = redisCommand(c, "CLUSTER KEYSLOT %b", k, strlen(k));
			CHECK(r != NULL && r->type == REDIS_REPLY_INTEGER);
			slots[j] = fence_key_slot(k, strlen(k));
			if ((long long) slots[j] != r->integer)
			{
				snprintf(tap_why, sizeof(tap_why), "key \"%s\": our slot %u, CLUSTER KEYSLOT %lld",
						 k, slots[j], r->integer);
				freeReplyObject(r);
				free(k);
				goto fail;
			}
			freeReplyObject(r);
			free(k);
		}
		/* braces in a name are escaped inside the tag (keys.c) */
		if (slots[0] != slots[1])
		{
			snprintf(tap_why, sizeof(tap_why), "resource \"%s\": lock and token in slots %u and %u",
					 res, slots[0], slots[1]);
			goto fail;
		}
	}
	rc = 0;
fail:
	if (c)
		redisFree(c);
	return rc;
}

/* Leases land on the master that owns their slot, on every master. */
static int
test_cluster_routing(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l[30] = {0};
	int			used[MAXN] = {0};
	int			i,
				j,
				rc = 1;

	CONNECT_OR_SKIP(a, ncluster > 0, cluster_url, "no cluster (FENCE_TEST_CLUSTER)");
	for (i = 0; i < 30; i++)
	{
		char		base[32];
		const char *res;
		const char *k;
		int			owner;

		snprintf(base, sizeof(base), "route%d", i);
		res = R(base);
		l[i] = fence_acquire(a, res, 10000);
		CHECKC(l[i] != NULL, a);
		k = key(res, "lock");
		owner = slot_owner(fence_key_slot(k, strlen(k)));
		for (j = 0; j < ncluster; j++)
		{
			long long	e = cmd_int(cluster_port[j], "EXISTS %s", k);

			if (cluster_port[j] == owner)
			{
				CHECK(e == 1);
				used[j] = 1;
			}
			else
				CHECK(e == -999);	/* MOVED: not this node's key */
		}
	}
	for (j = 0; j < ncluster; j++)
		CHECK(used[j]);
	for (i = 0; i < 30; i++)
		CHECKC(fence_release(a, l[i]) == FENCE_OK, a);
	/* names whose braces would split the two keys over two slots */
	{
		static const char *odd[] = {"}x", "{}", "}{", "a}b{c", "%7D", NULL};
		char		name[64];

		for (i = 0; odd[i]; i++)
		{
			/* the braces first: a prefix would make a tag of its own */
			snprintf(name, sizeof(name), "%s-topo-%d", odd[i], (int) getpid());
			fence_lease_free(l[i]);
			l[i] = fence_acquire(a, name, 10000);
			CHECKC(l[i] != NULL && fence_lease_token(l[i]) == 1, a);
			CHECKC(fence_release(a, l[i]) == FENCE_OK, a);
		}
	}
	rc = 0;
fail:
	for (i = 0; i < 30; i++)
		fence_lease_free(l[i]);
	fence_free(a);
	return rc;
}

/* Move "slot" from port "src" to port "dst": the last step of a migration. */
static void
slot_node(unsigned int slot, int dst)
{
	char		id[64],
				s[16];
	int			j;

	node_id(dst, id, sizeof(id));
	snprintf(s, sizeof(s), "%u", slot);
	for (j = 0; j < ncluster; j++)
		cmd_do(cluster_port[j], "CLUSTER SETSLOT %s NODE %s", s, id);
}

/* The first steps: importing on "dst", migrating on "src". */
static void
slot_migrating(unsigned int slot, int src, int dst)
{
	char		id[64],
				s[16];

	snprintf(s, sizeof(s), "%u", slot);
	cmd_do(dst, "CLUSTER SETSLOT %s IMPORTING %s", s, node_id(src, id, sizeof(id)));
	cmd_do(src, "CLUSTER SETSLOT %s MIGRATING %s", s, node_id(dst, id, sizeof(id)));
}

static void
migrate_key(int src, int dst, const char *k)
{
	redisReply *r = cmd(src, "MIGRATE 127.0.0.1 %d %s 0 5000", dst, k);

	if (r)
		freeReplyObject(r);
}

static int
other_port(int port)
{
	int			j;

	for (j = 0; j < ncluster; j++)
		if (cluster_port[j] != port)
			return cluster_port[j];
	return -1;
}

/*
 * A lease whose slot migrates while it is held: ASK while the keys are on
 * the target and the slot still migrating, MOVED once it has moved.
 */
static int
test_cluster_ask_moved(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	fence_info	info = {0};
	const char *res = R("migrate");
	const char *lk = key(res, "lock");
	unsigned int slot = fence_key_slot(lk, strlen(lk));
	long long	asking,
				token;
	int			src,
				dst,
				rc = 1;

	CONNECT_OR_SKIP(a, ncluster > 0, cluster_url, "no cluster (FENCE_TEST_CLUSTER)");
	l = fence_acquire(a, res, 20000);
	CHECKC(l != NULL, a);
	token = fence_lease_token(l);
	src = slot_owner(slot);
	dst = other_port(src);
	CHECK(src > 0 && dst > 0);

	slot_migrating(slot, src, dst);
	migrate_key(src, dst, key(res, "lock"));
	migrate_key(src, dst, key(res, "token"));
	asking = calls(dst, "asking");
	CHECKC(fence_extend(a, l, 20000) == FENCE_OK, a);
	CHECKC(fence_show(a, res, &info) == FENCE_OK, a);
	CHECK(info.owner != NULL && strcmp(info.owner, fence_lease_owner(l)) == 0 && info.token == token);
	/* an ASKING for each (two when the target had to EVAL the script) */
	CHECK(calls(dst, "asking") >= asking + 2);

	slot_node(slot, dst);
	CHECK(slot_owner(slot) == dst);
	/* the context still thinks "src": MOVED, then the right node */
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	CHECK(cmd_int(dst, "EXISTS %s", key(res, "lock")) == 0);
	fence_lease_free(l);
	l = fence_acquire(a, res, 20000);
	CHECKC(l != NULL, a);
	CHECK(fence_lease_token(l) == token + 1);	/* the counter moved along */
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	fence_info_free(&info);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

typedef struct finish_arg
{
	unsigned int slot;
	int			dst;
	long		after_ms;
} finish_arg;

static void *
finish_later(void *p)
{
	finish_arg *f = p;

	sleep_ms(f->after_ms);
	slot_node(f->slot, f->dst);
	return NULL;
}

/*
 * A migration that has moved the counter but not (yet) the lock key makes
 * the acquire script's two keys live on two nodes: TRYAGAIN, until the
 * migration finishes; the acquire waits it out within its deadline.
 */
static int
test_cluster_tryagain(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("tryagain");
	const char *lk = key(res, "lock");
	finish_arg	f;
	pthread_t	th;
	int			started = 0;
	long long	t0;
	int			src,
				rc = 1;

	CONNECT_OR_SKIP(a, ncluster > 0, cluster_url, "no cluster (FENCE_TEST_CLUSTER)");
	l = fence_acquire(a, res, 20000);
	CHECKC(l != NULL && fence_lease_token(l) == 1, a);
	f.slot = fence_key_slot(lk, strlen(lk));
	src = slot_owner(f.slot);
	f.dst = other_port(src);
	/* longer than sixteen ASK-then-TRYAGAIN rounds take (about 2.3 s):
	 * only the deadline (5 s) may end the wait */
	f.after_ms = 3000;
	slot_migrating(f.slot, src, f.dst);
	/* the token moves; the lock stays behind on the source */
	migrate_key(src, f.dst, key(res, "token"));
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = NULL;
	CHECK(pthread_create(&th, NULL, finish_later, &f) == 0);
	started = 1;
	t0 = ms_now();
	l = fence_acquire(a, res, 20000);
	CHECKC(l != NULL, a);
	CHECK(ms_now() - t0 >= 2900);	/* it did wait for the migration */
	CHECK(fence_lease_token(l) == 2);
	CHECK(cmd_int(f.dst, "EXISTS %s", key(res, "lock")) == 1);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	if (started)
		pthread_join(th, NULL);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* No seed reachable: an I/O error at connect, naming the node. */
static int
test_cluster_unreachable(void)
{
	fence_ctx  *a = fence_connect_timeout("redis-cluster://127.0.0.1:1,127.0.0.1:2", 500, 500);
	int			rc = 1;

	CHECK(a != NULL && a->err == FENCE_ERR_IO && strstr(a->errstr, "127.0.0.1:") != NULL);
	rc = 0;
fail:
	fence_free(a);
	return rc;
}

/* Masters without replicas cannot satisfy --min-replicas: lease given back. */
static int
test_cluster_min_replicas(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("cwait");
	const char *lk = key(res, "lock");
	long long	t0;
	int			rc = 1;

	CONNECT_OR_SKIP(a, ncluster > 0, cluster_url, "no cluster (FENCE_TEST_CLUSTER)");
	CHECKC(fence_set_min_replicas(a, 1, 150) == FENCE_OK, a);
	t0 = ms_now();
	l = fence_acquire(a, res, 10000);
	CHECK(l == NULL && a->err == FENCE_ERR_REPLICAS);
	CHECK(strstr(a->errstr, "0 of the 1 replicas") != NULL);
	CHECK(ms_now() - t0 >= 140);
	CHECK(cmd_int(slot_owner(fence_key_slot(lk, strlen(lk))), "EXISTS %s", lk) == 0);
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* --- Sentinel ------------------------------------------------------------ */

static int
test_sentinel_resolve(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("sentinel");
	char		url[512];
	const char *p,
			   *first;
	struct sockaddr_in sa;
	socklen_t	salen = sizeof(sa);
	int			silent = -1,
				rc = 1;

	CONNECT_OR_SKIP(a, sentinel_url != NULL, sentinel_url, "no sentinels (FENCE_TEST_SENTINEL)");
	l = fence_acquire(a, res, 10000);
	CHECKC(l != NULL, a);
	CHECK(cmd_int(sentinel_port[0], "EXISTS %s", key(res, "lock")) == 1);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_free(a);

	/* a dead sentinel first in the list is skipped */
	snprintf(url, sizeof(url), "redis-sentinel://127.0.0.1:1,%s", sentinel_url + strlen("redis-sentinel://"));
	a = fence_connect(url);
	CHECKC(a->err == 0, a);
	fence_free(a);

	/* a master no sentinel knows */
	p = strrchr(sentinel_url, '/');
	snprintf(url, sizeof(url), "%.*s/nosuchmaster", (int) (p - sentinel_url), sentinel_url);
	a = fence_connect_timeout(url, 300, 300);
	CHECKC(a->err == FENCE_ERR_IO && strstr(a->errstr, "knows no master named \"nosuchmaster\"") != NULL, a);
	fence_free(a);

	/*
	 * ... and says so when the next sentinel never answers: its silence,
	 * or the budget running out, does not hide the first one's answer
	 * (under load the message once became the last sentinel's timeout)
	 */
	silent = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(silent >= 0 && bind(silent, (struct sockaddr *) &sa, sizeof(sa)) == 0 && listen(silent, 8) == 0);
	CHECK(getsockname(silent, (struct sockaddr *) &sa, &salen) == 0);
	first = sentinel_url + strlen("redis-sentinel://");
	snprintf(url, sizeof(url), "redis-sentinel://%.*s,127.0.0.1:%d/nosuchmaster",
			 (int) strcspn(first, ",/"), first, ntohs(sa.sin_port));
	a = fence_connect_timeout(url, 300, 300);
	CHECKC(a->err == FENCE_ERR_IO && strstr(a->errstr, "knows no master named \"nosuchmaster\"") != NULL, a);
	rc = 0;
fail:
	if (silent >= 0)
		close(silent);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* The call a cut one is finished by, on a thread of its own. */
typedef struct
{
	fence_ctx  *ctx;
	const char *res;
	fence_lease *l;
} cut_finish;

static void *
cut_finish_acquire(void *p)
{
	cut_finish *f = p;

	fence_set_reply_bound(f->ctx, 0);
	f->l = fence_acquire(f->ctx, f->res, 10000);
	return NULL;
}

/*
 * The reply bound (fence_set_reply_bound), on Sentinel: with the master
 * frozen, an acquire and a release are cut within about the bound, their
 * requests left in flight, and the same calls made again (the acquire on
 * another thread) read the answers once the master runs again: one token
 * counted, the lock the lease's.  A cut release that is not taken up (a
 * different call came first) and then finds the lock gone says the
 * outcome is unknown, not "lost": the cut request may have given it back.
 * A quorum refuses the bound.
 */
static int
test_sentinel_reply_bound(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("bound");
	cut_finish f = {NULL, NULL, NULL};
	pthread_t	th;
	fence_info	info;
	long long	t0,
				token;
	int			frozen = 0,
				rc = 1;

	CONNECT_OR_SKIP(a, sentinel_url != NULL, sentinel_url, "no sentinels (FENCE_TEST_SENTINEL)");
	CHECKC(fence_set_reply_bound(a, 20) == FENCE_OK, a);
	l = fence_acquire(a, res, 10000);
	CHECKC(l != NULL && !fence_call_cut(a), a);
	token = fence_lease_token(l);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = NULL;

	/* an acquire cut, and finished on another thread */
	CHECK(kill(sentinel_pid[0], SIGSTOP) == 0);
	frozen = 1;
	t0 = ms_now();
	l = fence_acquire(a, res, 10000);
	CHECK(l == NULL && fence_call_cut(a) && a->err == FENCE_ERR_IO);
	CHECK(ms_now() - t0 < 500);
	f.ctx = a;
	f.res = res;
	CHECK(pthread_create(&th, NULL, cut_finish_acquire, &f) == 0);
	sleep_ms(300);
	CHECK(kill(sentinel_pid[0], SIGCONT) == 0);
	frozen = 0;
	pthread_join(th, NULL);
	l = f.l;
	CHECKC(l != NULL, a);
	CHECK(fence_lease_token(l) == token + 1);
	CHECK(get_num(sentinel_port[0], key(res, "token")) == token + 1);
	CHECK(fence_lease_state(l) == FENCE_LEASE_HELD);

	/* a release cut, and finished */
	CHECKC(fence_set_reply_bound(a, 20) == FENCE_OK, a);
	CHECK(kill(sentinel_pid[0], SIGSTOP) == 0);
	frozen = 1;
	CHECK(fence_release(a, l) == FENCE_ERR && fence_call_cut(a));
	CHECK(kill(sentinel_pid[0], SIGCONT) == 0);
	frozen = 0;
	CHECKC(fence_set_reply_bound(a, 0) == FENCE_OK, a);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	CHECK(cmd_int(sentinel_port[0], "EXISTS %s", key(res, "lock")) == 0);
	fence_lease_free(l);
	l = NULL;

	/* a release cut and not taken up: made again, outcome unknown */
	CHECKC(fence_set_reply_bound(a, 20) == FENCE_OK, a);
	l = fence_acquire(a, res, 10000);
	CHECKC(l != NULL, a);
	CHECK(kill(sentinel_pid[0], SIGSTOP) == 0);
	frozen = 1;
	CHECK(fence_release(a, l) == FENCE_ERR && fence_call_cut(a));
	CHECK(kill(sentinel_pid[0], SIGCONT) == 0);
	frozen = 0;
	sleep_ms(100);				/* the cut release runs */
	CHECK(cmd_int(sentinel_port[0], "EXISTS %s", key(res, "lock")) == 0);
	CHECKC(fence_set_reply_bound(a, 0) == FENCE_OK, a);
	CHECKC(fence_show(a, res, &info) == FENCE_OK, a);
	fence_info_free(&info);
	CHECK(fence_release(a, l) == FENCE_ERR && a->err == FENCE_ERR_IO);
	CHECK(strstr(a->errstr, "outcome unknown") != NULL);
	fence_lease_free(l);
	l = NULL;
	fence_free(a);
	a = NULL;

	/* a quorum's rounds are not bounded */
	if (quorum_url != NULL)
	{
		a = fence_connect(quorum_url);
		CHECKC(a->err == 0, a);
		CHECK(fence_set_reply_bound(a, 20) == FENCE_ERR && a->err == FENCE_ERR_ARG);
	}
	rc = 0;
fail:
	if (frozen)
		kill(sentinel_pid[0], SIGCONT);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * WAIT: with the replica up, the acquire counts; with it frozen, fewer
 * acknowledge in time and the lease is given back.
 */
static int
test_sentinel_min_replicas(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("swait");
	int			frozen = 0;
	long long	t0;
	int			rc = 1;

	CONNECT_OR_SKIP(a, sentinel_url != NULL, sentinel_url, "no sentinels (FENCE_TEST_SENTINEL)");
	CHECKC(fence_set_min_replicas(a, 1, 2000) == FENCE_OK, a);
	l = fence_acquire(a, res, 10000);
	CHECKC(l != NULL, a);
	/* the replica has the lock and the token already */
	CHECK(get_num(sentinel_port[1], key(res, "token")) == fence_lease_token(l));
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = NULL;

	CHECK(fence_set_min_replicas(a, 1, 0) == FENCE_ERR && a->err == FENCE_ERR_ARG);
	CHECKC(fence_set_min_replicas(a, 1, 200) == FENCE_OK, a);
	CHECK(kill(sentinel_pid[1], SIGSTOP) == 0);
	frozen = 1;
	t0 = ms_now();
	l = fence_acquire(a, res, 10000);
	CHECK(l == NULL && a->err == FENCE_ERR_REPLICAS);
	CHECK(ms_now() - t0 >= 190);
	CHECK(cmd_int(sentinel_port[0], "EXISTS %s", key(res, "lock")) == 0);
	rc = 0;
fail:
	if (frozen)
		kill(sentinel_pid[1], SIGCONT);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * A heal that too few replicas acknowledge gives the lease back: the lease
 * must say LOST then, not HELD (fenced SQL would go on under a lock that
 * is gone).
 */
static int
test_sentinel_heal_replicas(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("shealwait");
	char		ahead[24];
	const char *params[3] = {res, ahead, "someone-else"};
	PGresult   *r;
	int			frozen = 0,
				rc = 1;

	if (sentinel_url != NULL && !pg_ready)
		SKIP("extension fence not available");
	CONNECT_OR_SKIP(a, sentinel_url != NULL, sentinel_url, "no sentinels (FENCE_TEST_SENTINEL)");
	CHECKC(fence_set_min_replicas(a, 1, 200) == FENCE_OK, a);
	l = fence_acquire(a, res, 10000);
	CHECKC(l != NULL, a);
	/* PostgreSQL is ahead of Redis (a failover lost the counter) */
	snprintf(ahead, sizeof(ahead), "%lld", fence_lease_token(l) + 5);
	r = PQexecParams(pg, "SELECT fence.advance($1::text, $2::bigint, $3::text)",
					 3, NULL, params, NULL, NULL, 0);
	CHECK(PQresultStatus(r) == PGRES_TUPLES_OK);
	PQclear(r);
	/* the heal raises the counter, but no replica acknowledges it */
	CHECK(kill(sentinel_pid[1], SIGSTOP) == 0);
	frozen = 1;
	CHECK(fence_announce(a, l, pg) == FENCE_ERR && a->err == FENCE_ERR_REPLICAS);
	CHECK(cmd_int(sentinel_port[0], "EXISTS %s", key(res, "lock")) == 0);
	CHECK(fence_lease_state(l) == FENCE_LEASE_LOST);
	rc = 0;
fail:
	if (frozen)
		kill(sentinel_pid[1], SIGCONT);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * Silent sentinels must not starve the heartbeat: with every sentinel
 * frozen, the extends still reach the (healthy) master in time, and when
 * the connection to it is lost, the heartbeat connects to the master it
 * knew last.  Before the sentinels' time was capped, asking them took the
 * whole time the extend had and the lease was lost.
 */
static int
test_sentinel_silent(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("ssilent");
	const long	ttl = 1500;
	long long	t0;
	int			frozen = 0,
				killed = 0,
				i,
				rc = 1;

	CONNECT_OR_SKIP(a, sentinel_url != NULL && nsentinels == 3, sentinel_url, "no sentinels (FENCE_TEST_SENTINEL, FENCE_TEST_SENTINELS_PIDS)");
	l = fence_acquire(a, res, ttl);
	CHECKC(l != NULL, a);
	CHECKC(fence_heartbeat_start(a, l, NULL, NULL) == FENCE_OK, a);
	for (i = 0; i < nsentinels; i++)
		CHECK(kill(sentinels_pid[i], SIGSTOP) == 0);
	frozen = 1;

	/*
	 * Three TTLs: every extend asks the frozen sentinels first.  Halfway,
	 * cut the heartbeat's connection to the master, so that it must
	 * connect again without a sentinel's word.
	 */
	t0 = ms_now();
	while (ms_now() - t0 < 3 * ttl)
	{
		CHECK(fence_lease_state(l) != FENCE_LEASE_LOST);
		if (!killed && ms_now() - t0 > 3 * ttl / 2)
		{
			redisReply *r = cmd(sentinel_port[0], "CLIENT KILL TYPE normal");

			CHECK(r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer >= 1);
			freeReplyObject(r);
			killed = 1;
		}
		sleep_ms(20);
	}
	CHECK(fence_lease_state(l) == FENCE_LEASE_HELD);
	/* and it is the master's lock that was renewed all along */
	CHECK(cmd_int(sentinel_port[0], "PTTL %s", key(res, "lock")) > ttl / 3);
	for (i = 0; i < nsentinels; i++)
		kill(sentinels_pid[i], SIGCONT);
	frozen = 0;
	/* CLIENT KILL cut our own connection too: the first command notices */
	{
		fence_info	info;

		if (fence_show(a, res, &info) == FENCE_OK)
			fence_info_free(&info);
	}
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	if (frozen)
		for (i = 0; i < nsentinels; i++)
			kill(sentinels_pid[i], SIGCONT);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* Thaw the Sentinel master "thaw_after_ms" after the thread starts. */
static long thaw_after_ms;

static void *
thaw_master(void *arg)
{
	(void) arg;
	sleep_ms(thaw_after_ms);
	kill(sentinel_pid[0], SIGCONT);
	return NULL;
}

/*
 * A waiter's attempt that outlasts the TTL still gives a usable lease (or
 * set).  On
 * a failover one attempt reconnects and asks the sentinels until the new
 * master answers; here the master is frozen while the attempt is in
 * flight and answers 1.5 s later, three TTLs after the attempt was sent.
 * The lock is the waiter's, and its deadline, counted from the send, has
 * passed: the waiter must extend it (or ask again), not hand back a lease
 * lost before its first use, which made "fence run --wait" exit 76 in the
 * middle of a failover it had time to ride.
 */
static int
test_sentinel_slow_attempt(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("sslow");
	const char *names[2] = {R("sslow-a"), R("sslow-b")};
	fence_leases *set = NULL;
	pthread_t	thawer;
	int			frozen = 0,
				rc = 1;
	long long	t0;

	CONNECT_OR_SKIP(a, sentinel_url != NULL, sentinel_url, "no sentinels (FENCE_TEST_SENTINEL)");
	/* connected, and the sentinels asked just now: the attempt goes to the master */
	l = fence_acquire(a, R("sslow-warm"), 10000);
	CHECKC(l != NULL, a);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = NULL;

	CHECK(kill(sentinel_pid[0], SIGSTOP) == 0);
	frozen = 1;
	thaw_after_ms = 1500;
	CHECK(pthread_create(&thawer, NULL, thaw_master, NULL) == 0);
	t0 = ms_now();
	l = fence_acquire_wait(a, res, 500, 10000);
	pthread_join(thawer, NULL);
	frozen = 0;
	CHECKC(l != NULL, a);
	CHECK(ms_now() - t0 >= 1400);
	CHECK(fence_lease_state(l) == FENCE_LEASE_HELD);
	CHECK(cmd_int(sentinel_port[0], "PTTL %s", key(res, "lock")) > 0);
	CHECKC(fence_release(a, l) == FENCE_OK, a);

	/* the same for a set, whose first attempt is one pipeline of acquires */
	CHECK(kill(sentinel_pid[0], SIGSTOP) == 0);
	frozen = 1;
	CHECK(pthread_create(&thawer, NULL, thaw_master, NULL) == 0);
	set = fence_acquire_many_wait(a, names, 2, 500, 10000);
	pthread_join(thawer, NULL);
	frozen = 0;
	CHECKC(set != NULL, a);
	CHECK(fence_leases_state(set) == FENCE_LEASE_HELD);
	CHECKC(fence_leases_release(a, set) == FENCE_OK, a);
	rc = 0;
fail:
	if (frozen)
		kill(sentinel_pid[0], SIGCONT);
	fence_leases_free(set);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* --- Quorum -------------------------------------------------------------- */

/* The quorum's nodes frozen (SIGSTOP), one bit each: qthaw_all thaws them. */
static unsigned int qfrozen;

static void
qfreeze(int i)
{
	qfrozen |= 1u << i;
	kill(quorum_pid[i], SIGSTOP);
}

static void
qthaw(int i)
{
	qfrozen &= ~(1u << i);
	kill(quorum_pid[i], SIGCONT);
}

/* Thaw every node still frozen: the end of a test, however it ended. */
static void
qthaw_all(void)
{
	for (int i = 0; i < MAXN; i++)
		if (qfrozen & (1u << i))
			qthaw(i);
}

/* A node restarting without its data: keys and scripts gone. */
static void
qwipe(int i)
{
	cmd_do(quorum_port[i], "FLUSHALL", NULL, NULL);
	cmd_do(quorum_port[i], "SCRIPT FLUSH", NULL, NULL);
}

static int
test_quorum_basic(void)
{
	fence_ctx  *a = NULL,
			   *b = NULL;
	fence_lease *l = NULL,
			   *m = NULL;
	fence_info	info = {0};
	const char *res = R("qbasic");
	int			i,
				rc = 1;

	if (nquorum == 0)
		SKIP("no quorum (FENCE_TEST_QUORUM)");
	a = fence_connect(quorum_url);
	b = fence_connect(quorum_url);
	CHECKC(a->err == 0, a);
	l = fence_acquire(a, res, 10000);
	CHECKC(l != NULL && fence_lease_token(l) == 1, a);
	for (i = 0; i < nquorum; i++)
	{
		CHECK(cmd_int(quorum_port[i], "EXISTS %s", key(res, "lock")) == 1);
		CHECK(get_num(quorum_port[i], key(res, "token")) == 1);
	}
	m = fence_acquire(b, res, 10000);
	CHECK(m == NULL && b->err == FENCE_ERR_BUSY);
	CHECK(fence_busy_pttl(b) > 9000 && fence_busy_pttl(b) <= 10000);
	CHECKC(fence_extend(a, l, 20000) == FENCE_OK, a);
	CHECKC(fence_show(b, res, &info) == FENCE_OK, b);
	CHECK(info.owner != NULL && strcmp(info.owner, fence_lease_owner(l)) == 0);
	CHECK(info.pttl_ms > 19000 && info.token == 1);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	CHECK(fence_release(a, l) == FENCE_ERR && a->err == FENCE_ERR_LOST);
	for (i = 0; i < nquorum; i++)
		CHECK(cmd_int(quorum_port[i], "EXISTS %s", key(res, "lock")) == 0);
	m = fence_acquire(b, res, 10000);
	CHECKC(m != NULL && fence_lease_token(m) == 2, b);
	CHECKC(fence_release_owner(a, res, fence_lease_owner(m)) == FENCE_OK, a);
	rc = 0;
fail:
	fence_info_free(&info);
	fence_lease_free(l);
	fence_lease_free(m);
	fence_free(a);
	fence_free(b);
	return rc;
}

/*
 * The quoted words of a MONITOR line ("1.2 [0 127.0.0.1:5] \"EVALSHA\" ...")
 * into "w", escapes kept; how many.
 */
static int
monitor_words(const char *line, char w[][200], int max)
{
	int			n = 0;
	const char *p = strchr(line, '"');

	while (p != NULL && n < max)
	{
		size_t		len = 0;

		for (p++; *p && *p != '"'; p++)
		{
			if (*p == '\\' && p[1])
				p++;
			if (len < 199)
				w[n][len++] = *p;
		}
		w[n++][len] = '\0';
		p = *p ? strchr(p + 1, '"') : NULL;
	}
	return n;
}

/*
 * A release that a node runs late must not delete a later attempt's lock.
 * A request that timed out still travels: fanout.c drops its connection,
 * and the node may run it after the next attempt locked on a new one.  A
 * waiter's first attempt takes the lock on the free nodes, too few, and
 * gives it back; its second takes it everywhere.  Replaying the first
 * attempt's release on a node (as a late one would run) leaves the second
 * attempt's lock in place: each attempt locks under an owner of its own.
 */
static int
test_quorum_late_release(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	redisContext *mon = NULL;
	redisReply *r = NULL;
	const char *res = R("qlate");
	char		w[12][200],
				seen[8][200],
				marker[64];
	int			free_node = nquorum - 1,
				nseen = 0,
				done = 0,
				i,
				rc = 1;

	if (nquorum < 3)
		SKIP("no quorum of 3 (FENCE_TEST_QUORUM)");
	/* another owner holds a majority for 300 ms; the last node is free */
	for (i = 0; i < nquorum / 2 + 1; i++)
		cmd_do(quorum_port[i], "SET %s other PX 300", key(res, "lock"), NULL);
	CHECK((mon = raw(quorum_port[free_node])) != NULL);
	r = redisCommand(mon, "MONITOR");
	CHECK(r != NULL && r->type == REDIS_REPLY_STATUS);
	freeReplyObject(r);
	r = NULL;
	a = fence_connect(quorum_url);
	CHECKC(a->err == 0, a);
	l = fence_acquire_wait(a, res, 10000, 5000);
	CHECKC(l != NULL, a);

	/* the lock rounds the free node saw: KEYS lock.. and the owner */
	snprintf(marker, sizeof(marker), "end-%s", res);
	cmd_do(quorum_port[free_node], "ECHO %s", marker, NULL);
	while (!done && redisGetReply(mon, (void **) &r) == REDIS_OK && r != NULL)
	{
		int			n = r->type == REDIS_REPLY_STATUS ? monitor_words(r->str, w, 12) : 0;

		if (n == 2 && strcmp(w[1], marker) == 0)
			done = 1;
		else if (n == 10 && strcmp(w[2], "4") == 0 &&
				 strcmp(w[3], key(res, "lock")) == 0 && nseen < 8)
			snprintf(seen[nseen++], sizeof(seen[0]), "%s", w[7]);
		freeReplyObject(r);
		r = NULL;
	}
	CHECK(done);
	/* two attempts at least: one that failed, the one that took it */
	CHECK(nseen >= 2);
	CHECK(strcmp(seen[nseen - 1], fence_lease_owner(l)) == 0);
	for (i = 0; i < nseen - 1; i++)
	{
		/* what a release does to the lock: compare-and-delete */
		r = cmd(quorum_port[free_node], "EVAL %s 1 %s %s",
				"if redis.call('GET', KEYS[1]) == ARGV[1] then "
				"return redis.call('DEL', KEYS[1]) end return 0",
				key(res, "lock"), seen[i]);
		CHECK(r != NULL && r->type == REDIS_REPLY_INTEGER);
		freeReplyObject(r);
		r = cmd(quorum_port[free_node], "GET %s", key(res, "lock"));
		CHECK(r != NULL && r->type == REDIS_REPLY_STRING &&
			  strcmp(r->str, fence_lease_owner(l)) == 0);
		freeReplyObject(r);
		r = NULL;
	}
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	if (r)
		freeReplyObject(r);
	if (mon)
		redisFree(mon);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* Take and give back a lease; its token (0 on failure). */
static long long
cycle(fence_ctx *a, const char *res)
{
	fence_lease *l = fence_acquire(a, res, 5000);
	long long	t;

	if (l == NULL)
		return 0;
	t = fence_lease_token(l);
	if (fence_release(a, l) != FENCE_OK)
		t = 0;
	fence_lease_free(l);
	return t;
}

/*
 * Every node's counter is "*token", after at most three more cycles (a
 * node whose answer a loaded host lost to the per-node timeout is repaired
 * by the next claim that reaches it); each cycle's token goes up.
 */
static int
all_repaired(fence_ctx *a, const char *res, long long *token)
{
	int			tries,
				i;

	for (tries = 0; tries < 4; tries++)
	{
		long long	t;

		for (i = 0; i < nquorum; i++)
			if (get_num(quorum_port[i], key(res, "token")) != *token)
				break;
		if (i == nquorum)
			return 1;
		t = cycle(a, res);
		if (t <= *token)
			return 0;
		*token = t;
	}
	return 0;
}

/*
 * Tokens survive a minority of nodes restarting empty, and the next claim
 * repairs their counters (their script caches too: NOSCRIPT then EVAL).
 */
static int
test_quorum_minority_restart(void)
{
	fence_ctx  *a = NULL;
	const char *res = R("qrestart");
	long long	t1,
				t2,
				t3;
	int			rc = 1;

	CONNECT_OR_SKIP(a, nquorum >= 5, quorum_url, "no quorum of 5 (FENCE_TEST_QUORUM)");
	t1 = cycle(a, res);
	CHECKC(t1 > 0, a);
	qwipe(0);
	qwipe(1);
	t2 = cycle(a, res);
	CHECKC(t2 > t1, a);
	CHECKC(all_repaired(a, res, &t2), a);
	/* the other two now, the repaired ones keeping the count */
	qwipe(3);
	qwipe(4);
	t3 = cycle(a, res);
	CHECKC(t3 > t2, a);
	CHECKC(all_repaired(a, res, &t3), a);
	rc = 0;
fail:
	fence_free(a);
	return rc;
}

/*
 * A frozen minority costs one per-node timeout (TTL/20), no more, and
 * misses the claims; the next acquire after it thaws repairs it.
 */
static int
test_quorum_minority_frozen(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("qfrozen");
	long long	t0,
				t1,
				took;
	int			rc = 1;

	CONNECT_OR_SKIP(a, nquorum >= 5, quorum_url, "no quorum of 5 (FENCE_TEST_QUORUM)");
	t1 = cycle(a, res);
	CHECKC(t1 > 0, a);
	qfreeze(1);
	qfreeze(2);
	t0 = ms_now();
	l = fence_acquire(a, res, 4000);
	took = ms_now() - t0;
	CHECKC(l != NULL && fence_lease_token(l) == t1 + 1, a);
	/* the lock round (its guess holds) waits out one 200 ms per-node
	 * timeout */
	CHECK(took >= 190 && took < 1500);
	CHECKC(fence_extend(a, l, 4000) == FENCE_OK, a);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	qthaw(1);
	qthaw(2);
	/*
	 * The thawed nodes now run what was queued in their sockets while they
	 * were frozen (a late lock, then its release), as a delayed network
	 * would deliver it: wait for that to pass.
	 */
	t0 = ms_now();
	while (cmd_int(quorum_port[1], "EXISTS %s", key(res, "lock")) != 0 && ms_now() - t0 < 5000)
		sleep_ms(20);
	/* the late lock carried the guess t1 + 1, the token that acquire got,
	 * and raised the counter to it: never past a token handed out */
	CHECK(get_num(quorum_port[1], key(res, "token")) == t1 + 1);
	CHECKC(cycle(a, res) == t1 + 2, a);
	CHECK(get_num(quorum_port[1], key(res, "token")) == t1 + 2);
	rc = 0;
fail:
	qthaw_all();
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* Without a majority nothing is acquired, and the error says why. */
static int
test_quorum_majority_down(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("qdown");
	int			i,
				rc = 1;

	CONNECT_OR_SKIP(a, nquorum >= 5, quorum_url, "no quorum of 5 (FENCE_TEST_QUORUM)");
	for (i = 0; i < 3; i++)
		qfreeze(i);
	l = fence_acquire(a, res, 2000);
	CHECK(l == NULL && a->err == FENCE_ERR_IO);
	CHECK(strstr(a->errstr, "2 of 5 Redis nodes, a majority needs 3") != NULL);
	CHECK(strstr(a->errstr, "timed out") != NULL);
	/* what it took on the others was given back */
	CHECK(cmd_int(quorum_port[3], "EXISTS %s", key(res, "lock")) == 0);
	rc = 0;
fail:
	qthaw_all();
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * A claim refused by a majority (their counters are ahead) is tried again
 * above the highest counter that refused.  Reached through healing: PG's
 * mark is ahead of the lease's token, and three nodes are further ahead.
 */
static int
test_quorum_claim_refused(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("qrefused");
	char		big[24],
				mark[24];
	const char *params[2] = {res, mark};
	PGresult   *r;
	long long	t;
	int			i,
				rc = 1;

	if (nquorum >= 5 && !pg_ready)
		SKIP("extension fence not available");
	CONNECT_OR_SKIP(a, nquorum >= 5, quorum_url, "no quorum of 5 (FENCE_TEST_QUORUM)");
	l = fence_acquire(a, res, 10000);
	CHECKC(l != NULL, a);
	t = fence_lease_token(l);
	snprintf(mark, sizeof(mark), "%lld", t + 5);
	r = PQexecParams(pg, "SELECT fence.advance($1, $2)", 2, NULL, params, NULL, NULL, 0);
	CHECK(PQresultStatus(r) == PGRES_TUPLES_OK);
	PQclear(r);
	snprintf(big, sizeof(big), "%lld", t + 40);
	for (i = 0; i < 3; i++)
		cmd_do(quorum_port[i], "SET %s %s", key(res, "token"), big);
	CHECKC(fence_announce(a, l, pg) == FENCE_OK, a);
	CHECK(fence_lease_token(l) == t + 41);
	for (i = 0; i < nquorum; i++)
		CHECK(get_num(quorum_port[i], key(res, "token")) == t + 41);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * The assumption broken: the nodes that kept the counter are frozen and
 * the others lost it.  The quorum hands out a low token again; PostgreSQL
 * refuses it and the client heals above PostgreSQL's mark on a majority.
 */
static int
test_quorum_backstop(void)
{
	fence_ctx  *a = NULL,
			   *b = NULL;
	fence_lease *l = NULL;
	const char *res = R("qbackstop");
	long long	t;
	int			i,
				rc = 1;

	if (nquorum >= 5 && !pg_ready)
		SKIP("extension fence not available");
	CONNECT_OR_SKIP(a, nquorum >= 5, quorum_url, "no quorum of 5 (FENCE_TEST_QUORUM)");
	for (i = 0; i < 3; i++)
	{
		l = fence_acquire(a, res, 10000);
		CHECKC(l != NULL, a);
		CHECKC(fence_announce(a, l, pg) == FENCE_OK, a);
		CHECKC(fence_release(a, l) == FENCE_OK, a);
		fence_lease_free(l);
		l = NULL;
	}
	t = 3;
	qfreeze(3);
	qfreeze(4);
	for (i = 0; i < 3; i++)
		qwipe(i);
	/* a new worker, which knows no counter to guess from (a, which saw 3,
	 * would guess 4 and get it in one round: store/quorum.c) */
	b = fence_connect(quorum_url);
	CHECKC(b->err == 0, b);
	l = fence_acquire(b, res, 10000);
	CHECKC(l != NULL && fence_lease_token(l) == 1, b);	/* repeated */
	CHECKC(fence_announce(b, l, pg) == FENCE_OK, b);	/* healed */
	CHECK(fence_lease_token(l) == t + 1);
	for (i = 0; i < 3; i++)
		CHECK(get_num(quorum_port[i], key(res, "token")) == t + 1);
	CHECKC(fence_release(b, l) == FENCE_OK, b);
	rc = 0;
fail:
	qthaw_all();
	fence_lease_free(l);
	fence_free(a);
	fence_free(b);
	return rc;
}

/* The heartbeat extends on a majority; it loses the lease with it. */
static int
test_quorum_heartbeat(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("qheart");
	long long	t0;
	int			rc = 1;

	CONNECT_OR_SKIP(a, nquorum >= 5, quorum_url, "no quorum of 5 (FENCE_TEST_QUORUM)");
	lost_calls = 0;
	l = fence_acquire(a, res, 900);
	CHECKC(l != NULL, a);
	CHECKC(fence_heartbeat_start(a, l, count_lost, NULL) == FENCE_OK, a);
	qfreeze(0);					/* a minority: nothing changes */
	sleep_ms(2000);
	CHECK(fence_lease_state(l) == FENCE_LEASE_HELD && lost_calls == 0);
	qfreeze(1);
	qfreeze(2);					/* a majority: lost by the deadline */
	t0 = ms_now();
	while (lost_calls == 0 && ms_now() - t0 < 3000)
		sleep_ms(10);
	CHECK(lost_calls == 1 && ms_now() - t0 < 1500);
	CHECK(fence_lease_state(l) == FENCE_LEASE_LOST);
	rc = 0;
fail:
	qthaw_all();
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * A worker that takes the same resource again guesses its next token and
 * claims it with the lock, in one round (store/quorum.c).  The guess must
 * never hand out a token that is not above every counter: after another
 * worker took the resource (a's guess is then taken), and after a node's
 * counter moved ahead (a's guess is below it), the acquire falls back to
 * the claim round and still gets a token above all of them.
 */
static int
test_quorum_one_round(void)
{
	fence_ctx  *a = NULL,
			   *b = NULL;
	fence_lease *l = NULL;
	const char *res = R("qround");
	long long	evalshas = 0;
	int			i,
				rc = 1;

	if (nquorum < 3)
		SKIP("no quorum of 3 (FENCE_TEST_QUORUM)");
	a = fence_connect(quorum_url);
	b = fence_connect(quorum_url);
	CHECKC(a->err == 0 && b->err == 0, a);
	/* first time: nothing known, lock round and claim round */
	for (i = 0; i < nquorum; i++)
		cmd_do(quorum_port[i], "CONFIG RESETSTAT", NULL, NULL);
	CHECKC((l = fence_acquire(a, res, 10000)) != NULL && fence_lease_token(l) == 1, a);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = NULL;
	/* the lock and claim scripts read a sound counter with one GET, no TYPE
	 * (they once ran TYPE and GET on every call) */
	for (i = 0; i < nquorum; i++)
		CHECK(calls(quorum_port[i], "type") == 0);

	/* again: one script per node, the lock round alone */
	for (i = 0; i < nquorum; i++)
		cmd_do(quorum_port[i], "CONFIG RESETSTAT", NULL, NULL);
	CHECKC((l = fence_acquire(a, res, 10000)) != NULL && fence_lease_token(l) == 2, a);
	for (i = 0; i < nquorum; i++)
	{
		/* the EVALSHAs since CONFIG RESETSTAT, and no TYPE */
		evalshas += calls(quorum_port[i], "evalsha");
		CHECK(calls(quorum_port[i], "type") == 0);
		CHECK(get_num(quorum_port[i], key(res, "token")) == 2);
	}
	CHECK(evalshas == nquorum);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = NULL;

	/* b takes token 3: a's guess, 3, is taken and must not be handed out */
	CHECKC((l = fence_acquire(b, res, 10000)) != NULL && fence_lease_token(l) == 3, b);
	CHECKC(fence_release(b, l) == FENCE_OK, b);
	fence_lease_free(l);
	l = NULL;
	CHECKC((l = fence_acquire(a, res, 10000)) != NULL && fence_lease_token(l) == 4, a);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = NULL;

	/* one node's counter ahead (a minority restarted with other data, or a
	 * heal reached it): a's guess 5 is below it, the token goes above */
	cmd_do(quorum_port[0], "SET %s 100", key(res, "token"), NULL);
	CHECKC((l = fence_acquire(a, res, 10000)) != NULL && fence_lease_token(l) == 101, a);
	for (i = 0; i < nquorum; i++)
		CHECK(get_num(quorum_port[i], key(res, "token")) == 101);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	fence_free(b);
	return rc;
}

/* Quorum members must be single nodes; WAIT makes no sense there. */
static int
test_quorum_bad_arguments(void)
{
	fence_ctx  *a = NULL;
	char		many[2048] = "";
	int			i,
				rc = 1;

	a = fence_connect("redis://127.0.0.1:1 redis-cluster://127.0.0.1:2");
	CHECK(a->err == FENCE_ERR_ARG && strstr(a->errstr, "must be a redis://, rediss:// or unix://") != NULL);
	fence_free(a);
	a = fence_connect("redis://127.0.0.1:1 http://x");
	CHECK(a->err == FENCE_ERR_ARG && strstr(a->errstr, "unsupported Redis URL scheme") != NULL);
	fence_free(a);
	for (i = 0; i < 16; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "redis://127.0.0.1:%d ", 1 + i);
	a = fence_connect(many);
	CHECK(a->err == FENCE_ERR_ARG && strstr(a->errstr, "at most 15") != NULL);
	fence_free(a);
	a = NULL;
	if (nquorum > 0)
	{
		a = fence_connect(quorum_url);
		CHECKC(a->err == 0, a);
		CHECK(fence_set_min_replicas(a, 1, 100) == FENCE_ERR && a->err == FENCE_ERR_ARG);
	}
	rc = 0;
fail:
	fence_free(a);
	return rc;
}

/* --- every topology ---------------------------------------------------- */

/*
 * Every socket a topology opens (sentinels, cluster nodes, quorum nodes,
 * the heartbeat's own) is closed on exec.
 */
static int
test_topo_sockets_cloexec(void)
{
	const char *urls[3] = {cluster_url, sentinel_url, nquorum ? quorum_url : NULL};

	if (ncluster == 0 || sentinel_url == NULL || nquorum == 0)
		SKIP("needs the cluster, the sentinels and the quorum (FENCE_TEST_*)");
	/* at least ours and the heartbeat's */
	for (int t = 0; t < 3; t++)
		if (lease_fds_cloexec(urls[t], 0, NULL, 2) != 0)
			return 1;
	return 0;
fail:
	return 1;
}

/*
 * On every topology a release wakes a waiter at once, far sooner than its
 * next look of its own (FENCE_WAIT_BEAT_MS, 500 ms: the holder's TTL is
 * long): its BLPOP reaches the node that holds the resource's queue (the
 * slot's master, the master Sentinel names, every node of the quorum).
 * Three handovers each, so that a waiter that only polls cannot pass by
 * chance.
 */
static int
test_topo_wait_wakes(void)
{
	const char *urls[3] = {cluster_url, sentinel_url, nquorum ? quorum_url : NULL};
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	int			rc = 1;

	if (ncluster == 0 || sentinel_url == NULL || nquorum == 0)
		SKIP("needs the cluster, the sentinels and the quorum (FENCE_TEST_*)");
	for (int t = 0; t < 3; t++)
	{
		const char *res = R("wake");

		a = fence_connect(urls[t]);
		CHECKC(a->err == 0, a);
		for (int round = 0; round < 3; round++)
		{
			waiter		w = {urls[t], res, 5000, 10000, 0};

			l = fence_acquire(a, res, 30000);
			CHECKC(l != NULL, a);
			/* its busy attempt takes a place in the queue */
			if (handed_over(a, l, &w, 150) != 0)
				goto fail;
			fence_lease_free(l);
			l = NULL;
		}
		fence_free(a);
		a = NULL;
	}
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * Sets of leases on every topology: on the cluster two resources whose
 * keys live on different masters (their slots differ: no one script can
 * take both), on the master Sentinel names and on the quorum.  The set is
 * taken in canonical order and held on every member (fence_show says the
 * set's one owner); a busy member gives back what was taken; two threads
 * asking for {a,b} and {b,a} over and over both finish.
 */
typedef struct set_worker
{
	const char *url;
	const char *names[2];
	int			done;
	char		why[FENCE_ERRSTR_LEN];
} set_worker;

static void *
set_worker_main(void *arg)
{
	set_worker *w = arg;
	fence_ctx  *c = fence_connect(w->url);
	int			i;

	for (i = 0; i < 10 && c->err == 0; i++)
	{
		fence_leases *set = fence_acquire_many_wait(c, w->names, 2, 5000, 30000);

		if (set == NULL)
			break;
		if (fence_leases_release(c, set) != FENCE_OK)
			break;
		fence_leases_free(set);
		w->done++;
	}
	snprintf(w->why, sizeof(w->why), "%s", c->errstr);
	fence_free(c);
	return NULL;
}

static int
test_topo_lease_set(void)
{
	const char *urls[3] = {cluster_url, sentinel_url, quorum_url};
	fence_ctx  *a = NULL,
			   *b = NULL;
	fence_leases *set = NULL;
	fence_lease *other = NULL;
	fence_info	info;
	char		ra[128],
				rb[128];
	int			t,
				i,
				rc = 1;

	if (ncluster == 0 || sentinel_url == NULL || nquorum < 3)
		SKIP("needs the cluster, the sentinels and the quorum (FENCE_TEST_*)");
	for (t = 0; t < 3; t++)
	{
		const char *names[2];
		set_worker	w1,
					w2;
		pthread_t	t1,
					t2;

		snprintf(ra, sizeof(ra), "%s", R("set-a0"));
		snprintf(rb, sizeof(rb), "%s", R("set-b0"));
		/* on the cluster: b's lock on another master than a's */
		for (i = 1; t == 0 && i < 200; i++)
		{
			const char *ka = key(ra, "lock"),
					   *kb = key(rb, "lock");

			if (slot_owner(fence_key_slot(ka, strlen(ka))) != slot_owner(fence_key_slot(kb, strlen(kb))))
				break;
			snprintf(rb, sizeof(rb), "%s-%d", R("set-b"), i);
		}
		names[0] = rb;
		names[1] = ra;
		a = fence_connect(urls[t]);
		b = fence_connect(urls[t]);
		CHECKC(a->err == 0, a);
		set = fence_acquire_many(a, names, 2, 10000);
		CHECKC(set != NULL, a);
		CHECK(strcmp(fence_lease_resource(fence_leases_member(set, 0)), ra) == 0);
		for (i = 0; i < 2; i++)
		{
			fence_lease *l = fence_leases_member(set, i);

			CHECKC(fence_show(b, fence_lease_resource(l), &info) == FENCE_OK, b);
			CHECK(info.owner != NULL && strncmp(info.owner, fence_lease_owner(l),
												strlen(fence_lease_owner(l))) == 0);
			fence_info_free(&info);
		}
		CHECKC(fence_leases_release(a, set) == FENCE_OK, a);
		fence_leases_free(set);
		set = NULL;

		/* b busy: a, taken first, is given back */
		other = fence_acquire(b, rb, 10000);
		CHECKC(other != NULL, b);
		CHECK(fence_acquire_many(a, names, 2, 10000) == NULL && a->err == FENCE_ERR_BUSY);
		CHECKC(fence_show(b, ra, &info) == FENCE_OK, b);
		CHECK(info.owner == NULL);
		fence_info_free(&info);
		CHECKC(fence_release(b, other) == FENCE_OK, b);
		fence_lease_free(other);
		other = NULL;

		/* {a,b} against {b,a} */
		memset(&w1, 0, sizeof(w1));
		memset(&w2, 0, sizeof(w2));
		w1 = (set_worker) {urls[t], {ra, rb}, 0, ""};
		w2 = (set_worker) {urls[t], {rb, ra}, 0, ""};
		CHECK(pthread_create(&t1, NULL, set_worker_main, &w1) == 0);
		CHECK(pthread_create(&t2, NULL, set_worker_main, &w2) == 0);
		pthread_join(t1, NULL);
		pthread_join(t2, NULL);
		if (w1.done != 10 || w2.done != 10)
		{
			snprintf(tap_why, sizeof(tap_why), "%.100s: %d and %d of 10 rounds (%.150s; %.150s)",
					 urls[t], w1.done, w2.done, w1.why, w2.why);
			goto fail;
		}
		fence_free(a);
		fence_free(b);
		a = b = NULL;
	}
	rc = 0;
fail:
	fence_leases_free(set);
	fence_lease_free(other);
	fence_free(a);
	fence_free(b);
	return rc;
}

/* The live waiters of "res" as fence_waiters says, their names before "/". */
static int
waiters_named(fence_ctx *a, const char *res, const char *want)
{
	char	  **owners = NULL;
	char		got[512] = "";
	size_t		n = 0,
				i;

	if (fence_waiters(a, res, &owners, &n) != FENCE_OK)
		return 0;
	for (i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%.*s", i ? " " : "",
				 (int) strcspn(owners[i], "/"), owners[i]);
	fence_waiters_free(owners, n);
	return strcmp(got, want) == 0;
}

/*
 * fence_list and fence_waiters on every topology: every held lease whose
 * name matches, found with SCAN on every master of the cluster (the
 * resources are picked so that each master holds one), on the master
 * Sentinel names, on the nodes of the quorum (also with one of them
 * frozen: a majority answers); owners, TTLs and waiters as fence_show and
 * the queue say; nothing left once all are given back.
 */
static int
test_topo_list(void)
{
	const char *urls[3] = {cluster_url, sentinel_url, quorum_url};
	fence_ctx  *a = NULL;
	fence_lease *l[16];
	fence_held *held = NULL;
	size_t		nheld = 0,
				i;
	waiter		w;
	char		pattern[64];
	int			nl = 0,
				started = 0,
				t,
				rc = 1;

	memset(l, 0, sizeof(l));
	if (ncluster == 0 || sentinel_url == NULL || nquorum < 3)
		SKIP("needs the cluster, the sentinels and the quorum (FENCE_TEST_*)");
	for (t = 0; t < 3; t++)
	{
		int			covered[MAXN] = {0},
					need = t == 0 ? ncluster : 0,
					k;

		snprintf(pattern, sizeof(pattern), "%s-%d-list%d-*", TEST_PREFIX, (int) getpid(), t);
		a = fence_connect(urls[t]);
		CHECKC(a->err == 0 && fence_set_owner_name(a, "topo:list") == FENCE_OK, a);
		/* enough resources that each master holds one, and 4 at least */
		for (nl = 0; nl < 16 && (nl < 4 || need > 0); nl++)
		{
			char		name[64];

			snprintf(name, sizeof(name), "list%d-%02d", t, nl);
			if (t == 0)
			{
				const char *lk = key(R(name), "lock");
				int			port = slot_owner(fence_key_slot(lk, strlen(lk)));

				for (k = 0; k < ncluster; k++)
					if (cluster_port[k] == port && !covered[k]++)
						need--;
			}
			l[nl] = fence_acquire(a, R(name), 30000);
			CHECKC(l[nl] != NULL, a);
		}
		CHECK(need == 0);
		w = (waiter) {urls[t], fence_lease_resource(l[0]), 5000, 20000, 0};
		w.name = "waits";
		CHECK(waiter_start(&w) == 0);
		started = 1;
		for (k = 0; k < 200 && !waiters_named(a, fence_lease_resource(l[0]), "waits"); k++)
			sleep_ms(25);
		CHECKC(waiters_named(a, fence_lease_resource(l[0]), "waits"), a);
		CHECKC(waiters_named(a, fence_lease_resource(l[1]), ""), a);
		if (t == 2)
			qfreeze(1);
		CHECKC(fence_list(a, pattern, &held, &nheld) == FENCE_OK, a);
		qthaw_all();
		CHECK(nheld == (size_t) nl);
		for (i = 0; i < nheld; i++)
		{
			if (strcmp(held[i].resource, fence_lease_resource(l[i])) != 0 ||
				strcmp(held[i].owner, fence_lease_owner(l[i])) != 0 ||
				strncmp(held[i].owner, "topo:list/", 10) != 0 ||
				held[i].token != fence_lease_token(l[i]) ||
				held[i].pttl_ms <= 0 || held[i].pttl_ms > 30000 ||
				held[i].waiters != (i == 0 ? 1u : 0u))
			{
				snprintf(tap_why, sizeof(tap_why), "%.100s: lease %zu: %s %s %lld ms token %lld, %zu waiters",
						 urls[t], i, held[i].resource, held[i].owner, held[i].pttl_ms,
						 held[i].token, held[i].waiters);
				goto fail;
			}
		}
		fence_list_free(held, nheld);
		held = NULL;
		/* the waiter gets the first lease, and gives it back */
		CHECKC(fence_release(a, l[0]) == FENCE_OK, a);
		waiter_join(&w);
		started = 0;
		CHECK(w.token > fence_lease_token(l[0]) && strncmp(w.owner, "waits/", 6) == 0);
		for (k = 0; k < nl; k++)
		{
			if (k > 0)
				CHECKC(fence_release(a, l[k]) == FENCE_OK, a);
			fence_lease_free(l[k]);
			l[k] = NULL;
		}
		CHECKC(fence_list(a, pattern, &held, &nheld) == FENCE_OK, a);
		CHECK(nheld == 0);
		fence_list_free(held, nheld);
		held = NULL;
		fence_free(a);
		a = NULL;
	}
	rc = 0;
fail:
	qthaw_all();
	if (started)
		waiter_join(&w);
	fence_list_free(held, nheld);
	for (i = 0; i < 16; i++)
		fence_lease_free(l[i]);
	fence_free(a);
	return rc;
}

/*
 * A waiter that dies (kill -9) on a Cluster and on a quorum: fence_waiters
 * lists it while its place is kept, and not once the place lapsed
 * (FENCE_WAIT_PLACE_MS, 2 s), on every node of the quorum that holds it.
 */
static int
test_topo_dead_waiter(void)
{
	const char *urls[2] = {cluster_url, quorum_url};
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	pid_t		child = -1;
	long long	t0,
				killed;
	int			t,
				k,
				rc = 1;

	if (ncluster == 0 || nquorum < 3)
		SKIP("needs the cluster and the quorum (FENCE_TEST_*)");
	for (t = 0; t < 2; t++)
	{
		const char *res = R(t ? "deadq" : "deadc");

		a = fence_connect(urls[t]);
		CHECKC(a->err == 0, a);
		l = fence_acquire(a, res, 30000);
		CHECKC(l != NULL, a);
		fflush(stdout);
		child = fork();
		CHECK(child >= 0);
		if (child == 0)
		{
			fence_ctx  *c = fence_connect(urls[t]);

			if (fence_set_owner_name(c, "doomed") == FENCE_OK)
				(void) fence_acquire_wait(c, res, 5000, 25000);
			_exit(0);
		}
		for (k = 0; k < 200 && !waiters_named(a, res, "doomed"); k++)
			sleep_ms(25);
		CHECKC(waiters_named(a, res, "doomed"), a);
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		child = -1;
		killed = ms_now();
		/* gone once its place lapsed: 2 s after it last asked, at most */
		for (t0 = ms_now(); ms_now() - t0 < 5000 && !waiters_named(a, res, ""); )
			sleep_ms(50);
		CHECKC(waiters_named(a, res, ""), a);
		if (ms_now() - killed > 3000)
		{
			snprintf(tap_why, sizeof(tap_why), "%.100s: the dead waiter was listed %lld ms after kill -9",
					 urls[t], ms_now() - killed);
			goto fail;
		}
		CHECKC(fence_release(a, l) == FENCE_OK, a);
		fence_lease_free(l);
		l = NULL;
		fence_free(a);
		a = NULL;
	}
	rc = 0;
fail:
	if (child > 0)
	{
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * A refused login is a configuration error (FENCE_ERR_AUTH) on every
 * topology, reported at once rather than retried until the timeout.  None
 * of the test servers has a password, so sending one is refused.
 */
static int
test_topo_auth_refused(void)
{
	char		url[4096];
	fence_ctx  *a = NULL;
	long long	t0;
	int			t,
				rc = 1;

	if (ncluster == 0 || sentinel_url == NULL || nquorum < 3)
		SKIP("needs the cluster, the sentinels and the quorum (FENCE_TEST_*)");
	for (t = 0; t < 3; t++)
	{
		if (t == 0)
			snprintf(url, sizeof(url), "redis-cluster://:wrong@%s",
					 cluster_url + strlen("redis-cluster://"));
		else if (t == 1)
			snprintf(url, sizeof(url), "redis-sentinel://:wrong@%s",
					 sentinel_url + strlen("redis-sentinel://"));
		else
			snprintf(url, sizeof(url), "redis://:wrong@127.0.0.1:%d redis://:wrong@127.0.0.1:%d "
					 "redis://:wrong@127.0.0.1:%d", quorum_port[0], quorum_port[1], quorum_port[2]);
		t0 = ms_now();
		a = fence_connect(url);
		if (a->err != FENCE_ERR_AUTH)
		{
			snprintf(tap_why, sizeof(tap_why), "%.200s: err %d (%.200s), expected FENCE_ERR_AUTH",
					 url, a->err, a->errstr);
			goto fail;
		}
		CHECK(ms_now() - t0 < 2000);
		fence_free(a);
		a = NULL;
	}
	rc = 0;
fail:
	fence_free(a);
	return rc;
}

int
main(void)
{
	/* a test that hangs (a fault left in place) must fail, not hang */
	tap_watchdog(240);
	cluster_url = getenv("FENCE_TEST_CLUSTER");
	sentinel_url = getenv("FENCE_TEST_SENTINEL");
	quorum_url = getenv("FENCE_TEST_QUORUM");
	if (cluster_url)
		ncluster = ints(getenv("FENCE_TEST_CLUSTER_PORTS"), cluster_port, MAXN);
	if (sentinel_url && (ints(getenv("FENCE_TEST_SENTINEL_PORTS"), sentinel_port, 2) != 2 ||
						 ints(getenv("FENCE_TEST_SENTINEL_PIDS"), sentinel_pid, 2) != 2))
		sentinel_url = NULL;
	nsentinels = ints(getenv("FENCE_TEST_SENTINELS_PIDS"), sentinels_pid, MAXN);
	if (quorum_url)
	{
		nquorum = url_ports(quorum_url, quorum_port);
		if (ints(getenv("FENCE_TEST_QUORUM_PIDS"), quorum_pid, MAXN) != nquorum)
			nquorum = 0;
	}
	pg_setup();

	TEST(cluster_keyslot);
	TEST(cluster_routing);
	TEST(cluster_ask_moved);
	TEST(cluster_tryagain);
	TEST(cluster_unreachable);
	TEST(cluster_min_replicas);
	TEST(sentinel_resolve);
	TEST(sentinel_min_replicas);
	TEST(sentinel_silent);
	TEST(sentinel_heal_replicas);
	TEST(sentinel_slow_attempt);
	TEST(sentinel_reply_bound);
	TEST(quorum_basic);
	TEST(quorum_minority_restart);
	TEST(quorum_minority_frozen);
	TEST(quorum_majority_down);
	TEST(quorum_claim_refused);
	TEST(quorum_backstop);
	TEST(quorum_heartbeat);
	TEST(quorum_late_release);
	TEST(quorum_one_round);
	TEST(quorum_bad_arguments);
	TEST(topo_sockets_cloexec);
	TEST(topo_wait_wakes);
	TEST(topo_auth_refused);
	TEST(topo_list);
	TEST(topo_dead_waiter);
	TEST(topo_lease_set);

	PQfinish(pg);
	printf("# topology C tests: %d passed, %d failed, %d skipped\n", tap_passed, tap_failed, tap_skipped);
	return tap_failed ? 1 : 0;
}
