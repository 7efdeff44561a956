/*
 * client/test/test_lease_set.c
 *	  Tests of sets of leases (lease_set.c) against the real redis-server
 *	  and PostgreSQL of test/run.sh: canonical order, all or nothing, the
 *	  loss of one member as the loss of the set, two waiters asking in
 *	  opposite orders, and the fence.tokens format.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "fence.h"
#include "fence_int.h"		/* fence_parse_url, for the raw connection */
#include "tap.h"
#define TEST_PREFIX "set"
#define TESTLIB_RAW_REDIS
#include "testlib.h"


#define key(resource, suffix) key_of((resource), (suffix), 0)

/* The owner of the lock of "resource" (malloc'd), NULL when free. */
static char *
lock_of(const char *resource)
{
	return rget(key(resource, "lock"));
}

static int
lock_exists(const char *resource)
{
	char	   *s = lock_of(resource);
	int			yes = s != NULL;

	free(s);
	return yes;
}

/* Canonical order whatever the caller's, one owner, the tokens value. */
static int
test_order(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_leases *set = NULL;
	const char *names[3];
	char		ra[256],
				rb[256],
				rc_[256],
				want[2048];
	char	   *tokens = NULL,
			   *held = NULL;
	int			rc = 1;
	size_t		i;

	snprintf(ra, sizeof(ra), "%s", R("a"));
	snprintf(rb, sizeof(rb), "%s", R("b"));
	snprintf(rc_, sizeof(rc_), "%s", R("c"));
	names[0] = rc_;
	names[1] = ra;
	names[2] = rb;
	CHECKC(a->err == 0, a);
	set = fence_acquire_many(a, names, 3, 5000);
	CHECKC(set != NULL, a);
	CHECK(fence_leases_count(set) == 3);
	CHECK(strcmp(fence_lease_resource(fence_leases_member(set, 0)), ra) == 0);
	CHECK(strcmp(fence_lease_resource(fence_leases_member(set, 1)), rb) == 0);
	CHECK(strcmp(fence_lease_resource(fence_leases_member(set, 2)), rc_) == 0);
	CHECK(fence_leases_member(set, 3) == NULL);
	CHECK(fence_leases_state(set) == FENCE_LEASE_HELD);
	for (i = 0; i < 3; i++)
	{
		fence_lease *l = fence_leases_member(set, i);

		CHECK(strcmp(fence_lease_owner(l), fence_lease_owner(fence_leases_member(set, 0))) == 0);
		CHECK(fence_lease_token(l) >= 1);
		free(held);
		held = lock_of(fence_lease_resource(l));
		CHECK(held != NULL && strcmp(held, fence_lease_owner(l)) == 0);
	}
	snprintf(want, sizeof(want), "%s=%lld/%s,%s=%lld/%s,%s=%lld/%s",
			 ra, fence_lease_token(fence_leases_member(set, 0)), fence_lease_owner(fence_leases_member(set, 0)),
			 rb, fence_lease_token(fence_leases_member(set, 1)), fence_lease_owner(fence_leases_member(set, 1)),
			 rc_, fence_lease_token(fence_leases_member(set, 2)), fence_lease_owner(fence_leases_member(set, 2)));
	tokens = fence_leases_tokens(set);
	CHECK(tokens != NULL && strcmp(tokens, want) == 0);
	CHECKC(fence_leases_extend(a, set, 6000) == FENCE_OK, a);
	CHECK(fence_lease_ttl(fence_leases_member(set, 2)) == 6000);
	CHECKC(fence_leases_release(a, set) == FENCE_OK, a);
	CHECK(!lock_exists(ra) && !lock_exists(rb) && !lock_exists(rc_));
	rc = 0;
fail:
	free(tokens);
	free(held);
	fence_leases_free(set);
	fence_free(a);
	return rc;
}

/* Duplicates, nothing, and NULL everywhere a free takes it. */
static int
test_bad_sets(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	const char *dup[3] = {R("x"), R("y"), NULL};
	int			rc = 1;

	dup[2] = dup[0];
	CHECK(fence_acquire_many(a, dup, 3, 5000) == NULL && a->err == FENCE_ERR_ARG);
	CHECK(strstr(a->errstr, "named twice") != NULL);
	CHECK(!lock_exists(dup[0]) && !lock_exists(dup[1]));
	CHECK(fence_acquire_many(a, dup, 0, 5000) == NULL && a->err == FENCE_ERR_ARG);
	CHECK(fence_acquire_many(a, dup, 2, 1) == NULL && a->err == FENCE_ERR_ARG);
	fence_leases_free(NULL);
	fence_leases_heartbeat_stop(NULL);
	CHECK(fence_leases_count(NULL) == 0);
	CHECK(fence_leases_member(NULL, 0) == NULL);
	rc = 0;
fail:
	fence_free(a);
	return rc;
}

/* One member busy: those taken before it are given back, none after it taken. */
static int
test_give_back_on_busy(void)
{
	fence_ctx  *a = fence_connect(redis_url),
			   *b = fence_connect(redis_url);
	fence_lease *other = NULL;
	const char *names[3] = {R("gc"), R("ga"), R("gb")};
	long long	t0;
	int			rc = 1;

	other = fence_acquire(b, names[2], 5000);
	CHECKC(other != NULL, b);
	CHECK(fence_acquire_many(a, names, 3, 5000) == NULL);
	CHECK(a->err == FENCE_ERR_BUSY);
	CHECK(strstr(a->errstr, names[2]) != NULL);
	CHECK(!lock_exists(names[1]));	/* taken first, given back */
	CHECK(!lock_exists(names[0]));	/* after the busy one: not kept */
	/* the waiting form: TIMEOUT once the one deadline ran out */
	t0 = ms_now();
	CHECK(fence_acquire_many_wait(a, names, 3, 5000, 300) == NULL);
	CHECK(a->err == FENCE_ERR_TIMEOUT);
	CHECK(ms_now() - t0 >= 290 && ms_now() - t0 < 3000);
	CHECK(!lock_exists(names[1]) && !lock_exists(names[0]));
	CHECKC(fence_release(b, other) == FENCE_OK, b);
	rc = 0;
fail:
	fence_lease_free(other);
	fence_free(a);
	fence_free(b);
	return rc;
}

/*
 * The prefix rule: a set holds only a canonical prefix of its members.  On
 * one master the set's first attempt takes every member in one pipeline,
 * so {a,b} with "a" held by another owner does take the free "b" (its
 * counter gives a token) before it learns that "a" is busy; "b" must then
 * be free again, and "a" still the other owner's.
 */
static int
test_prefix_rule(void)
{
	fence_ctx  *a = fence_connect(redis_url),
			   *b = fence_connect(redis_url);
	fence_lease *other = NULL;
	char		ra[256],
				rb[256];
	const char *names[2] = {rb, ra};
	char	   *owner = NULL,
			   *token = NULL;
	int			rc = 1;

	snprintf(ra, sizeof(ra), "%s", R("pa"));
	snprintf(rb, sizeof(rb), "%s", R("pb"));
	other = fence_acquire(b, ra, 5000);
	CHECKC(other != NULL, b);
	CHECK(fence_acquire_many(a, names, 2, 5000) == NULL);
	CHECK(a->err == FENCE_ERR_BUSY);
	CHECK(strstr(a->errstr, ra) != NULL);
	CHECK(!lock_exists(rb));
	owner = lock_of(ra);
	CHECK(owner != NULL && strcmp(owner, fence_lease_owner(other)) == 0);
	/* this runs on one node, where the pipeline did take "b" */
	token = rget(key(rb, "token"));
	CHECK(token != NULL && strcmp(token, "1") == 0);
	CHECKC(fence_release(b, other) == FENCE_OK, b);
	rc = 0;
fail:
	free(owner);
	free(token);
	fence_lease_free(other);
	fence_free(a);
	fence_free(b);
	return rc;
}

/*
 * A TCP proxy between libfence and Redis that counts round trips: the
 * times the client speaks after Redis did (or first).  A pipeline of n
 * commands is one; n commands each waiting for its reply are n.
 */
typedef struct turn_proxy
{
	int			listen_fd;
	int			port;
	int			stop[2];		/* a byte here ends the proxy */
	char		host[64];		/* Redis's IPv4 address */
	int			redis_port;
	volatile int turns;
	pthread_t	thread;
} turn_proxy;

static int
forward(int from, int to)
{
	char		buf[65536];
	ssize_t		n = read(from, buf, sizeof(buf));
	ssize_t		off = 0;

	if (n <= 0)
		return -1;
	while (off < n)
	{
		ssize_t		w = write(to, buf + off, n - off);

		if (w <= 0)
			return -1;
		off += w;
	}
	return 0;
}

/* Serve one connection of the client's until either side closes it. */
static void
proxy_serve(turn_proxy *p, int client)
{
	int			server,
				redis_spoke = 1;
	struct sockaddr_in sa;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(p->redis_port);
	if (inet_pton(AF_INET, p->host, &sa.sin_addr) != 1 ||
		(server = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return;
	if (connect(server, (struct sockaddr *) &sa, sizeof(sa)) == 0)
		for (;;)
		{
			struct pollfd fds[3] = {{client, POLLIN, 0}, {server, POLLIN, 0},
			{p->stop[0], POLLIN, 0}};

			if (poll(fds, 3, -1) < 0 || fds[2].revents)
				break;
			if (fds[0].revents)
			{
				if (redis_spoke)
					__atomic_add_fetch(&p->turns, 1, __ATOMIC_SEQ_CST);
				redis_spoke = 0;
				if (forward(client, server) != 0)
					break;
			}
			if (fds[1].revents)
			{
				redis_spoke = 1;
				if (forward(server, client) != 0)
					break;
			}
		}
	close(server);
}

static void *
proxy_main(void *arg)
{
	turn_proxy *p = arg;

	for (;;)
	{
		struct pollfd fds[2] = {{p->listen_fd, POLLIN, 0}, {p->stop[0], POLLIN, 0}};
		int			client;

		if (poll(fds, 2, -1) < 0 || fds[1].revents)
			return NULL;
		if ((client = accept(p->listen_fd, NULL, NULL)) < 0)
			return NULL;
		proxy_serve(p, client);
		close(client);
	}
}

static int
proxy_start(turn_proxy *p, const char *host, int redis_port)
{
	struct sockaddr_in sa;
	socklen_t	len = sizeof(sa);

	memset(p, 0, sizeof(*p));
	snprintf(p->host, sizeof(p->host), "%s", host);
	p->redis_port = redis_port;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (pipe(p->stop) != 0 || (p->listen_fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
		bind(p->listen_fd, (struct sockaddr *) &sa, sizeof(sa)) != 0 ||
		listen(p->listen_fd, 1) != 0 ||
		getsockname(p->listen_fd, (struct sockaddr *) &sa, &len) != 0)
		return -1;
	p->port = ntohs(sa.sin_port);
	return pthread_create(&p->thread, NULL, proxy_main, p) == 0 ? 0 : -1;
}

static void
proxy_stop(turn_proxy *p)
{
	if (write(p->stop[1], "x", 1) == 1)
		pthread_join(p->thread, NULL);
	close(p->listen_fd);
	close(p->stop[0]);
	close(p->stop[1]);
}

static int
turns(turn_proxy *p)
{
	return __atomic_load_n(&p->turns, __ATOMIC_SEQ_CST);
}

/*
 * On one node a set of two costs one round trip to take and one to give
 * back (each member's script in one pipeline), not one per member.
 */
static int
test_round_trips(void)
{
	turn_proxy	p;
	fence_url	u;
	char		err[256],
				url[64];
	fence_ctx  *a = NULL;
	fence_leases *set = NULL;
	const char *names[2] = {R("ta"), R("tb")};
	int			rc = 1,
				before,
				db,
				started = 0;

	memset(&p, 0, sizeof(p));
	p.listen_fd = p.stop[0] = p.stop[1] = -1;
	if (strncmp(redis_url, "redis://", 8) != 0)
		SKIP("the proxy speaks plain TCP to one node");
	CHECK(fence_parse_url(redis_url, &u, err, sizeof(err)) == FENCE_OK);
	if (u.password != NULL)
	{
		fence_url_free(&u);
		SKIP("the proxy does not log in");
	}
	db = u.db;
	rc = proxy_start(&p, strcmp(u.host, "localhost") == 0 ? "127.0.0.1" : u.host, u.port);
	fence_url_free(&u);
	CHECK(rc == 0);
	rc = 1;
	started = 1;
	snprintf(url, sizeof(url), "redis://127.0.0.1:%d/%d", p.port, db);
	a = fence_connect(url);
	CHECKC(a->err == 0, a);
	/* connected, and the scripts are in Redis's cache */
	set = fence_acquire_many(a, names, 2, 5000);
	CHECKC(set != NULL, a);
	CHECKC(fence_leases_release(a, set) == FENCE_OK, a);
	fence_leases_free(set);

	before = turns(&p);
	set = fence_acquire_many(a, names, 2, 5000);
	CHECKC(set != NULL, a);
	CHECK(turns(&p) - before == 1);
	CHECKC(fence_leases_release(a, set) == FENCE_OK, a);
	CHECK(turns(&p) - before == 2);
	CHECK(!lock_exists(names[0]) && !lock_exists(names[1]));
	rc = 0;
fail:
	fence_leases_free(set);
	fence_free(a);
	if (started)
		proxy_stop(&p);
	return rc;
}

static volatile int set_lost_calls;
static fence_lease *volatile set_lost_member;

static void
on_set_lost(fence_leases *set, fence_lease *lost, void *arg)
{
	(void) set;
	(void) arg;
	set_lost_member = lost;
	__atomic_add_fetch(&set_lost_calls, 1, __ATOMIC_SEQ_CST);
}

/* A member whose lock is deleted in Redis: the set is lost, said once. */
static int
test_loss_of_one(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_leases *set = NULL;
	const char *names[2] = {R("la"), R("lb")};
	redisReply *r;
	long long	t0;
	int			rc = 1;

	set_lost_calls = 0;
	set_lost_member = NULL;
	set = fence_acquire_many(a, names, 2, 900);
	CHECKC(set != NULL, a);
	CHECKC(fence_leases_heartbeat_start(a, set, on_set_lost, NULL) == FENCE_OK, a);
	/* renewed past the TTL while both are there */
	sleep_ms(1200);
	CHECK(set_lost_calls == 0);
	CHECK(fence_leases_state(set) == FENCE_LEASE_HELD);
	r = redisCommand(raw, "DEL %s", key(names[1], "lock"));
	freeReplyObject(r);
	t0 = ms_now();
	while (set_lost_calls == 0 && ms_now() - t0 < 3000)
		sleep_ms(10);
	CHECK(set_lost_calls == 1);
	CHECK(set_lost_member == fence_leases_member(set, 1));
	CHECK(fence_leases_state(set) == FENCE_LEASE_LOST);
	sleep_ms(400);
	CHECK(set_lost_calls == 1);
	/* the other member is given back all the same; the error says the loss */
	CHECK(fence_leases_release(a, set) == FENCE_ERR && a->err == FENCE_ERR_LOST);
	CHECK(!lock_exists(names[0]));
	rc = 0;
fail:
	fence_leases_free(set);
	fence_free(a);
	return rc;
}

/* Two workers, {a,b} and {b,a}, over and over: both finish, never together. */
typedef struct worker
{
	const char *names[2];
	int			done;
	int			failed;
	char		why[FENCE_ERRSTR_LEN];
} worker;

static volatile int inside;
static volatile int overlap;

static void *
worker_main(void *arg)
{
	worker	   *w = arg;
	fence_ctx  *c = fence_connect(redis_url);
	int			i;

	for (i = 0; i < 40 && c->err == 0; i++)
	{
		fence_leases *set = fence_acquire_many_wait(c, w->names, 2, 5000, 20000);

		if (set == NULL)
		{
			w->failed++;
			snprintf(w->why, sizeof(w->why), "%s", c->errstr);
			break;
		}
		if (__atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST) != 1)
			overlap = 1;
		sleep_ms(2);
		__atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
		if (fence_leases_release(c, set) != FENCE_OK)
			w->failed++;
		fence_leases_free(set);
		w->done++;
	}
	fence_free(c);
	return NULL;
}

static int
test_opposite_orders(void)
{
	char		ra[256],
				rb[256];
	worker		w1,
				w2;
	pthread_t	t1,
				t2;
	long long	t0 = ms_now();
	int			rc = 1;

	snprintf(ra, sizeof(ra), "%s", R("oa"));
	snprintf(rb, sizeof(rb), "%s", R("ob"));
	memset(&w1, 0, sizeof(w1));
	memset(&w2, 0, sizeof(w2));
	w1.names[0] = ra;
	w1.names[1] = rb;
	w2.names[0] = rb;
	w2.names[1] = ra;
	CHECK(pthread_create(&t1, NULL, worker_main, &w1) == 0);
	CHECK(pthread_create(&t2, NULL, worker_main, &w2) == 0);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	if (w1.failed || w2.failed)
		printf("#   w1: %s; w2: %s\n", w1.why, w2.why);
	CHECK(w1.done == 40 && w2.done == 40);
	CHECK(w1.failed == 0 && w2.failed == 0);
	CHECK(!overlap);
	CHECK(ms_now() - t0 < 20000);
	rc = 0;
fail:
	return rc;
}

/* Quoting, as /work/notes/tokens-format.md writes it. */
static int
test_format(void)
{
	const char *res[5] = {"acct:1", "a,b", "say \"hi\"", " lead", ""};
	const char *own[5] = {"web1:812:psql/9f3c", "o=1", "x,y", NULL, "back\\slash"};
	long long	tok[5] = {41, 5, 7, 9223372036854775807LL, 1};
	char	   *s = fence_format_tokens(5, res, tok, own);
	int			rc = 1;

	CHECK(s != NULL);
	CHECK(strcmp(s, "acct:1=41/web1:812:psql/9f3c,\"a,b\"=5/o=1,\"say \"\"hi\"\"\"=7/\"x,y\","
				 "\" lead\"=9223372036854775807,\"\"=1/\"back\\slash\"") == 0);
	free(s);
	s = fence_format_tokens(0, res, tok, own);
	CHECK(s != NULL && strcmp(s, "") == 0);
	rc = 0;
fail:
	free(s);
	return rc;
}

/* Announced: PostgreSQL's mark of each member is its token. */
static int
test_announce(void)
{
	fence_ctx  *a = fence_connect(redis_url);
	fence_leases *set = NULL;
	const char *names[2] = {R("pb"), R("pa")};
	long long	mark;
	size_t		i;
	int			rc = 1;

	if (!pg_ready)
		SKIP("no fence extension in PostgreSQL");
	set = fence_acquire_many(a, names, 2, 5000);
	CHECKC(set != NULL, a);
	CHECKC(fence_leases_announce(a, set, pg) == FENCE_OK, a);
	for (i = 0; i < 2; i++)
	{
		fence_lease *l = fence_leases_member(set, i);

		CHECKC(fence_pg_mark(a, pg, fence_lease_resource(l), &mark) == FENCE_OK, a);
		CHECK(mark == fence_lease_token(l));
	}
	CHECKC(fence_leases_release(a, set) == FENCE_OK, a);
	rc = 0;
fail:
	fence_leases_free(set);
	fence_free(a);
	return rc;
}

/* One statement of "pg" that must work; 0 when it did. */
static int
sql_ok(const char *sql)
{
	PGresult   *r = PQexec(pg, sql);
	int			ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;

	if (!ok)
		printf("#   %s: %s", sql, PQerrorMessage(pg));
	PQclear(r);
	return ok ? 0 : -1;
}

/* Has PostgreSQL no function "signature" (an older extension)? */
static int
to_regproc_missing(const char *signature)
{
	const char *params[1] = {signature};
	PGresult   *r = PQexecParams(pg, "SELECT to_regprocedure($1) IS NULL", 1, NULL, params,
								 NULL, NULL, 0);
	int			missing = PQresultStatus(r) != PGRES_TUPLES_OK || strcmp(PQgetvalue(r, 0, 0), "f") != 0;

	PQclear(r);
	return missing;
}

/* The balances of table "t", "b1 b2 b3" in "out". */
static void
balances(const char *t, char *out, size_t len)
{
	char		sql[256];
	PGresult   *r;

	snprintf(sql, sizeof(sql), "SELECT string_agg(balance::text, ' ' ORDER BY id) FROM %s", t);
	r = PQexec(pg, sql);
	snprintf(out, len, "%s", PQresultStatus(r) == PGRES_TUPLES_OK ? PQgetvalue(r, 0, 0) : "?");
	PQclear(r);
}

/*
 * The set's fenced statement (fence_leases_exec): one transaction under
 * every member's token on a table guarded in key mode, whose rows each
 * need their own resource's token.  Commits on an idle connection; a row
 * outside the set is refused and nothing is written; COPY is refused; in
 * the caller's transaction the caller commits; a set whose tokens
 * PostgreSQL has seen superseded is refused (stale); a set of one is its
 * lease's fence_exec.
 */
static int
test_exec(void)
{
	fence_ctx  *a = fence_connect(redis_url),
			   *b = fence_connect(redis_url);
	fence_leases *set = NULL,
			   *newer = NULL,
			   *one = NULL;
	char		t[64],
				sql[512],
				r1[128],
				r2[128],
				got[64];
	const char *names[2],
			   *params[1] = {"7"};
	PGresult   *res = NULL;
	int			rc = 1;

	if (!pg_ready || to_regproc_missing("fence.advance_many(text[],bigint[],text[])"))
		SKIP("no fence.advance_many in PostgreSQL");
	snprintf(t, sizeof(t), "setexec%d", (int) getpid());
	snprintf(r1, sizeof(r1), "%s:1", t);
	snprintf(r2, sizeof(r2), "%s:2", t);
	names[0] = r2;
	names[1] = r1;
	snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS %s; CREATE TABLE %s (id int PRIMARY KEY, balance int NOT NULL);"
			 " INSERT INTO %s VALUES (1, 100), (2, 100), (3, 100);"
			 " SELECT fence.protect('%s', '%s', key_column => 'id')", t, t, t, t, t);
	CHECK(sql_ok(sql) == 0);
	set = fence_acquire_many(a, names, 2, 10000);
	CHECKC(set != NULL, a);
	CHECKC(fence_leases_announce(a, set, pg) == FENCE_OK, a);

	/* both rows, one transaction, committed */
	snprintf(sql, sizeof(sql), "UPDATE %s SET balance = balance + CASE id WHEN 1 THEN -$1::int ELSE $1::int END"
			 " WHERE id IN (1, 2)", t);
	res = fence_leases_exec(a, set, pg, sql, 1, params);
	CHECKC(res != NULL, a);
	CHECK(strcmp(PQcmdTuples(res), "2") == 0);
	PQclear(res);
	res = NULL;
	CHECK(PQtransactionStatus(pg) == PQTRANS_IDLE);
	balances(t, got, sizeof(got));
	CHECK(strcmp(got, "93 107 100") == 0);

	/* a row outside the set: refused, nothing written, the connection idle */
	snprintf(sql, sizeof(sql), "UPDATE %s SET balance = 0 WHERE id IN (1, 3)", t);
	CHECK(fence_leases_exec(a, set, pg, sql, 0, NULL) == NULL);
	CHECK(a->err == FENCE_ERR_PG);
	CHECK(strstr(a->errstr, "fenced statement failed") != NULL);
	CHECK(PQtransactionStatus(pg) == PQTRANS_IDLE);
	balances(t, got, sizeof(got));
	CHECK(strcmp(got, "93 107 100") == 0);

	/* COPY: refused, the server's COPY ended */
	snprintf(sql, sizeof(sql), "COPY %s TO STDOUT", t);
	CHECK(fence_leases_exec(a, set, pg, sql, 0, NULL) == NULL);
	CHECK(a->err == FENCE_ERR_ARG);
	CHECK(strstr(a->errstr, "COPY is not supported") != NULL);
	CHECK(PQtransactionStatus(pg) == PQTRANS_IDLE);

	/* inside the caller's transaction: the caller's to end */
	CHECK(sql_ok("BEGIN") == 0);
	snprintf(sql, sizeof(sql), "UPDATE %s SET balance = 0 WHERE id IN (1, 2)", t);
	res = fence_leases_exec(a, set, pg, sql, 0, NULL);
	CHECKC(res != NULL, a);
	PQclear(res);
	res = NULL;
	CHECK(PQtransactionStatus(pg) == PQTRANS_INTRANS);
	CHECK(sql_ok("ROLLBACK") == 0);
	balances(t, got, sizeof(got));
	CHECK(strcmp(got, "93 107 100") == 0);

	/* a newer holder of both announced: the old set is refused, stale */
	freeReplyObject(redisCommand(raw, "DEL %s", key(r1, "lock")));
	freeReplyObject(redisCommand(raw, "DEL %s", key(r2, "lock")));
	newer = fence_acquire_many(b, names, 2, 10000);
	CHECKC(newer != NULL, b);
	CHECKC(fence_leases_announce(b, newer, pg) == FENCE_OK, b);
	snprintf(sql, sizeof(sql), "UPDATE %s SET balance = 0 WHERE id IN (1, 2)", t);
	CHECK(fence_leases_exec(a, set, pg, sql, 0, NULL) == NULL);
	CHECK(a->err == FENCE_ERR_STALE);
	CHECK(strstr(a->errstr, "fence.advance_many") != NULL);
	CHECK(PQtransactionStatus(pg) == PQTRANS_IDLE);
	balances(t, got, sizeof(got));
	CHECK(strcmp(got, "93 107 100") == 0);
	CHECKC(fence_leases_release(b, newer) == FENCE_OK, b);

	/* a set of one: its lease's fence_exec */
	one = fence_acquire_many(b, names + 1, 1, 10000);
	CHECKC(one != NULL, b);
	CHECKC(fence_leases_announce(b, one, pg) == FENCE_OK, b);
	snprintf(sql, sizeof(sql), "UPDATE %s SET balance = balance + 1 WHERE id = 1", t);
	res = fence_leases_exec(b, one, pg, sql, 0, NULL);
	CHECKC(res != NULL, b);
	PQclear(res);
	res = NULL;
	balances(t, got, sizeof(got));
	CHECK(strcmp(got, "94 107 100") == 0);
	CHECK(fence_leases_exec(b, NULL, pg, sql, 0, NULL) == NULL && b->err == FENCE_ERR_ARG);
	CHECKC(fence_leases_release(b, one) == FENCE_OK, b);
	rc = 0;
fail:
	PQclear(res);
	fence_leases_free(set);
	fence_leases_free(newer);
	fence_leases_free(one);
	fence_free(a);
	fence_free(b);
	snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS %s", t);
	(void) sql_ok(sql);
	return rc;
}

/*
 * A member taken early, then a long wait for a later one: once all are
 * held, the early one is extended, so the set starts with every TTL whole.
 */
typedef struct late_release
{
	fence_ctx  *ctx;
	fence_lease *lease;
	long		after_ms;
} late_release;

static void *
release_later(void *arg)
{
	late_release *r = arg;

	sleep_ms(r->after_ms);
	(void) fence_release(r->ctx, r->lease);
	return NULL;
}

static int
test_wait_renews_early(void)
{
	fence_ctx  *a = fence_connect(redis_url),
			   *b = fence_connect(redis_url);
	fence_leases *set = NULL;
	const char *names[2] = {R("wa"), R("wb")};
	late_release r = {b, NULL, 700};
	pthread_t	th;
	redisReply *pttl;
	int			started = 0,
				rc = 1;

	r.lease = fence_acquire(b, names[1], 10000);
	CHECKC(r.lease != NULL, b);
	CHECK(pthread_create(&th, NULL, release_later, &r) == 0);
	started = 1;
	set = fence_acquire_many_wait(a, names, 2, 1000, 5000);
	CHECKC(set != NULL, a);
	pttl = redisCommand(raw, "PTTL %s", key(names[0], "lock"));
	/* without the extend, about 1000 - 700 ms would be left */
	CHECK(pttl != NULL && pttl->type == REDIS_REPLY_INTEGER && pttl->integer > 800);
	freeReplyObject(pttl);
	CHECKC(fence_leases_release(a, set) == FENCE_OK, a);
	rc = 0;
fail:
	if (started)
		pthread_join(th, NULL);
	fence_lease_free(r.lease);
	fence_leases_free(set);
	fence_free(a);
	fence_free(b);
	return rc;
}

int
main(void)
{
	if (raw_redis_setup("set_setup") != 0)
		return 1;
	pg_setup();

	TEST(order);
	TEST(bad_sets);
	TEST(give_back_on_busy);
	TEST(prefix_rule);
	TEST(round_trips);
	TEST(loss_of_one);
	TEST(opposite_orders);
	TEST(wait_renews_early);
	TEST(format);
	TEST(announce);
	TEST(exec);

	PQfinish(pg);
	redisFree(raw);
	printf("# lease set C tests: %d passed, %d failed, %d skipped\n", tap_passed, tap_failed, tap_skipped);
	return tap_failed ? 1 : 0;
}
