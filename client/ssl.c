/*
 * client/ssl.c
 *	  Open OpenSSL at the first TLS URL and fill the table of its
 *	  functions (ssl.h says why).
 *
 * dlopen with RTLD_LOCAL, as pq.c does for libpq; dlsym on libssl's handle
 * finds libcrypto's functions too, in the libcrypto that libssl needs.
 * The library is never closed: the SSL_CTXs it made live as long as the
 * contexts that share them.
 */
#define FENCE_SSL_FILLING
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "fence_int.h"
#include "ssl.h"

struct fence_ssl fence_ssl;

static pthread_once_t ssl_once = PTHREAD_ONCE_INIT;
static char ssl_failure[FENCE_ERRSTR_LEN];	/* empty once the table is full */

static void
ssl_open(void)
{
	void	   *lib = dlopen(FENCE_LIBSSL_SONAME, RTLD_NOW | RTLD_LOCAL);
	const char *missing = NULL;

	if (lib == NULL)
	{
		snprintf(ssl_failure, sizeof(ssl_failure), "cannot load OpenSSL: %s", dlerror());
		return;
	}
#define FENCE_SSL_LOOKUP(f) \
	if (missing == NULL && (fence_ssl.f = (__typeof__(fence_ssl.f)) dlsym(lib, #f)) == NULL) \
		missing = #f;
	FENCE_SSL_FUNCS(FENCE_SSL_LOOKUP)
#undef FENCE_SSL_LOOKUP
	if (missing != NULL)
		snprintf(ssl_failure, sizeof(ssl_failure), "%s has no function %s",
				 FENCE_LIBSSL_SONAME, missing);
}

int
fence_ssl_load(fence_ctx *ctx)
{
	pthread_once(&ssl_once, ssl_open);
	if (ssl_failure[0] == '\0')
		return FENCE_OK;
	fence_set_error(ctx, FENCE_ERR_TLS, "%s", ssl_failure);
	return FENCE_ERR;
}
