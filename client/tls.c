/*
 * client/tls.c
 *	  TLS on a link, with OpenSSL: the settings a URL gives, the handshake,
 *	  and the checks of the server's certificate.
 *
 * What is verified, unless the URL says tls-insecure-skip-verify=yes: the
 * server's certificate chain, up to a CA of tls-ca-cert-file or
 * tls-ca-cert-dir, or of the system's store when neither is given; its
 * validity dates; and that it names the host we connect to (a DNS name,
 * or an IP address in its IP SANs), or tls-server-name when that is set.
 * The same name goes out as SNI (never an IP address: RFC 6066).  Sentinel
 * masters and cluster nodes are reached at the address the topology
 * announces, so their certificates must name that address, or all must
 * carry the one tls-server-name.  TLS 1.2 is the oldest version offered.
 *
 * One SSL_CTX (CAs loaded, client certificate and key) serves every link of
 * a context with the same settings, and is shared, counted by OpenSSL,
 * with the heartbeat's clone: loading the system's CA store costs
 * milliseconds, a handshake should not.  The files given in the URL are
 * read here with O_CLOEXEC, so that a child exec'd by another thread at
 * that moment never inherits a descriptor of the private key; only a CA
 * directory is read by OpenSSL itself, file by file, as it needs them.
 * One more file is beyond reach: OpenSSL's own initialization, once per
 * process at its first use (libfence's or libpq's), reads its openssl.cnf
 * with fopen(), not close-on-exec; a child exec'd in that instant keeps a
 * read-only descriptor of that public file.  Taking OpenSSL's
 * initialization over from the application would cost more than it saves.
 *
 * OpenSSL itself is opened at the first TLS URL (ssl.c): the calls below
 * go through ssl.h's table, so that a plain connection never loads it.
 *
 * The socket is libfence's own (socket.c): OpenSSL talks to it through a
 * small BIO that sends with MSG_NOSIGNAL, so a server that went away is an
 * error, not a SIGPIPE for an application that did not ask for one.
 *
 * Errors are told apart as the CLI's exit codes want them: what a retry
 * would meet again (a certificate not trusted, a key that cannot be read,
 * a handshake the server refused) is FENCE_ERR_TLS; a connection lost or
 * a server that does not answer is FENCE_ERR_IO.  Under TLS 1.3 a server
 * refuses a client certificate (or its absence) only after our side of the
 * handshake is over, with an alert we read with the first reply; so a link
 * whose server asked for a certificate and that fails before any reply
 * came is reported as that refusal (node.c makes its first command one
 * that changes nothing, a login or PING, for that reason).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fence_int.h"
#include "ssl.h"

/* A CA bundle or certificate file larger than this is not one. */
#define MAX_PEM_FILE (16 * 1024 * 1024)

/* The settings of one SSL_CTX, and the SSL_CTX (a list per context). */
struct fence_tls_entry
{
	fence_tls_opts opts;
	SSL_CTX    *ssl_ctx;
	struct fence_tls_entry *next;
};

/* --- the socket under OpenSSL ------------------------------------------ */

static BIO_METHOD *bio_method;
static pthread_once_t bio_once = PTHREAD_ONCE_INIT;

static int
bio_write(BIO *b, const char *buf, int len)
{
	fence_link *l = BIO_get_data(b);
	ssize_t		n = send(l->fd, buf, (size_t) len, MSG_NOSIGNAL);

	BIO_clear_retry_flags(b);
	if (n < 0)
	{
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			BIO_set_retry_write(b);
		else
			l->sys_errno = errno;
	}
	return (int) n;
}

static int
bio_read(BIO *b, char *buf, int len)
{
	fence_link *l = BIO_get_data(b);
	ssize_t		n = recv(l->fd, buf, (size_t) len, 0);

	BIO_clear_retry_flags(b);
	if (n < 0)
	{
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			BIO_set_retry_read(b);
		else
			l->sys_errno = errno;
	}
	return (int) n;
}

static long
bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void) b;
	(void) num;
	(void) ptr;
	/* nothing is buffered here: a flush is always done */
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int
bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static void
bio_method_make(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "fence socket");

	if (m != NULL &&
		(!BIO_meth_set_write(m, bio_write) || !BIO_meth_set_read(m, bio_read) ||
		 !BIO_meth_set_ctrl(m, bio_ctrl) || !BIO_meth_set_create(m, bio_create)))
	{
		BIO_meth_free(m);
		m = NULL;
	}
	bio_method = m;
}

/* --- loading what the URL names ---------------------------------------- */

/*
 * The whole of file "path", opened close-on-exec, in a memory BIO over
 * "*data" (its "*len" bytes, which the caller wipes and frees with
 * forget_file).  NULL with errno set on failure.
 */
static BIO *
read_file(const char *path, char **data, size_t *len)
{
	struct stat sb;
	BIO		   *b;
	int			fd = open(path, O_RDONLY | O_CLOEXEC),
				e;

	*data = NULL;
	*len = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > MAX_PEM_FILE)
	{
		e = !S_ISREG(sb.st_mode) ? EISDIR : sb.st_size > MAX_PEM_FILE ? EFBIG : errno;
		close(fd);
		errno = e;
		return NULL;
	}
	if ((*data = malloc((size_t) sb.st_size + 1)) == NULL)
	{
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	while (*len < (size_t) sb.st_size)
	{
		ssize_t		n = read(fd, *data + *len, (size_t) sb.st_size - *len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*len += (size_t) n;
	}
	e = errno;
	close(fd);
	(*data)[*len] = '\0';
	if ((b = BIO_new_mem_buf(*data, (int) *len)) == NULL)
		e = ENOMEM;
	errno = e;
	return b;
}

/* Forget a file read by read_file: a key is secret, so wipe it first. */
static void
forget_file(BIO *b, char *data, size_t len)
{
	BIO_free(b);
	if (data != NULL)
	{
		OPENSSL_cleanse(data, len);
		free(data);
	}
}

/* OpenSSL's reason for the last error, or "unknown error". */
static const char *
ssl_reason(void)
{
	const char *r = ERR_reason_error_string(ERR_peek_last_error());

	return r != NULL ? r : "unknown error";
}

/*
 * Trust the certificates of PEM file "path" (parameter "param").  With
 * "missing_ok", a file that is not there is no error (the system's default
 * file).  FENCE_OK, or FENCE_ERR with a message.
 */
static int
load_cas(SSL_CTX *sc, const char *param, const char *path, int missing_ok,
		 char *msg, size_t len)
{
	X509_STORE *store = SSL_CTX_get_cert_store(sc);
	char	   *data;
	size_t		size;
	BIO		   *b = read_file(path, &data, &size);
	X509	   *x;
	int			n = 0;

	if (b == NULL)
	{
		int			e = errno;

		forget_file(NULL, data, size);
		if (missing_ok && e == ENOENT)
			return FENCE_OK;
		snprintf(msg, len, "%s %s: %s", param, path, strerror(e));
		return FENCE_ERR;
	}
	while ((x = PEM_read_bio_X509_AUX(b, NULL, NULL, NULL)) != NULL)
	{
		/* a certificate listed twice is no error (1.1.1 and later) */
		(void) X509_STORE_add_cert(store, x);
		X509_free(x);
		n++;
	}
	forget_file(b, data, size);
	ERR_clear_error();
	if (n == 0 && !missing_ok)
	{
		snprintf(msg, len, "%s %s: no PEM certificate in it", param, path);
		return FENCE_ERR;
	}
	return FENCE_OK;
}

/* A PEM key must not ask for a passphrase: there is nobody to answer. */
static int
no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void) buf;
	(void) size;
	(void) rwflag;
	(void) u;
	return -1;
}

/* Our certificate (with its chain) and key, for servers that ask. */
static int
load_client_cert(SSL_CTX *sc, const fence_tls_opts *o, char *msg, size_t len)
{
	char	   *data;
	size_t		size;
	BIO		   *b = read_file(o->cert_file, &data, &size);
	X509	   *x;
	EVP_PKEY   *key;

	if (b == NULL)
	{
		snprintf(msg, len, "tls-cert-file %s: %s", o->cert_file, strerror(errno));
		forget_file(NULL, data, size);
		return FENCE_ERR;
	}
	x = PEM_read_bio_X509_AUX(b, NULL, NULL, NULL);
	if (x == NULL || SSL_CTX_use_certificate(sc, x) != 1)
	{
		snprintf(msg, len, "tls-cert-file %s: no usable PEM certificate in it (%s)",
				 o->cert_file, ssl_reason());
		X509_free(x);
		forget_file(b, data, size);
		ERR_clear_error();
		return FENCE_ERR;
	}
	X509_free(x);
	/* the rest of the file: the chain up to the CA */
	while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL)
		if (SSL_CTX_add0_chain_cert(sc, x) != 1)
			X509_free(x);
	forget_file(b, data, size);
	ERR_clear_error();

	if ((b = read_file(o->key_file, &data, &size)) == NULL)
	{
		snprintf(msg, len, "tls-key-file %s: %s", o->key_file, strerror(errno));
		forget_file(NULL, data, size);
		return FENCE_ERR;
	}
	key = PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL);
	forget_file(b, data, size);
	if (key == NULL)
	{
		snprintf(msg, len, "tls-key-file %s: no usable PEM private key in it (%s; keys with a passphrase are not supported)",
				 o->key_file, ssl_reason());
		ERR_clear_error();
		return FENCE_ERR;
	}
	/* this also checks that the key is the certificate's */
	if (SSL_CTX_use_PrivateKey(sc, key) != 1 || SSL_CTX_check_private_key(sc) != 1)
	{
		snprintf(msg, len, "tls-key-file %s is not the key of tls-cert-file %s (%s)",
				 o->key_file, o->cert_file, ssl_reason());
		EVP_PKEY_free(key);
		ERR_clear_error();
		return FENCE_ERR;
	}
	EVP_PKEY_free(key);
	return FENCE_OK;
}

/* The CAs to trust: the URL's, or the system's. */
static int
load_trust(SSL_CTX *sc, const fence_tls_opts *o, char *msg, size_t len)
{
	struct stat sb;

	if (o->ca_cert_file != NULL &&
		load_cas(sc, "tls-ca-cert-file", o->ca_cert_file, 0, msg, len) != FENCE_OK)
		return FENCE_ERR;
	if (o->ca_cert_dir != NULL)
	{
		/* OpenSSL would take a directory that is not there without a word */
		if (stat(o->ca_cert_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
		{
			snprintf(msg, len, "tls-ca-cert-dir %s: %s", o->ca_cert_dir,
					 stat(o->ca_cert_dir, &sb) != 0 ? strerror(errno) : "not a directory");
			return FENCE_ERR;
		}
		if (SSL_CTX_load_verify_locations(sc, NULL, o->ca_cert_dir) != 1)
		{
			snprintf(msg, len, "tls-ca-cert-dir %s: %s", o->ca_cert_dir, ssl_reason());
			ERR_clear_error();
			return FENCE_ERR;
		}
	}
	if (o->ca_cert_file == NULL && o->ca_cert_dir == NULL)
	{
		/* the system's store, where OpenSSL's defaults say it is */
		const char *file = getenv(X509_get_default_cert_file_env());
		const char *dir = getenv(X509_get_default_cert_dir_env());

		if (load_cas(sc, "the system's CA file", file ? file : X509_get_default_cert_file(),
					 1, msg, len) != FENCE_OK)
			return FENCE_ERR;
		(void) SSL_CTX_load_verify_locations(sc, NULL, dir ? dir : X509_get_default_cert_dir());
		ERR_clear_error();
	}
	return FENCE_OK;
}

/* A new SSL_CTX for the settings "o"; NULL with a message on failure. */
static SSL_CTX *
context_new(const fence_tls_opts *o, char *msg, size_t len, int *oom)
{
	SSL_CTX    *sc = SSL_CTX_new(TLS_client_method());

	*oom = sc == NULL;
	if (sc == NULL)
	{
		snprintf(msg, len, "out of memory");
		return NULL;
	}
	SSL_CTX_set_min_proto_version(sc, TLS1_2_VERSION);
	/* our output buffer may move, and a short write is normal */
	SSL_CTX_set_mode(sc, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_verify(sc, o->insecure_skip_verify ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, NULL);
	if ((!o->insecure_skip_verify && load_trust(sc, o, msg, len) != FENCE_OK) ||
		(o->cert_file != NULL && load_client_cert(sc, o, msg, len) != FENCE_OK))
	{
		SSL_CTX_free(sc);
		return NULL;
	}
	return sc;
}

/* --- one SSL_CTX per settings, per context ----------------------------- */

static int
same_str(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Do links with settings "a" and "b" share an SSL_CTX?  (The server name
 * is per link.) */
static int
same_context(const fence_tls_opts *a, const fence_tls_opts *b)
{
	return a->insecure_skip_verify == b->insecure_skip_verify &&
		same_str(a->ca_cert_file, b->ca_cert_file) &&
		same_str(a->ca_cert_dir, b->ca_cert_dir) &&
		same_str(a->cert_file, b->cert_file) &&
		same_str(a->key_file, b->key_file);
}

static void
entry_free(struct fence_tls_entry *e)
{
	fence_url	u;

	/* fence_url_free knows how to free TLS settings */
	memset(&u, 0, sizeof(u));
	u.tls = e->opts;
	fence_url_free(&u);
	SSL_CTX_free(e->ssl_ctx);
	free(e);
}

/* A new entry for "opts" and "sc" (whose reference it takes); NULL on OOM. */
static struct fence_tls_entry *
entry_new(const fence_tls_opts *opts, SSL_CTX *sc)
{
	struct fence_tls_entry *e = calloc(1, sizeof(*e));
	fence_url	src,
				dst;

	if (e == NULL)
		return NULL;
	memset(&src, 0, sizeof(src));
	src.tls = *opts;
	if (fence_url_copy(&dst, &src) != FENCE_OK)
	{
		free(e);
		return NULL;
	}
	e->opts = dst.tls;
	e->ssl_ctx = sc;
	return e;
}

/*
 * The SSL_CTX for links with the settings "opts", made on first use.  NULL
 * with ctx->err set (FENCE_ERR_TLS, FENCE_ERR_OOM) when it cannot be made.
 */
struct ssl_ctx_st *
fence_tls_context(fence_ctx *ctx, const fence_tls_opts *opts)
{
	struct fence_tls_entry *e;
	SSL_CTX    *sc;
	char		msg[FENCE_ERRSTR_LEN - 32];
	int			oom;

	for (e = ctx->conn->tls; e != NULL; e = e->next)
		if (same_context(&e->opts, opts))
			return e->ssl_ctx;
	if (fence_ssl_load(ctx) != FENCE_OK)
		return NULL;
	ERR_clear_error();
	if ((sc = context_new(opts, msg, sizeof(msg), &oom)) == NULL)
	{
		fence_set_error(ctx, oom ? FENCE_ERR_OOM : FENCE_ERR_TLS, "TLS: %s", msg);
		return NULL;
	}
	if ((e = entry_new(opts, sc)) == NULL)
	{
		SSL_CTX_free(sc);
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
		return NULL;
	}
	e->next = ctx->conn->tls;
	ctx->conn->tls = e;
	return sc;
}

/* Give "dst" (the heartbeat's clone) the SSL_CTXs of "src". */
int
fence_tls_share(fence_ctx *dst, const fence_ctx *src)
{
	struct fence_tls_entry *e,
			   *copy;

	for (e = src->conn->tls; e != NULL; e = e->next)
	{
		if (SSL_CTX_up_ref(e->ssl_ctx) != 1)
			return FENCE_ERR;
		if ((copy = entry_new(&e->opts, e->ssl_ctx)) == NULL)
		{
			SSL_CTX_free(e->ssl_ctx);
			return FENCE_ERR;
		}
		copy->next = dst->conn->tls;
		dst->conn->tls = copy;
	}
	return FENCE_OK;
}

void
fence_tls_free_all(fence_ctx *ctx)
{
	while (ctx->conn->tls != NULL)
	{
		struct fence_tls_entry *e = ctx->conn->tls;

		ctx->conn->tls = e->next;
		entry_free(e);
	}
}

/* --- one TLS session ---------------------------------------------------- */

/* Note a CertificateRequest from the server (TLS 1.2 and 1.3 alike). */
static void
watch_handshake(int write_p, int version, int content_type, const void *buf,
				size_t len, SSL *ssl, void *arg)
{
	fence_link *l = arg;

	(void) version;
	(void) ssl;
	if (!write_p && content_type == SSL3_RT_HANDSHAKE && len > 0 &&
		((const unsigned char *) buf)[0] == SSL3_MT_CERTIFICATE_REQUEST)
		l->cert_requested = 1;
}

static int
is_ip_literal(const char *host)
{
	unsigned char addr[16];

	return inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1;
}

/*
 * Put a TLS session from "tls" on the link "l" to "u": SNI and the name
 * to verify are tls-server-name, or the host.  FENCE_OK, or FENCE_ERR with
 * the link failed.
 */
int
fence_tls_attach(fence_link *l, struct ssl_ctx_st *tls, const fence_url *u)
{
	const char *name = u->tls.server_name ? u->tls.server_name : u->host;
	BIO		   *bio;

	pthread_once(&bio_once, bio_method_make);
	ERR_clear_error();
	if (bio_method == NULL || (l->ssl = SSL_new(tls)) == NULL ||
		(bio = BIO_new(bio_method)) == NULL)
	{
		ERR_clear_error();
		fence_link_fail(l, FENCE_ERR_OOM, "out of memory");
		return FENCE_ERR;
	}
	BIO_set_data(bio, l);
	SSL_set_bio(l->ssl, bio, bio);
	SSL_set_connect_state(l->ssl);
	SSL_set_msg_callback(l->ssl, watch_handshake);
	SSL_set_msg_callback_arg(l->ssl, l);
	l->has_cert = u->tls.cert_file != NULL;
	if (name == NULL)
	{
		fence_link_fail(l, FENCE_ERR_TLS, "TLS needs a host name (not a Unix socket)");
		return FENCE_ERR;
	}
	if (is_ip_literal(name))
	{
		if (!u->tls.insecure_skip_verify &&
			X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(l->ssl), name) != 1)
			goto failed;
	}
	else
	{
		if (SSL_set_tlsext_host_name(l->ssl, name) != 1)
			goto failed;
		SSL_set_hostflags(l->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
		if (!u->tls.insecure_skip_verify && SSL_set1_host(l->ssl, name) != 1)
			goto failed;
	}
	return FENCE_OK;
failed:
	fence_link_fail(l, FENCE_ERR_TLS, "TLS: cannot verify the name \"%s\": %s", name, ssl_reason());
	ERR_clear_error();
	return FENCE_ERR;
}

/* Did the server close the connection without a close_notify? */
static int
is_eof(unsigned long code)
{
#ifdef SSL_R_UNEXPECTED_EOF_WHILE_READING
	return ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
#else
	(void) code;
	return 0;
#endif
}

/* Is OpenSSL's last error one of an alert the server sent us? */
static int
is_alert(unsigned long code)
{
	const char *r = ERR_reason_error_string(code);

	return r != NULL && strstr(r, " alert ") != NULL;
}

/*
 * Fail the link for what the last SSL call (whose SSL_get_error is "e")
 * says, telling a refusal (FENCE_ERR_TLS) from a lost connection
 * (FENCE_ERR_IO).  Returns FENCE_LINK_ERROR.
 */
static int
tls_failed(fence_link *l, int e)
{
	unsigned long code = ERR_peek_last_error();
	int			refused_cert = l->cert_requested && !l->heard;
	char		why[160];
	int			kind = FENCE_ERR_TLS;

	if (e == SSL_ERROR_SSL && ERR_GET_REASON(code) == SSL_R_CERTIFICATE_VERIFY_FAILED)
	{
		long		v = SSL_get_verify_result(l->ssl);
		const char *hint = "";

		if (v == X509_V_ERR_HOSTNAME_MISMATCH || v == X509_V_ERR_IP_ADDRESS_MISMATCH)
			hint = " (tls-server-name sets the name to check)";
		else if (v == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
				 v == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT ||
				 v == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN ||
				 v == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT ||
				 v == X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE)
			hint = " (tls-ca-cert-file names the CAs to trust)";
		snprintf(why, sizeof(why), "server certificate not trusted: %s%s",
				 X509_verify_cert_error_string(v), hint);
	}
	else if (e == SSL_ERROR_SSL && is_alert(code))
		snprintf(why, sizeof(why), "the server refused the handshake: %s%s", ssl_reason(),
				 !refused_cert ? "" : l->has_cert ? " (of our client certificate, tls-cert-file)" :
				 " (it wants a client certificate: tls-cert-file, tls-key-file)");
	else if (e == SSL_ERROR_SSL && !is_eof(code))
	{
		int			reason = ERR_GET_REASON(code);

		snprintf(why, sizeof(why), "%s%s", ssl_reason(),
				 reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_UNKNOWN_PROTOCOL ||
				 reason == SSL_R_PACKET_LENGTH_TOO_LONG ?
				 " (does the server speak TLS on this port?)" : "");
	}
	else if (refused_cert)
	{
		/* TLS 1.3: the refusal of our certificate closed the connection */
		snprintf(why, sizeof(why), "the server closed the connection after asking for a client certificate: %s",
				 l->has_cert ? "it refused ours" :
				 "it wants one (tls-cert-file, tls-key-file)");
	}
	else
	{
		kind = FENCE_ERR_IO;
		if (e == SSL_ERROR_SYSCALL && l->sys_errno != 0)
			snprintf(why, sizeof(why), "%s", strerror(l->sys_errno));
		else
			snprintf(why, sizeof(why), "Server closed the connection");
	}
	ERR_clear_error();
	/* once the session was up, what breaks it is a connection lost */
	if (kind == FENCE_ERR_TLS && l->state == FENCE_LINK_OPEN && !refused_cert)
		return fence_link_fail(l, FENCE_ERR_IO, "TLS session broken: %s", why);
	return fence_link_fail(l, kind, "%s%s", kind == FENCE_ERR_TLS ? "TLS: " : "", why);
}

/* A step of the handshake: FENCE_LINK_DONE once it is over. */
int
fence_tls_handshake(fence_link *l)
{
	int			ret,
				e;

	ERR_clear_error();
	l->sys_errno = 0;
	if ((ret = SSL_connect(l->ssl)) == 1)
		return FENCE_LINK_DONE;
	e = SSL_get_error(l->ssl, ret);
	if (e == SSL_ERROR_WANT_READ)
		return FENCE_LINK_WANT_READ;
	if (e == SSL_ERROR_WANT_WRITE)
		return FENCE_LINK_WANT_WRITE;
	return tls_failed(l, e);
}

/*
 * What an SSL_read or SSL_write that returned "ret" came to: "ret" bytes,
 * 0 when it must wait ("*want" says for what), -1 when the link failed.
 */
static ssize_t
io_result(fence_link *l, int ret, int *want)
{
	int			e;

	if (ret > 0)
		return ret;
	e = SSL_get_error(l->ssl, ret);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
	{
		*want = e == SSL_ERROR_WANT_READ ? FENCE_LINK_WANT_READ : FENCE_LINK_WANT_WRITE;
		return 0;
	}
	tls_failed(l, e);
	return -1;
}

/*
 * Read up to "len" bytes: how many, 0 when none can be read now ("*want"
 * says what to wait for), -1 when the link failed.
 */
ssize_t
fence_tls_read(fence_link *l, void *buf, size_t len, int *want)
{
	ERR_clear_error();
	l->sys_errno = 0;
	return io_result(l, SSL_read(l->ssl, buf, (int) len), want);
}

/* Write up to "len" bytes: as fence_tls_read. */
ssize_t
fence_tls_write(fence_link *l, const void *buf, size_t len, int *want)
{
	ERR_clear_error();
	l->sys_errno = 0;
	return io_result(l, SSL_write(l->ssl, buf, (int) len), want);
}

/*
 * Has the server ended this idle session?  Called when the socket has
 * something to read while no reply is due.  Redis (its idle "timeout",
 * CLIENT KILL) and TLS proxies send a close_notify before the FIN, so the
 * socket holds a record, not the end of the stream: a peek at the socket
 * would call the session alive.  Let OpenSSL take the records in: a TLS
 * 1.3 session ticket is consumed and the session is alive (it wants to
 * read); a close_notify, an alert or the end of the stream end it; so
 * does application data, which no request asked for (a reply to nothing
 * would be taken for the answer to the next command).  SSL_peek leaves
 * such data where it is, but the link is dropped then anyway.
 */
int
fence_tls_idle_closed(fence_link *l)
{
	char		c;
	int			ret,
				e;

	if (SSL_get_shutdown(l->ssl) & SSL_RECEIVED_SHUTDOWN)
		return 1;
	ERR_clear_error();
	l->sys_errno = 0;
	ret = SSL_peek(l->ssl, &c, 1);
	if (ret > 0)
		return 1;
	e = SSL_get_error(l->ssl, ret);
	ERR_clear_error();
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return 0;
	/* the session is over: say nothing more on it (fence_tls_close) */
	l->state = FENCE_LINK_FAILED;
	return 1;
}

/* Does OpenSSL hold decrypted bytes not read yet? */
int
fence_tls_pending(fence_link *l)
{
	return SSL_pending(l->ssl) > 0;
}

/*
 * End the session: a close_notify when the session is ours and sound (one
 * try, never waiting), then free it.  An inherited session (after fork)
 * is the parent's: not a byte is sent on it.
 */
void
fence_tls_close(fence_link *l)
{
	if (l->pid == fence_self_pid() && l->state == FENCE_LINK_OPEN)
	{
		ERR_clear_error();
		(void) SSL_shutdown(l->ssl);
	}
	ERR_clear_error();
	SSL_free(l->ssl);
	l->ssl = NULL;
}
