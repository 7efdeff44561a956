/*
 * client/socket.c
 *	  Sockets to Redis that are close-on-exec from the moment they exist.
 *
 * hiredis creates its sockets without SOCK_CLOEXEC and has no option for
 * it; setting FD_CLOEXEC once hiredis returns leaves a window, as long as
 * the connect takes, in which a fork+exec in another thread of the
 * application hands the socket to a program that keeps it open (or talks
 * on it) after we are gone.  So libfence makes the socket itself, with
 * socket(..., SOCK_CLOEXEC | SOCK_NONBLOCK), and keeps it: link.c talks
 * on it (plain or through TLS) and only hands the bytes that come back to
 * hiredis's reply reader.  It stays non-blocking for its whole life: every
 * read and write is preceded by a ppoll() that knows the deadline.
 *
 * libpq is another matter: libpq 16 and later create their sockets with
 * SOCK_CLOEXEC too, but libpq 15 and older set FD_CLOEXEC with fcntl()
 * right after socket(), before connecting: a fork in that instant (two
 * system calls long) inherits the PostgreSQL socket.  libfence never opens
 * a PostgreSQL connection itself (the application hands it one), so it
 * cannot close that window; an application that forks from several
 * threads should open its connections before it does.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fence_int.h"

/*
 * Wait until the connect on "fd" is over, or "end_ns" passes.  Returns 0
 * when connected, else an errno value.
 */
static int
wait_connected(int fd, int64_t end_ns)
{
	int			err = 0;
	socklen_t	len = sizeof(err);

	for (;;)
	{
		struct pollfd pfd = {fd, POLLOUT, 0};
		int64_t		left = end_ns - fence_now_ns();
		struct timespec ts;
		int			n;

		if (left <= 0)
			return ETIMEDOUT;
		ts.tv_sec = left / 1000000000;
		ts.tv_nsec = left % 1000000000;
		n = ppoll(&pfd, 1, &ts, NULL);
		if (n > 0)
			break;
		if (n == 0)
			return ETIMEDOUT;
		if (errno != EINTR)
			return errno;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		return errno;
	return err;
}

/*
 * Start connecting a new close-on-exec, non-blocking socket to "sa".
 * Returns the socket (the connect maybe still in progress, *err 0), or -1
 * with an errno value in "*err".
 */
static int
start_connect(int family, int protocol, const struct sockaddr *sa, socklen_t salen,
			  int *err)
{
	int			fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, protocol);

	*err = 0;
	if (fd < 0)
	{
		*err = errno;
		return -1;
	}
	if (connect(fd, sa, salen) != 0 && errno != EINPROGRESS)
	{
		*err = errno;
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A new, non-blocking, close-on-exec socket connected to "u" (a TCP host
 * and port, or a Unix socket).  "end_ns" > 0: connected by then (on every
 * address the name has, in turn); 0: maybe still connecting (the caller
 * polls for POLLOUT and checks SO_ERROR).  Returns the socket, or -1 with
 * a message in "msg".
 */
int
fence_socket_open(const fence_url *u, int64_t end_ns, char *msg, size_t msglen)
{
	int			fd = -1,
				err = 0;

	if (u->is_unix)
	{
		struct sockaddr_un sun;

		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		if (strlen(u->path) >= sizeof(sun.sun_path))
		{
			snprintf(msg, msglen, "Unix socket path too long");
			return -1;
		}
		strcpy(sun.sun_path, u->path);
		fd = start_connect(AF_UNIX, 0, (struct sockaddr *) &sun, sizeof(sun), &err);
		if (fd >= 0 && end_ns > 0 && (err = wait_connected(fd, end_ns)) != 0)
		{
			close(fd);
			fd = -1;
		}
	}
	else
	{
		struct addrinfo hints,
				   *res = NULL,
				   *ai;
		char		port[8];
		int			gai;

		memset(&hints, 0, sizeof(hints));
		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_STREAM;
		snprintf(port, sizeof(port), "%d", u->port);
		if ((gai = getaddrinfo(u->host, port, &hints, &res)) != 0)
		{
			snprintf(msg, msglen, "%s", gai_strerror(gai));
			return -1;
		}
		for (ai = res; ai != NULL && fd < 0; ai = ai->ai_next)
		{
			fd = start_connect(ai->ai_family, ai->ai_protocol, ai->ai_addr, ai->ai_addrlen, &err);
			if (fd >= 0 && end_ns > 0 && (err = wait_connected(fd, end_ns)) != 0)
			{
				close(fd);
				fd = -1;
			}
		}
		freeaddrinfo(res);
		if (fd >= 0)
		{
			int			on = 1;

			/* as hiredis does: requests are small and want no delay */
			(void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
		}
	}
	if (fd < 0)
		snprintf(msg, msglen, "%s", strerror(err ? err : ECONNREFUSED));
	return fd;
}
