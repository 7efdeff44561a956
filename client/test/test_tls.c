/*
 * client/test/test_tls.c
 *	  Tests of libfence over TLS, against real redis-servers that speak only
 *	  TLS, with certificates the test made (test/lib/tls.sh); test/run.sh
 *	  starts them for the "tls" suite:
 *
 *	  FENCE_TEST_TLS_DIR        the certificates
 *	  FENCE_TEST_TLS_PORTS      six servers: good (server.pem, no client
 *	                            certificate asked), mtls (one required),
 *	                            wronghost, expired, rogue (a CA nobody
 *	                            trusts), stop (good, for SIGSTOP)
 *	  FENCE_TEST_TLS_STOP_PID   the pid of "stop"
 *	  FENCE_TEST_TLS_QUORUM     three ports of independent nodes
 *	  FENCE_TEST_TLS_CLUSTER    three masters (tls-cluster yes)
 *	  FENCE_TEST_TLS_SENTINEL   three sentinels watching master "tlss"
 *	                            (tls-replication yes), with one replica
 *
 * The servers are checked and steered with redis-cli over TLS, not with
 * the library under test.  A test whose servers are missing is skipped.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fence.h"
#include "tap.h"
#define TEST_PREFIX "tls"
#include "testlib.h"

/* libfence internals under test (fence_key: testlib.h) */
unsigned int fence_key_slot(const char *key, size_t len);

#define MAXN 8

static const char *dir;
static int	ports[6],
			nports;
static int	stop_pid;
static int	quorum[MAXN],
			nquorum;
static int	cluster[MAXN],
			ncluster;
static int	sentinels[MAXN],
			nsentinels;

#define GOOD ports[0]
#define MTLS ports[1]
#define WRONGHOST ports[2]
#define EXPIRED ports[3]
#define ROGUE ports[4]
#define STOP ports[5]

/* A rediss:// URL of the node on "port" trusting the test CA, plus "more". */
static const char *
url(int port, const char *more)
{
	static char pool[4][1024];
	static int	next;
	char	   *buf = pool[next++ % 4];

	snprintf(buf, sizeof(pool[0]), "rediss://127.0.0.1:%d?tls-ca-cert-file=%s/ca.pem%s%s",
			 port, dir, more ? "&" : "", more ? more : "");
	return buf;
}

/* "tls-cert-file=DIR/NAME.pem&tls-key-file=DIR/KEY.key" */
static const char *
client_cert(const char *name, const char *key)
{
	static char buf[2][600];
	static int	next;
	char	   *b = buf[next++ % 2];

	snprintf(b, sizeof(buf[0]), "tls-cert-file=%s/%s.pem&tls-key-file=%s/%s.key", dir, name, dir, key);
	return b;
}

/*
 * Run redis-cli over TLS against "port" with the arguments "fmt" (each
 * one single-quoted by the caller where needed); its output, trimmed, in
 * a static buffer.
 */
static const char *
rcli(int port, const char *fmt,...)
{
	static char out[8192];
	char		args[1024],
				cmd[2048];
	size_t		n = 0;
	va_list		ap;
	FILE	   *p;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd),
			 "redis-cli --tls --cacert %s/ca.pem --cert %s/client.pem --key %s/client.key "
			 "-p %d --raw %s 2>&1", dir, dir, dir, port, args);
	out[0] = '\0';
	if ((p = popen(cmd, "r")) != NULL)
	{
		n = fread(out, 1, sizeof(out) - 1, p);
		pclose(p);
	}
	while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r'))
		n--;
	out[n] = '\0';
	return out;
}

/* A key of "resource", quoted for rcli's shell. */
#define key(resource, suffix) key_of((resource), (suffix), 1)

/* Connect "a" to "url" of the TLS servers, or SKIP without them. */
#define TLS_CONNECT(a, url) CONNECT_OR_SKIP(a, nports > 0, url, "no TLS servers (FENCE_TEST_TLS_PORTS)")

/* Connections the server on "port" has accepted, this one of redis-cli's too. */
static long long
connections(int port)
{
	const char *p = strstr(rcli(port, "INFO stats"), "total_connections_received:");

	return p ? atoll(p + strlen("total_connections_received:")) : -1;
}

/* The lock's owner on the node at "port" ("" when free). */
static const char *
lock_owner(int port, const char *resource)
{
	return rcli(port, "GET %s", key(resource, "lock"));
}

/* --- one node ------------------------------------------------------------ */

/*
 * The lease cycle over TLS: acquire, extend, show, release, and a
 * heartbeat that keeps renewing on a connection of its own (which shares
 * the loaded TLS settings); the lock is where redis-cli sees it.
 */
static int
test_tls_lease_cycle(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	fence_info	info = {0};
	const char *res = R("cycle");
	int			rc = 1;

	TLS_CONNECT(a, url(GOOD, NULL));
	l = fence_acquire(a, res, 600);
	CHECKC(l != NULL, a);
	CHECK(strcmp(lock_owner(GOOD, res), fence_lease_owner(l)) == 0);
	CHECKC(fence_extend(a, l, 600) == FENCE_OK, a);
	CHECKC(fence_show(a, res, &info) == FENCE_OK, a);
	CHECK(info.owner != NULL && strcmp(info.owner, fence_lease_owner(l)) == 0 && info.token >= 1);
	lost_calls = 0;
	CHECKC(fence_heartbeat_start(a, l, count_lost, NULL) == FENCE_OK, a);
	sleep_ms(1500);				/* five renewals of a 600 ms lease */
	CHECK(lost_calls == 0 && fence_lease_state(l) == FENCE_LEASE_HELD);
	CHECK(strcmp(lock_owner(GOOD, res), fence_lease_owner(l)) == 0);
	fence_heartbeat_stop(l);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	CHECK(strcmp(lock_owner(GOOD, res), "") == 0);
	rc = 0;
fail:
	fence_info_free(&info);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * A flushed script cache makes the next call send the script's source
 * (EVAL, several kB: more than one write) within the same operation.
 */
static int
test_tls_noscript(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	int			rc = 1;

	TLS_CONNECT(a, url(GOOD, NULL));
	l = fence_acquire(a, R("noscript"), 5000);
	CHECKC(l != NULL, a);
	CHECK(strcmp(rcli(GOOD, "SCRIPT FLUSH"), "OK") == 0);
	CHECKC(fence_extend(a, l, 5000) == FENCE_OK, a);
	CHECK(strcmp(rcli(GOOD, "SCRIPT FLUSH"), "OK") == 0);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * Waiting over TLS: the waiter blocks (BLPOP) on its own TLS connection
 * and a release wakes it at once, long before the holder's TTL.
 */
static int
test_tls_wait(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("wait");
	waiter		w = {url(GOOD, NULL), res, 5000, 15000, 0};
	int			rc = 1;

	TLS_CONNECT(a, url(GOOD, NULL));
	l = fence_acquire(a, res, 20000);
	CHECKC(l != NULL, a);
	if (handed_over(a, l, &w, 2000) != 0)
		goto fail;
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * Announce and heal over TLS: a counter that lost its value (FLUSHALL of
 * a TLS server) is lifted above PostgreSQL's mark by the heal script.
 */
static int
test_tls_announce_heal(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("heal");
	long long	mark = 0;
	int			rc = 1;

	if (nports > 0 && !pg_ready)
		SKIP("extension fence not available");
	TLS_CONNECT(a, url(GOOD, NULL));
	for (int i = 0; i < 3; i++)
	{
		l = fence_acquire(a, res, 5000);
		CHECKC(l != NULL, a);
		CHECKC(fence_announce(a, l, pg) == FENCE_OK, a);
		mark = fence_lease_token(l);
		CHECKC(fence_release(a, l) == FENCE_OK, a);
		fence_lease_free(l);
		l = NULL;
	}
	CHECK(strcmp(rcli(GOOD, "DEL %s", key(res, "token")), "1") == 0);
	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	CHECK(fence_lease_token(l) == 1);
	CHECKC(fence_announce(a, l, pg) == FENCE_OK, a);
	CHECK(fence_lease_token(l) > mark);
	CHECK(atoll(rcli(GOOD, "GET %s", key(res, "token"))) == fence_lease_token(l));
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* What must connect: each name and trust setting that fits the server. */
static int
test_tls_accepted(void)
{
	char		u[1024];
	const char *good[8];
	int			i,
				rc = 1;
	fence_ctx  *a = NULL;

	if (nports == 0)
		SKIP("no TLS servers (FENCE_TEST_TLS_PORTS)");
	snprintf(u, sizeof(u), "rediss://localhost:%d?tls-ca-cert-file=%s/ca.pem", GOOD, dir);
	good[0] = u;
	good[1] = url(GOOD, "tls-server-name=redis.test");
	good[2] = url(MTLS, client_cert("client", "client"));
	good[3] = url(WRONGHOST, "tls-insecure-skip-verify=yes");
	good[4] = url(EXPIRED, "tls-insecure-skip-verify=yes");
	good[5] = url(ROGUE, "tls-insecure-skip-verify=yes");
	for (i = 0; i < 6; i++)
	{
		fence_lease *l;

		a = fence_connect(good[i]);
		CHECKC(a->err == 0, a);
		l = fence_acquire(a, R("accepted"), 5000);
		CHECKC(l != NULL, a);
		CHECKC(fence_release(a, l) == FENCE_OK, a);
		fence_lease_free(l);
		fence_free(a);
		a = NULL;
	}
	/* a hashed CA directory, in place of the file */
	snprintf(u, sizeof(u), "rediss://127.0.0.1:%d?tls-ca-cert-dir=%s/cadir", GOOD, dir);
	a = fence_connect(u);
	CHECKC(a->err == 0, a);
	rc = 0;
fail:
	fence_free(a);
	return rc;
}

/*
 * What must be refused, as FENCE_ERR_TLS, at once (no retrying until the
 * command timeout), and with a message that says why: the server's
 * certificate for another host, expired, from a CA we do not trust; a
 * client certificate missing or refused; files that cannot be used.
 */
static int
test_tls_refused(void)
{
	char		urls[16][1024];
	const char *why[16];
	fence_ctx  *a = NULL;
	int			n = 0,
				i,
				rc = 1;

	if (nports == 0)
		SKIP("no TLS servers (FENCE_TEST_TLS_PORTS)");
#define CASE(why_, ...) \
	do { snprintf(urls[n], sizeof(urls[0]), __VA_ARGS__); why[n++] = (why_); } while (0)
	CASE("IP address mismatch", "%s", url(WRONGHOST, NULL));
	/* OpenSSL's own words, in any case: 1.1 says "Hostname mismatch" */
	CASE("hostname mismatch", "%s", url(GOOD, "tls-server-name=other.test"));
	CASE("certificate has expired", "%s", url(EXPIRED, NULL));
	CASE("unable to get local issuer certificate", "%s", url(ROGUE, NULL));
	CASE("server certificate not trusted",
		 "rediss://127.0.0.1:%d?tls-ca-cert-file=%s/rogue-ca.pem", GOOD, dir);
	CASE("tls-cert-file", "%s", url(MTLS, NULL));
	CASE("refused", "%s", url(MTLS, client_cert("rogue-client", "rogue-client")));
	CASE("nothere.pem: No such file or directory",
		 "rediss://127.0.0.1:%d?tls-ca-cert-file=%s/nothere.pem", GOOD, dir);
	CASE("no PEM certificate in it", "rediss://127.0.0.1:%d?tls-ca-cert-file=%s/server.ext", GOOD, dir);
	CASE("is not the key of", "%s", url(MTLS, client_cert("client", "server")));
	CASE("nodir: No such file or directory",
		 "rediss://127.0.0.1:%d?tls-ca-cert-dir=%s/nodir", GOOD, dir);
#undef CASE
	for (i = 0; i < n; i++)
	{
		long long	t0 = ms_now();

		a = fence_connect_timeout(urls[i], 3000, 3000);
		if (a == NULL || a->err != FENCE_ERR_TLS || strcasestr(a->errstr, why[i]) == NULL ||
			ms_now() - t0 > 1500)
		{
			snprintf(tap_why, sizeof(tap_why), "%.300s: err %d after %lld ms: %.150s (wanted \"%s\")",
					 urls[i], a ? a->err : -1, ms_now() - t0, a ? a->errstr : "", why[i]);
			goto fail;
		}
		fence_free(a);
		a = NULL;
	}
	rc = 0;
fail:
	fence_free(a);
	return rc;
}

/*
 * A TLS handshake never outlasts its deadline.  A server that accepts the
 * TCP connection and never answers (a listening socket nobody accepts on:
 * the kernel completes the connect) costs the connect timeout; and an
 * extend that must connect again to a frozen TLS server (SIGSTOP) returns
 * by the lease's local deadline, not after the 5 s connect timeout.
 */
static int
test_tls_handshake_deadline(void)
{
	struct sockaddr_in sa;
	socklen_t	len = sizeof(sa);
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	fence_info	info = {0};
	long long	t0,
				took;
	int			lfd = -1,
				stopped = 0,
				rc = 1;

	if (nports == 0 || stop_pid <= 0)
		SKIP("no TLS servers (FENCE_TEST_TLS_PORTS, FENCE_TEST_TLS_STOP_PID)");
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *) &sa, sizeof(sa)) == 0 && listen(lfd, 8) == 0);
	CHECK(getsockname(lfd, (struct sockaddr *) &sa, &len) == 0);
	t0 = ms_now();
	a = fence_connect_timeout(url(ntohs(sa.sin_port), NULL), 300, 5000);
	took = ms_now() - t0;
	CHECKC(a->err == FENCE_ERR_IO && strstr(a->errstr, "TLS handshake") != NULL, a);
	if (took < 280 || took > 1000)
	{
		snprintf(tap_why, sizeof(tap_why), "a 300 ms connect timeout took %lld ms", took);
		goto fail;
	}
	fence_free(a);

	a = fence_connect(url(STOP, NULL));
	CHECKC(a->err == 0, a);
	t0 = ms_now();
	l = fence_acquire(a, R("frozen"), 1000);
	CHECKC(l != NULL, a);
	/*
	 * The server drops us while we are idle: its close_notify tells the next
	 * command, which connects again instead of failing on the dead link.
	 */
	CHECK(strcmp(rcli(STOP, "CLIENT KILL TYPE normal"), "0") != 0);
	CHECKC(fence_show(a, R("frozen"), &info) == FENCE_OK, a);
	/* dropped again, then frozen: the extend must connect and shake hands again */
	CHECK(strcmp(rcli(STOP, "CLIENT KILL TYPE normal"), "0") != 0);
	CHECK(kill(stop_pid, SIGSTOP) == 0);
	stopped = 1;
	CHECK(fence_extend(a, l, 1000) == FENCE_ERR);
	took = ms_now() - t0;
	CHECK(kill(stop_pid, SIGCONT) == 0);
	stopped = 0;
	CHECKC(a->err == FENCE_ERR_IO || a->err == FENCE_ERR_SUSPECT || a->err == FENCE_ERR_LOST, a);
	if (took > 1000 + 500)
	{
		snprintf(tap_why, sizeof(tap_why), "an extend of a 1 s lease returned after %lld ms", took);
		goto fail;
	}
	rc = 0;
fail:
	if (stopped)
		kill(stop_pid, SIGCONT);
	if (lfd >= 0)
		close(lfd);
	fence_info_free(&info);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* The server drops our connections: libfence opens one again. */
static void
drop_mtls(void)
{
	(void) rcli(MTLS, "CLIENT KILL TYPE normal");
}

/*
 * Every descriptor libfence opens for TLS is closed on exec: the sockets,
 * the heartbeat's, one opened again after the server dropped us, and the
 * files it read (CA file, client certificate, key).
 */
static int
test_tls_descriptors_cloexec(void)
{
	if (nports == 0)
		SKIP("no TLS servers (FENCE_TEST_TLS_PORTS)");
	/* ours and the heartbeat's, at least, are sockets */
	return lease_fds_cloexec(url(MTLS, client_cert("client", "client")), 1, drop_mtls, 2);
fail:
	return 1;
}

/*
 * The race (testlib.h) while contexts with a client certificate connect,
 * each loading the CA file, the certificate and the key: no descriptor of
 * any kind may be inherited across the exec of another thread's child.
 * OpenSSL's own initialization, once per process, reads openssl.cnf
 * without O_CLOEXEC, which libfence cannot change (tls.c): it is over
 * before the race starts.
 */
static int
test_tls_cloexec_fork_race(void)
{
	fence_ctx  *a = NULL;

	TLS_CONNECT(a, url(GOOD, NULL));
	fence_free(a);
	return cloexec_race(url(MTLS, client_cert("client", "client")), 1, 2000, 400, 10,
						"a descriptor");
fail:
	fence_free(a);
	return 1;
}

/*
 * A child that uses a context it inherited through fork() connects anew:
 * a TLS session cannot be shared, and a child writing on its parent's
 * would break it (record numbers out of step, "bad record mac").  The
 * parent's connection goes on working, without connecting again.
 */
static int
test_tls_fork_child(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	long long	before;
	pid_t		pid;
	int			status,
				rc = 1;

	TLS_CONNECT(a, url(GOOD, NULL));
	l = fence_acquire(a, R("fork-p"), 5000);
	CHECKC(l != NULL, a);
	before = connections(GOOD);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
	{
		fence_lease *cl = fence_acquire(a, R("fork-c"), 5000);
		int			ok = cl != NULL && fence_release(a, cl) == FENCE_OK;

		fence_lease_free(cl);
		_exit(ok ? 0 : 1);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the parent's session is intact: no error, no reconnect needed */
	CHECKC(fence_extend(a, l, 5000) == FENCE_OK, a);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	/* since "before": the child's connection and one of redis-cli's */
	CHECK(connections(GOOD) == before + 2);
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* --- topologies ------------------------------------------------------- */

/* The quorum's three URLs; the last "bad" trust the rogue CA only. */
static const char *
quorum_spec(int bad)
{
	static char spec[4096];
	size_t		len = 0;

	for (int i = 0; i < 3; i++)
		len += snprintf(spec + len, sizeof(spec) - len, "%srediss://127.0.0.1:%d?tls-ca-cert-file=%s/%s.pem",
						i ? " " : "", quorum[i], dir, i >= 3 - bad ? "rogue-ca" : "ca");
	return spec;
}

/*
 * A quorum of TLS nodes: leases and the heartbeat work; one node whose
 * certificate we do not trust leaves a majority; two of three are
 * FENCE_ERR_TLS, with the reason of each.
 */
static int
test_tls_quorum(void)
{
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	int			rc = 1;

	CONNECT_OR_SKIP(a, nquorum >= 3, quorum_spec(0), "no TLS quorum (FENCE_TEST_TLS_QUORUM)");
	l = fence_acquire(a, R("quorum"), 600);
	CHECKC(l != NULL, a);
	CHECKC(fence_heartbeat_start(a, l, NULL, NULL) == FENCE_OK, a);
	sleep_ms(1000);
	CHECK(fence_lease_state(l) == FENCE_LEASE_HELD);
	fence_heartbeat_stop(l);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = NULL;
	fence_free(a);

	a = fence_connect(quorum_spec(1));
	CHECKC(a->err == 0, a);
	l = fence_acquire(a, R("quorum-one-bad"), 5000);
	CHECKC(l != NULL, a);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = NULL;
	fence_free(a);

	a = fence_connect(quorum_spec(2));
	l = fence_acquire(a, R("quorum-two-bad"), 5000);
	CHECK(l == NULL);
	CHECKC(a->err == FENCE_ERR_TLS && strstr(a->errstr, "not trusted") != NULL, a);
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/*
 * The port of the master that serves the key "k" (quoted): the others
 * answer MOVED.
 */
static int
key_owner(const char *k)
{
	for (int i = 0; i < ncluster; i++)
		if (strncmp(rcli(cluster[i], "GET %s", k), "MOVED", 5) != 0)
			return cluster[i];
	return -1;
}

/*
 * A Redis Cluster over TLS (tls-cluster yes): the slot map gives each
 * node's TLS port; leases land on every master; a slot given to another
 * master is followed through MOVED, whose address is the TLS port too.
 */
static int
test_tls_cluster(void)
{
	char		spec[1024];
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("moved");
	char	   *lk = NULL;
	char		src_id[64],
				dst_id[64],
				moved[64];
	unsigned int slot;
	int			src,
				dst = -1,
				i,
				rc = 1;

	if (ncluster < 3)
		SKIP("no TLS cluster (FENCE_TEST_TLS_CLUSTER)");
	snprintf(spec, sizeof(spec), "rediss-cluster://127.0.0.1:%d,127.0.0.1:%d?tls-ca-cert-file=%s/ca.pem",
			 cluster[0], cluster[1], dir);
	a = fence_connect(spec);
	CHECKC(a->err == 0, a);
	for (i = 0; i < 24; i++)
	{
		char		r[64];

		snprintf(r, sizeof(r), "%s-%d", R("spread"), i);
		l = fence_acquire(a, r, 5000);
		CHECKC(l != NULL, a);
		CHECKC(fence_release(a, l) == FENCE_OK, a);
		fence_lease_free(l);
		l = NULL;
	}

	/* give the slot of "res" to another master, keys and all gone */
	lk = fence_key(res, "lock");
	slot = fence_key_slot(lk, strlen(lk));
	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	fence_lease_free(l);
	l = NULL;
	src = key_owner(key(res, "lock"));
	CHECK(src > 0);
	(void) rcli(src, "DEL %s", key(res, "token"));
	dst = cluster[0] == src ? cluster[1] : cluster[0];
	snprintf(src_id, sizeof(src_id), "%s", rcli(src, "CLUSTER MYID"));
	snprintf(dst_id, sizeof(dst_id), "%s", rcli(dst, "CLUSTER MYID"));
	/* as redis-cli --cluster reshard does: the target first */
	CHECK(strcmp(rcli(dst, "CLUSTER SETSLOT %u IMPORTING %s", slot, src_id), "OK") == 0);
	CHECK(strcmp(rcli(src, "CLUSTER SETSLOT %u MIGRATING %s", slot, dst_id), "OK") == 0);
	CHECK(strcmp(rcli(dst, "CLUSTER SETSLOT %u NODE %s", slot, dst_id), "OK") == 0);
	for (i = 0; i < ncluster; i++)
		if (cluster[i] != dst)
			CHECK(strcmp(rcli(cluster[i], "CLUSTER SETSLOT %u NODE %s", slot, dst_id), "OK") == 0);
	snprintf(moved, sizeof(moved), "MOVED %u 127.0.0.1:%d", slot, dst);
	for (long long t0 = ms_now(); ms_now() - t0 < 10000;)
	{
		int			agree = 0;

		for (i = 0; i < ncluster; i++)
			agree += cluster[i] == dst ? strncmp(rcli(dst, "GET %s", key(res, "lock")), "MOVED", 5) != 0 :
				strcmp(rcli(cluster[i], "GET %s", key(res, "lock")), moved) == 0;
		if (agree == ncluster)
			break;
		sleep_ms(50);
	}
	/* the context still sends to "src": MOVED, to dst's TLS port */
	l = fence_acquire(a, res, 5000);
	CHECKC(l != NULL, a);
	CHECK(strcmp(lock_owner(dst, res), fence_lease_owner(l)) == 0);
	CHECKC(fence_release(a, l) == FENCE_OK, a);
	rc = 0;
fail:
	free(lk);
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

/* The master's port, as the sentinel on "port" names it (-1: none). */
static int
sentinel_master_port(int port)
{
	const char *out = rcli(port, "SENTINEL get-master-addr-by-name tlss");
	const char *nl = strchr(out, '\n');

	return nl ? atoi(nl + 1) : -1;
}

/*
 * Sentinel over TLS: the sentinels are asked over TLS, the master they
 * name is reached over TLS; across a SENTINEL FAILOVER the heartbeat of a
 * holder follows the master to the new one, over TLS, and keeps the lease.
 */
static int
test_tls_sentinel(void)
{
	char		spec[1024];
	fence_ctx  *a = NULL;
	fence_lease *l = NULL;
	const char *res = R("sentinel");
	int			old,
				now = -1,
				rc = 1;
	long long	t0;

	if (nsentinels < 3)
		SKIP("no TLS sentinels (FENCE_TEST_TLS_SENTINEL)");
	snprintf(spec, sizeof(spec), "rediss-sentinel://127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d/tlss?tls-ca-cert-file=%s/ca.pem",
			 sentinels[0], sentinels[1], sentinels[2], dir);
	a = fence_connect(spec);
	CHECKC(a->err == 0, a);
	old = sentinel_master_port(sentinels[0]);
	CHECK(old > 0);
	l = fence_acquire(a, res, 6000);
	CHECKC(l != NULL, a);
	CHECK(strcmp(lock_owner(old, res), fence_lease_owner(l)) == 0);
	CHECKC(fence_heartbeat_start(a, l, NULL, NULL) == FENCE_OK, a);
	CHECK(strcmp(rcli(sentinels[0], "SENTINEL FAILOVER tlss"), "OK") == 0);
	t0 = ms_now();
	while (ms_now() - t0 < 30000 && ((now = sentinel_master_port(sentinels[0])) == old || now <= 0))
		sleep_ms(50);
	CHECK(now > 0 && now != old);
	/*
	 * An extend on the new master, well after it took over: 2.5 s later the
	 * lock's PTTL there is still above 4 s of its 6 s only if it was renewed
	 * there since.
	 */
	t0 = ms_now();
	while (ms_now() - t0 < 20000 &&
		   (ms_now() - t0 < 2500 || atoll(rcli(now, "PTTL %s", key(res, "lock"))) < 4000))
		sleep_ms(50);
	CHECK(atoll(rcli(now, "PTTL %s", key(res, "lock"))) >= 4000);
	CHECK(fence_lease_state(l) == FENCE_LEASE_HELD);
	CHECK(strcmp(lock_owner(now, res), fence_lease_owner(l)) == 0);
	fence_heartbeat_stop(l);
	/*
	 * A release goes out on the connection it has, maybe to the old master
	 * that still thinks it is one (sentinel.c): give it back through a
	 * context that asks the sentinels afresh.
	 */
	fence_free(a);
	a = fence_connect(spec);
	CHECKC(a->err == 0, a);
	CHECKC(fence_release_owner(a, res, fence_lease_owner(l)) == FENCE_OK, a);
	CHECK(strcmp(lock_owner(now, res), "") == 0);
	/* the old master is a replica again before the next test */
	t0 = ms_now();
	while (ms_now() - t0 < 30000 && strstr(rcli(old, "INFO replication"), "master_link_status:up") == NULL)
		sleep_ms(100);
	rc = 0;
fail:
	fence_lease_free(l);
	fence_free(a);
	return rc;
}

int
main(void)
{
	tap_watchdog(240);
	dir = getenv("FENCE_TEST_TLS_DIR");
	if (dir != NULL)
	{
		nports = ints(getenv("FENCE_TEST_TLS_PORTS"), ports, 6) == 6 ? 6 : 0;
		stop_pid = getenv("FENCE_TEST_TLS_STOP_PID") ? atoi(getenv("FENCE_TEST_TLS_STOP_PID")) : 0;
		nquorum = ints(getenv("FENCE_TEST_TLS_QUORUM"), quorum, MAXN);
		ncluster = ints(getenv("FENCE_TEST_TLS_CLUSTER"), cluster, MAXN);
		nsentinels = ints(getenv("FENCE_TEST_TLS_SENTINEL"), sentinels, MAXN);
	}
	signal(SIGPIPE, SIG_DFL);	/* a write to a closed socket must not kill us */
	pg_setup();

	TEST(tls_lease_cycle);
	TEST(tls_noscript);
	TEST(tls_wait);
	TEST(tls_announce_heal);
	TEST(tls_accepted);
	TEST(tls_refused);
	TEST(tls_handshake_deadline);
	TEST(tls_descriptors_cloexec);
	TEST(tls_cloexec_fork_race);
	TEST(tls_fork_child);
	TEST(tls_quorum);
	TEST(tls_cluster);
	TEST(tls_sentinel);

	printf("# TLS C tests: %d passed, %d failed, %d skipped\n", tap_passed, tap_failed, tap_skipped);
	return tap_failed ? 1 : 0;
}
