/*
 * client/link.c
 *	  One connection to a Redis server: its socket, plain or TLS, the bytes
 *	  waiting to be sent, and hiredis's reader for the replies.
 *
 * libfence owns its transport: socket.c makes the socket (close-on-exec,
 * non-blocking), tls.c puts TLS on it when the URL says so, and this file
 * writes the commands (RESP, which is simple enough to write by hand) and
 * feeds what comes back to hiredis's reply reader, the one part of hiredis
 * that is used.  hiredis 0.14 has no TLS, and its own TLS in 1.x would take
 * the socket and its timeouts away from us.
 *
 * No call here ever blocks.  Each says what it needs before it can go on
 * (FENCE_LINK_WANT_READ or _WRITE): node.c waits for it with ppoll() up to
 * the step's deadline, fanout.c with one poll() over all nodes of a quorum.
 * A TLS handshake is such a step too, so a server that accepts the TCP
 * connection and then stays silent costs the deadline, never more.
 *
 * A link belongs to the process that opened it.  After fork() the child
 * must not write on it: the two processes would interleave their requests
 * on one socket, and a TLS session cannot be shared at all (its record
 * numbers would diverge, and a close_notify from the child would end the
 * parent's session).  node.c and fanout.c drop an inherited link unused
 * (fence_link_free closes the child's descriptor only) and connect anew.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fence_int.h"

#define READ_CHUNK 16384		/* a TLS record at most */

/*
 * A link to "u", TLS on it when "tls" is not NULL.  "end_ns" > 0: the TCP
 * connect is over by then (the TLS handshake is still to do); 0: it may
 * still be under way.  NULL on failure, with a message in "msg" and its
 * FENCE_ERR_* kind in "*kind".
 */
fence_link *
fence_link_open(const fence_url *u, struct ssl_ctx_st *tls, int64_t end_ns,
				char *msg, size_t msglen, int *kind)
{
	fence_link *l = calloc(1, sizeof(fence_link));

	*kind = FENCE_ERR_OOM;
	if (l == NULL || (l->reader = redisReaderCreate()) == NULL)
	{
		free(l);
		snprintf(msg, msglen, "out of memory");
		return NULL;
	}
	l->pid = fence_self_pid();
	/* close-on-exec and non-blocking from its creation (socket.c) */
	if ((l->fd = fence_socket_open(u, end_ns, msg, msglen)) < 0)
	{
		*kind = FENCE_ERR_IO;
		redisReaderFree(l->reader);
		free(l);
		return NULL;
	}
	l->state = end_ns == 0 ? FENCE_LINK_CONNECTING :
		tls != NULL ? FENCE_LINK_HANDSHAKE : FENCE_LINK_OPEN;
	if (tls != NULL && fence_tls_attach(l, tls, u) != FENCE_OK)
	{
		*kind = l->err_kind;
		snprintf(msg, msglen, "%s", l->err);
		fence_link_free(l);
		return NULL;
	}
	return l;
}

/*
 * Take the link as far as open: the TCP connect (when fence_link_open did
 * not wait for it), then the TLS handshake.  FENCE_LINK_DONE once open.
 */
int
fence_link_connect_step(fence_link *l)
{
	if (l->state == FENCE_LINK_CONNECTING)
	{
		struct pollfd pfd = {l->fd, POLLOUT, 0};
		int			err = 0;
		socklen_t	len = sizeof(err);

		/* SO_ERROR says nothing while the connect is still under way */
		if (poll(&pfd, 1, 0) == 0)
			return FENCE_LINK_WANT_WRITE;
		if (getsockopt(l->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
			err = errno;
		if (err != 0)
			return fence_link_fail(l, FENCE_ERR_IO, "could not connect: %s", strerror(err));
		l->state = l->ssl != NULL ? FENCE_LINK_HANDSHAKE : FENCE_LINK_OPEN;
	}
	if (l->state == FENCE_LINK_HANDSHAKE)
	{
		int			rc = fence_tls_handshake(l);

		if (rc == FENCE_LINK_DONE)
			l->state = FENCE_LINK_OPEN;
		return rc;
	}
	return l->state == FENCE_LINK_OPEN ? FENCE_LINK_DONE : FENCE_LINK_ERROR;
}

/* Make room for "more" bytes at the end of the output; -1 when out of memory. */
static int
out_reserve(fence_link *l, size_t more)
{
	if (l->out_sent == l->out_len)
		l->out_sent = l->out_len = 0;
	if (l->out_len + more > l->out_cap)
	{
		size_t		cap = l->out_cap ? l->out_cap : 256;
		char	   *p;

		while (cap < l->out_len + more)
			cap *= 2;
		if ((p = realloc(l->out, cap)) == NULL)
			return -1;
		l->out = p;
		l->out_cap = cap;
	}
	return 0;
}

/* Append "len" bytes to the output (room was reserved). */
static void
out_put(fence_link *l, const void *s, size_t len)
{
	memcpy(l->out + l->out_len, s, len);
	l->out_len += len;
}

/*
 * Queue one command of "argc" arguments (their lengths from "argvlen", or
 * strlen when it is NULL) as a RESP array of bulk strings.  FENCE_OK, or
 * FENCE_ERR when out of memory (the link is then failed).
 */
int
fence_link_append(fence_link *l, int argc, const char *const *argv, const size_t *argvlen)
{
	size_t		need = 16;
	char		head[32];
	int			i,
				n;

	for (i = 0; i < argc; i++)
		need += (argvlen ? argvlen[i] : strlen(argv[i])) + 32;
	if (out_reserve(l, need) != 0)
	{
		fence_link_fail(l, FENCE_ERR_OOM, "out of memory");
		return FENCE_ERR;
	}
	n = snprintf(head, sizeof(head), "*%d\r\n", argc);
	out_put(l, head, n);
	for (i = 0; i < argc; i++)
	{
		size_t		len = argvlen ? argvlen[i] : strlen(argv[i]);

		n = snprintf(head, sizeof(head), "$%zu\r\n", len);
		out_put(l, head, n);
		out_put(l, argv[i], len);
		out_put(l, "\r\n", 2);
	}
	return FENCE_OK;
}

/*
 * Send what is queued, as far as the socket takes it.  FENCE_LINK_DONE
 * when all of it went out.
 */
int
fence_link_flush(fence_link *l)
{
	if (l->state != FENCE_LINK_OPEN)
		return l->state == FENCE_LINK_FAILED ? FENCE_LINK_ERROR : FENCE_LINK_WANT_WRITE;
	while (l->out_sent < l->out_len)
	{
		const char *p = l->out + l->out_sent;
		size_t		len = l->out_len - l->out_sent;
		int			want = FENCE_LINK_WANT_WRITE;
		ssize_t		n;

		if (l->ssl != NULL)
			n = fence_tls_write(l, p, len, &want);
		/* MSG_NOSIGNAL: a closed connection is an error, not SIGPIPE */
		else if ((n = send(l->fd, p, len, MSG_NOSIGNAL)) < 0)
		{
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				return fence_link_fail(l, FENCE_ERR_IO, "%s", strerror(errno));
			n = 0;
		}
		if (n < 0)
			return FENCE_LINK_ERROR;
		if (n == 0)
			return want;
		l->out_sent += (size_t) n;
	}
	return FENCE_LINK_DONE;
}

/*
 * A TLS server resets a connection that speaks plain RESP to it at once:
 * say so when that may be why a plain link failed before any reply.
 */
static const char *
plain_hint(const fence_link *l)
{
	return l->heard ? "" : " (before any reply: if that port speaks TLS, use rediss://)";
}

/*
 * Read what has come and feed it to the reply reader.  FENCE_LINK_DONE
 * when something was read; a closed connection is an error.  For TLS, a
 * record is taken whole, so nothing stays behind in OpenSSL's buffers that
 * a poll() on the socket would not see.
 */
int
fence_link_read(fence_link *l)
{
	char		buf[READ_CHUNK],
				why[160];
	int			got = 0;

	if (l->state != FENCE_LINK_OPEN)
		return l->state == FENCE_LINK_FAILED ? FENCE_LINK_ERROR : FENCE_LINK_WANT_READ;
	for (;;)
	{
		int			want = FENCE_LINK_WANT_READ;
		ssize_t		n;

		if (l->ssl != NULL)
			n = fence_tls_read(l, buf, sizeof(buf), &want);
		else if ((n = recv(l->fd, buf, sizeof(buf), 0)) < 0)
		{
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				return fence_link_fail(l, FENCE_ERR_IO, "%s%s", strerror(errno), plain_hint(l));
			n = 0;
		}
		else if (n == 0)
			return fence_link_fail(l, FENCE_ERR_IO, "Server closed the connection%s", plain_hint(l));
		if (n < 0)
			return FENCE_LINK_ERROR;
		if (n == 0)
			return got ? FENCE_LINK_DONE : want;
		/* nothing reaches the reader that announces more than fence reads */
		if (fence_frame_check(&l->frame, buf, (size_t) n, why, sizeof(why)) != 0)
			return fence_link_fail(l, FENCE_ERR_PROTOCOL, "%s", why);
		if (redisReaderFeed(l->reader, buf, (size_t) n) != REDIS_OK)
			return fence_link_fail(l, FENCE_ERR_OOM, "out of memory");
		l->heard = 1;
		got = 1;
		/* one read of a plain socket; TLS until OpenSSL holds nothing */
		if (l->ssl == NULL || !fence_tls_pending(l))
			return FENCE_LINK_DONE;
	}
}

/*
 * The next complete reply into "*reply" (NULL when none is complete yet).
 * FENCE_OK, or FENCE_ERR when the bytes are not RESP.
 */
int
fence_link_reply(fence_link *l, redisReply **reply)
{
	void	   *r = NULL;

	*reply = NULL;
	if (redisReaderGetReply(l->reader, &r) != REDIS_OK)
	{
		fence_link_fail(l, l->reader->err == REDIS_ERR_OOM ? FENCE_ERR_OOM : FENCE_ERR_PROTOCOL,
						"%s", l->reader->errstr[0] ? l->reader->errstr : "protocol error");
		return FENCE_ERR;
	}
	*reply = r;
	return FENCE_OK;
}

/*
 * Wait until the link's socket is ready for what "want" asks
 * (FENCE_LINK_WANT_READ or _WRITE), or "end_ns" passes: 1 ready, 0 timed
 * out, -1 poll failed (errno).
 *
 * A deadline that has passed still gets one look at the socket: a process
 * that was paused (SIGSTOP, a VM paused, a starved CPU) past it may find
 * the answer arrived meanwhile, and an answer that is there is no
 * timeout.
 */
int
fence_link_wait(fence_link *l, int want, int64_t end_ns)
{
	for (;;)
	{
		struct pollfd pfd = {l->fd, want == FENCE_LINK_WANT_READ ? POLLIN : POLLOUT, 0};
		int64_t		left = end_ns - fence_now_ns();
		struct timespec ts;
		int			n;

		if (left < 0)
			left = 0;
		ts.tv_sec = left / 1000000000;
		ts.tv_nsec = left % 1000000000;
		n = ppoll(&pfd, 1, &ts, NULL);
		if (n >= 0)
			return n > 0 ? 1 : 0;
		if (errno != EINTR)
			return -1;
		if (left == 0)
			return 0;
	}
}

/*
 * Has the server closed this link while it was idle (it restarted, a
 * failover's CLIENT KILL, its idle "timeout", a proxy's idle reset)?
 * Nothing is due on it, so anything to read can only be the end: a
 * command sent there would never arrive, and its lost reply would leave
 * the outcome unknown when it is known not to have run.  A plain socket is
 * peeked at, so that the bytes stay where they are; a TLS one is asked of
 * OpenSSL (fence_tls_idle_closed: the end comes as a close_notify there,
 * which is data to the socket).  Bytes nobody asked for also end it.
 */
int
fence_link_idle_closed(fence_link *l)
{
	struct pollfd pfd = {l->fd, POLLIN, 0};
	char		c;
	ssize_t		got;

	if (l->state != FENCE_LINK_OPEN)
		return l->state == FENCE_LINK_FAILED;
	if (poll(&pfd, 1, 0) <= 0)
		return 0;
	if (l->ssl != NULL)
		return fence_tls_idle_closed(l);
	got = recv(l->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	return got >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void
fence_link_free(fence_link *l)
{
	if (l == NULL)
		return;
	/* an inherited link is the parent's: close our descriptor, say nothing */
	if (l->ssl != NULL)
		fence_tls_close(l);
	if (l->fd >= 0)
		close(l->fd);
	redisReaderFree(l->reader);
	free(l->out);
	free(l);
}
